"""Shared checks of user input: one set of rules for constructors, functions, readers and
writers, each error naming the input (``"Owner.name"``) and what it accepts.

Checks of concrete values (Python numbers, NumPy arrays, JAX arrays outside ``jit``) raise
``ValueError`` at once; ``is_concrete`` tells whether a value can be checked now (inside
``jit`` a traced value cannot: check it with ``eqx.error_if`` where it is used).
"""

import math
import numbers

import jax
import numpy as np


def is_number_text(field: str) -> bool:
    """Whether the text ``field`` reads as a number (``float(field)`` succeeds)."""
    try:
        float(field)
    except ValueError:
        return False
    return True


def is_concrete(value) -> bool:
    """Whether ``value`` holds numbers now (not a tracer inside ``jit``/``grad``)."""
    return not isinstance(value, jax.core.Tracer)


def _range_text(low, high, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts)


def number(name: str, value, *, low: float | None = None, high: float | None = None,
           low_open: bool = False, high_open: bool = False, integer: bool = False,
           unit: str = "") -> float | int:
    """``value`` as a finite real Python number in ``[low, high]`` (ends open where
    asked; ``integer``: a whole number, returned as ``int``), else a ``ValueError`` that
    names ``name`` and the accepted range. Strings, booleans, ``None`` and complex numbers
    are refused, not converted."""
    what = "a whole number" if integer else "a finite real number"
    bound = _range_text(low, high, low_open, high_open)
    accepted = f"{what}{' ' + bound if bound else ''}{unit}"
    scalar = isinstance(value, numbers.Real) or (
        isinstance(value, (np.ndarray, jax.Array)) and np.ndim(value) == 0
        and is_concrete(value) and np.issubdtype(np.asarray(value).dtype, np.number)
        and not np.iscomplexobj(value))
    if isinstance(value, (bool, np.bool_)) or not scalar:
        raise ValueError(f"{name} must be {accepted}, got {value!r}.")
    x = float(value)
    if integer:
        if not (math.isfinite(x) and x == int(x)):
            raise ValueError(f"{name} must be {accepted}, got {value!r}.")
        x = int(x)
    ok = math.isfinite(x)
    ok = ok and (low is None or (x > low if low_open else x >= low))
    ok = ok and (high is None or (x < high if high_open else x <= high))
    if not ok:
        raise ValueError(f"{name} must be {accepted}, got {value!r}.")
    return x


def real_array(name: str, value, *, dtype=None) -> np.ndarray:
    """A concrete ``value`` as a real NumPy array (``dtype`` if given), refusing complex
    and non-numeric input with a ``ValueError`` that names ``name`` (NumPy would drop an
    imaginary part silently, or fail with a message about the dtype)."""
    try:
        a = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name} must be an array of real numbers: {e}") from None
    if np.iscomplexobj(a):
        raise ValueError(f"{name} must be real, got a complex array ({a.dtype}).")
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number)
                                 or np.issubdtype(a.dtype, np.bool_)):
        raise ValueError(f"{name} must be an array of real numbers, got dtype {a.dtype}.")
    return a if dtype is None else a.astype(dtype)


def _where(bad: np.ndarray, limit: int = 5) -> str:
    """The first ``limit`` indices where ``bad`` is true, as text."""
    idx = np.argwhere(bad)
    shown = ", ".join(str(tuple(int(i) for i in row)) if len(row) != 1 else str(int(row[0]))
                      for row in idx[:limit])
    more = f" and {len(idx) - limit} more" if len(idx) > limit else ""
    return f"at {shown}{more}"


def finite_array(name: str, value) -> np.ndarray:
    """A concrete ``value`` as a real array with only finite entries; a ``ValueError``
    naming ``name`` and where the NaN/inf entries are otherwise (a scalar gets ``number``'s
    message)."""
    if np.ndim(value) == 0:
        return np.asarray(number(name, value))
    a = real_array(name, value)
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a)
        if bad.any():
            raise ValueError(f"{name} must be finite; it has {int(bad.sum())} NaN or "
                             f"infinite entries ({_where(bad)}).")
    return a


def array_in_range(name: str, value, *, low: float | None = None,
                   high: float | None = None, low_open: bool = False,
                   high_open: bool = False, unit: str = "") -> np.ndarray:
    """``finite_array`` with every entry in ``[low, high]`` (ends open where asked),
    checked elementwise; the error names the entries out of range (a scalar gets
    ``number``'s message, with ``unit``)."""
    if np.ndim(value) == 0:
        return np.asarray(number(name, value, low=low, high=high, low_open=low_open,
                                 high_open=high_open, unit=unit))
    a = finite_array(name, value)
    bad = np.zeros(a.shape, bool)
    if low is not None:
        bad |= (a <= low) if low_open else (a < low)
    if high is not None:
        bad |= (a >= high) if high_open else (a > high)
    if bad.any():
        first = a[bad].ravel()[0]
        raise ValueError(f"{name} must be {_range_text(low, high, low_open, high_open)} "
                         f"everywhere; {int(bad.sum())} entries are not ({_where(bad)}, "
                         f"e.g. {first:g}).")
    return a


def one_of(name: str, value, options: tuple[str, ...]) -> str:
    """``value`` when it is one of the strings ``options``, else a ``ValueError`` that
    names ``name`` and lists them (a non-string, e.g. an array, is refused, not compared
    elementwise)."""
    if not isinstance(value, str) or value not in options:
        listed = [repr(o) for o in options]
        text = listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} or {listed[-1]}"
        raise ValueError(f"{name} must be {text}, got {value!r}.")
    return str(value)


def flag(name: str, value) -> bool:
    """``value`` as a ``bool`` when it is ``True`` or ``False`` (Python or NumPy), else a
    ``ValueError`` naming ``name`` (``bool("no")`` would be ``True``)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def _is_number_list(x) -> bool:
    """A non-empty list or tuple of numbers, or of such lists: what one types for an array
    (a tuple of names, such as a model's variables, is not one)."""
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(
        isinstance(v, (numbers.Number, np.number, np.bool_)) or _is_number_list(v) for v in x)


def number_lists_as_arrays(tree, owner: str):
    """``tree`` (e.g. a model's parameters) with each list or tuple of numbers in it,
    nested ones too (a ``[rows, columns]`` table), replaced by a real NumPy array
    (integers and booleans as float64), to be used as an array given directly would be;
    a ragged or complex one gets a ``ValueError`` naming ``owner`` and the field, e.g.
    ``"ReducedWongWang.I_o"``."""

    def convert(path, x):
        if not _is_number_list(x):
            return x
        a = real_array(owner + jax.tree_util.keystr(path), x)
        return a.astype(np.float64) if a.dtype.kind in "biu" else a

    if not any(_is_number_list(x) for x in jax.tree.leaves(tree, is_leaf=_is_number_list)):
        return tree  # nothing to convert: the same object
    return jax.tree_util.tree_map_with_path(convert, tree, is_leaf=_is_number_list)
