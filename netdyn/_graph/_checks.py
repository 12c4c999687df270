"""Shared validation of graph arrays, and the quantisation of delays into buffer rows."""

import functools
import warnings
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero
from jaxtyping import Array

from .. import _xla_tricks
from .._validate import array_in_range, is_concrete


class NearestDelayGradientWarning(UserWarning):
    """A derivative with respect to delays was taken through nearest-step delays.

    ``interpolation="nearest"`` (the default) reads each delay at ``rint(d / dt)`` whole
    steps, a piecewise-constant function of ``d``: its derivative is exactly zero. The
    warning is issued at trace time when a tangent reaches the delays (``jax.grad`` with
    respect to delays or conduction speed, or ``eqx.filter_grad`` over a whole network);
    plain runs never issue it. Use ``interpolation="linear"`` on the delayed coupling to
    differentiate with respect to delays, or filter the delays out of the differentiated
    leaves (``eqx.partition``) to silence it.
    """


def check_real(name: str, x) -> None:
    """Trace-time check that ``x`` holds real numbers: complex values are refused rather
    than silently losing their imaginary part."""
    if jnp.iscomplexobj(x):
        raise ValueError(
            f"{name} must be real, got {jnp.result_type(x)} values: netdyn does not drop "
            "imaginary parts (pass the real part, x.real, if that is what you mean)."
        )


def check_square(name: str, matrix) -> None:
    """Trace-time check that ``matrix`` is a real, square 2-D array with at least one node."""
    shape = jnp.shape(matrix)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square [nodes, nodes] matrix, got shape {shape}.")
    if shape[0] == 0:
        raise ValueError(f"{name} has shape {shape}: a graph needs at least one node.")
    check_real(name, matrix)


def check_same_shape(name: str, x, ref_name: str, ref) -> None:
    """Trace-time check that two arrays share a shape."""
    if jnp.shape(x) != jnp.shape(ref):
        raise ValueError(
            f"{name} has shape {jnp.shape(x)} but {ref_name} has shape {jnp.shape(ref)}."
        )


def _count(n: int, what: str) -> str:
    plural = {"entry": "entries", "edge": "edges"}[what]
    return f"1 {what} is" if n == 1 else f"{n} {plural} are"


def entry_positions(bad: np.ndarray, edges=None, limit: int = 5) -> str:
    """The ``[target, source]`` positions of the first ``limit`` true entries of ``bad``
    (a ``[nodes, nodes]`` mask, or an ``[edges]`` mask with ``edges = (targets, sources)``)."""
    if edges is None:
        pairs = np.argwhere(bad)
    else:
        pairs = np.stack([np.asarray(e)[bad] for e in edges], axis=1)
    shown = ", ".join(f"({int(t)}, {int(s)})" for t, s in pairs[:limit])
    more = f" and {len(pairs) - limit} more" if len(pairs) > limit else ""
    return f"[target, source] = {shown}{more}"


def check_weight_values(owner: str, weights, signed: bool, edges=None) -> None:
    """Concrete ``weights`` must be finite, and >= 0 unless ``signed``: a ``ValueError``
    naming ``owner.weights`` and the offending entries as ``[target, source]`` positions
    (of each edge, ``edges = (targets, sources)``, for a sparse graph). Traced weights are
    checked at run time (``checked_weights``)."""
    if not all(is_concrete(x) for x in (weights, *(edges or ()))):
        return
    w = np.asarray(weights)
    what = "entry" if edges is None else "edge"
    bad = ~np.isfinite(w)
    if bad.any():
        raise ValueError(
            f"{owner}.weights must be finite; {_count(int(bad.sum()), what)} NaN or "
            f"infinite ({entry_positions(bad, edges)}; e.g. {w[bad][0]:g})."
        )
    if not signed:
        bad = w < 0
        if bad.any():
            raise ValueError(
                f"{owner}.weights must be >= 0 (pass signed=True for a signed connectome); "
                f"{_count(int(bad.sum()), what)} not ({entry_positions(bad, edges)}; "
                f"e.g. {w[bad][0]:g})."
            )


