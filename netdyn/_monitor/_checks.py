"""Validation shared by the monitors that watch a single state variable (BOLD)."""

import math

from jaxtyping import Array, Float

from .._names import as_names


def to_variables(variables: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...] | None:
    """Accept one name, a sequence of names, or ``None``.

    A string is always *one* name (``variables="y0"`` watches ``y0``, not ``y`` and ``0``).
    Every monitor's ``variables`` field goes through this converter.
    """
    return as_names(variables, "monitor variables")


def check_single_variable(monitor) -> None:
    if monitor.variables is not None and len(monitor.variables) != 1:
        raise ValueError(
            f"{type(monitor).__name__} is driven by exactly one state variable, got "
            f"variables={monitor.variables!r}; pass one of them, e.g. "
            f"variables={monitor.variables[:1]!r}."
        )


def check_warmup(monitor) -> None:
    warmup = monitor.warmup
    if not (isinstance(warmup, (int, float)) and math.isfinite(warmup) and warmup >= 0):
        raise ValueError(
            f"{type(monitor).__name__}: warmup must be a finite number of ms >= 0, "
            f"got {warmup!r}."
        )


def whole_multiple(name: str, value: float, unit_name: str, unit: float) -> int:
    """``value / unit`` as an int, or a ``ValueError`` when it is not a whole number."""
    n = round(value / unit)
    if n < 1 or abs(n * unit - value) > 1e-9 * max(1.0, abs(value)):
        raise ValueError(f"{name} ({value} ms) is not a whole number of {unit_name} ({unit} ms).")
    return n


def single_row(monitor, y: Float[Array, "k nodes"]) -> Float[Array, " nodes"]:
    """The one watched row of ``y``; a trace-time error when more rows are watched."""
    if y.ndim != 2 or y.shape[0] != 1:
        raise ValueError(
            f"{type(monitor).__name__} is driven by exactly one state variable, but it "
            f"receives {y.shape[0]} rows (shape {y.shape}): with a multi-variable model, "
            "pass variables=(name,) with one of the model's state variables."
        )
    return y[0]