class EntryMessages(Sequence):
    """Runtime error messages indexed by a flat ``[nodes, nodes]`` entry index, built
    only when one is shown: ``eqx.branched_error_if`` reads ``msgs[index]`` when the error
    fires, so a message can name the entry without ``nodes**2`` strings being made.
    ``template`` holds ``{at}``, replaced by ``[target, source] = (i, j)``."""

    def __init__(self, template: str, n_nodes: int):
        self.template, self.n_nodes = template, n_nodes

    def __len__(self) -> int:
        return self.n_nodes * self.n_nodes

    def __getitem__(self, index):
        if not 0 <= index < len(self):  # a sparse edge whose indices were replaced
            return self.template.format(at="at an edge with a node index out of range")
        target, source = divmod(int(index), self.n_nodes)
        return self.template.format(at=f"at [target, source] = ({target}, {source})")


def _entry_index(x: Array, edges, n_nodes: int | None) -> tuple[Array, int]:
    """Each value's flat ``target * n_nodes + source`` index, and ``n_nodes``: of a
    ``[nodes, nodes]`` matrix, or of ``[edges]`` values with ``edges = (targets, sources)``."""
    if edges is None:
        n = x.shape[-1]
        return jnp.arange(x.size, dtype=jnp.int32).reshape(x.shape), n
    targets, sources = edges
    return targets.astype(jnp.int32) * n_nodes + sources.astype(jnp.int32), n_nodes


def _error_at(x: Array, bad: Array, flat_index: Array, template: str, n_nodes: int) -> Array:
    """``x`` with a runtime error naming the ``[target, source]`` entry of the first true
    ``bad`` (``flat_index``: each entry's ``target * n_nodes + source``)."""
    if bad.size == 0:  # a sparse graph without edges
        return x
    first = jnp.argmax(bad.reshape(-1))
    return eqx.branched_error_if(
        x, jnp.any(bad), flat_index.reshape(-1)[first], EntryMessages(template, n_nodes)
    )


def checked_weights(weights: Array, signed: bool, edges=None, n_nodes: int | None = None):
    """Attach runtime checks: finite, and non-negative unless ``signed`` (the graphs'
    trace-time checks, run first in ``validate``, have refused complex values). The
    message names the first offending ``[target, source]`` entry (of a sparse graph's
    edges ``edges = (targets, sources)`` over ``n_nodes`` nodes)."""
    flat, n = _entry_index(weights, edges, n_nodes)
    weights = _error_at(weights, ~jnp.isfinite(weights), flat,
                        "weights contain NaN or inf ({at}).", n)
    if not signed:
        weights = _error_at(
            weights, weights < 0, flat,
            "weights contain negative entries ({at}); pass signed=True for signed "
            "connectomes.", n,
        )
    return weights


def checked_delays(delays: Array, max_delay: float, edges=None,
                   n_nodes: int | None = None) -> Array:
    """Attach runtime checks: finite, non-negative (each naming the first offending
    ``[target, source]`` entry, as ``checked_weights``), and within ``max_delay``."""
    flat, n = _entry_index(delays, edges, n_nodes)
    delays = _error_at(delays, ~jnp.isfinite(delays), flat, "delays contain NaN or inf ({at}).", n)
    delays = _error_at(delays, delays < 0, flat, "delays contain negative entries ({at}).", n)
    delays = eqx.error_if(
        delays,
        jnp.any(delays > max_delay),
        "delays exceed the graph's max_delay, which sizes the history buffer; rebuild the "
        "graph or pass a larger max_delay.",
    )
    return delays


def check_delay_values(owner: str, delays, edges=None) -> None:
    """Concrete ``delays`` (ms) must be finite and >= 0: a ``ValueError`` naming
    ``owner.delays`` and the entries that are not, as ``[target, source]`` positions
    (of each edge, ``edges = (targets, sources)``, for a sparse graph). Traced delays are
    checked at run time (``checked_delays``)."""
    if not all(is_concrete(x) for x in (delays, *(edges or ()))):
        return
    if edges is None:
        array_in_range(f"{owner}.delays", delays, low=0.0)
        return
    d = np.asarray(delays)
    bad = ~np.isfinite(d) | (d < 0)
    if bad.any():
        targets, sources = (np.asarray(e)[bad] for e in edges)
        shown = ", ".join(f"({int(t)}, {int(s)})" for t, s in list(zip(targets, sources))[:5])
        more = f" and {len(targets) - 5} more" if len(targets) > 5 else ""
        raise ValueError(
            f"{owner}.delays must be finite and >= 0 ms; {int(bad.sum())} edges are not "
            f"([target, source] = {shown}{more}; e.g. {d[bad][0]:g})."
        )


def concrete_max(name: str, delays) -> float:
    """Largest delay of a concrete array, with a clear error for traced input."""
    try:
        values = np.asarray(delays)
    except Exception as e:  # a tracer: the buffer size must be known at trace time
        raise ValueError(
            f"{name} are traced (built inside jit/vmap/grad); pass max_delay=... explicitly "
            "so that the history buffer size is known at trace time."
        ) from e
    check_real(name, values)
    if values.size == 0:
        return 0.0
    return float(np.nanmax(values)) if np.isfinite(np.nanmax(values)) else 0.0


def steps_of(delays: Array, dt: float) -> Array:
    """``delays / dt``, correctly rounded (as NumPy's and TVB's division): a tract of
    228.875 mm at 5 mm/ms is 915.4999... steps of 0.05 ms, read as 915 whole steps, where
    the product with ``1 / dt`` (XLA's rewrite of a division) gives 915.5, read as 916."""
    return _xla_tricks.divide(delays, dt)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _nearest_rows(delays: Array, dt: float, n_rows: int) -> Array:
    D = jnp.rint(steps_of(delays, dt)).astype(jnp.int32)
    # Clamping guards against a float32/float64 rounding disagreement at max_delay.
    return jnp.maximum(n_rows - 1 - D, 0)


def _nearest_rows_jvp(dt, n_rows, primals, tangents):
    (delays,), (tangent,) = primals, tangents
    if not isinstance(tangent, SymbolicZero):
        warnings.warn(
            "the derivative with respect to delays is exactly zero with nearest-step delays "
            "(interpolation='nearest', the default, reads rint(d / dt) whole steps). Pass "
            "interpolation='linear' to the delayed coupling to differentiate with respect "
            "to delays or conduction speed, or leave the delays out of the differentiated "
            "leaves.",
            NearestDelayGradientWarning,
            stacklevel=2,
        )
    rows = _nearest_rows(delays, dt, n_rows)
    return rows, np.zeros(rows.shape, jax.dtypes.float0)


_nearest_rows.defjvp(_nearest_rows_jvp, symbolic_zeros=True)


def delay_rows(delays: Array, dt: float, n_rows: int, interpolation: str):
    """Rows and fractional weights of delays (ms) in a buffer of ``n_rows`` rows.

    Nearest: ``D = rint(d / dt)`` (TVB's convention, ties to even, with a correctly
    rounded quotient), read row ``n_rows - 1 - D``; its derivative with respect to the
    delays is zero, and taking it issues a ``NearestDelayGradientWarning``. Linear:
    ``d / dt = D + f`` with ``D = floor``, read rows ``n_rows - 1 - D`` and the one before
    with weights ``1 - f`` and ``f``.
    """
    if interpolation == "nearest":
        return _nearest_rows(delays, dt, n_rows), None
    if interpolation == "linear":
        steps = steps_of(delays, dt)
        D = jnp.floor(steps)
        frac = steps - D
        return jnp.maximum(n_rows - 1 - D.astype(jnp.int32), 1), frac
    raise ValueError(f"interpolation must be 'nearest' or 'linear', got {interpolation!r}.")
