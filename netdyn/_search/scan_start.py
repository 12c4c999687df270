"""The start of a fit: the value of one parameter (the global coupling) where the model's
FC reaches the data's level."""

import dataclasses
import math
from collections.abc import Callable, Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Key

from .._loss._base import AbstractFcLoss, evaluate_compiled
from .._observation._stats import upper_triangle
from .level_search import LevelSearch, level_search


@dataclasses.dataclass(frozen=True)
class StartScan:
    """What ``nd.scan_start`` found.

    - ``start``: the value to start the fit from (the lowest loss seen; with
      ``side="rising"`` not past the crossing), or ``None`` when no value reached the
      target's level.
    - ``bracket``: ``(lo, hi)``, the final bracket of the crossing, or ``None``.
    - ``level``: the target FC's mean (upper triangle), the level searched for.
    - ``search``: the ``nd.level_search`` result (``values``, ``results`` with ``"loss"``
      and ``"mean_fc"`` at each, ``stage``).
    - ``at_peak``: ``True`` when no value reached the level and the start is the peak of
      the mean FC, within ``tolerance`` of the level (see ``scan_start``).
    """

    start: float | None
    bracket: tuple[float, float] | None
    level: float
    search: LevelSearch
    at_peak: bool = False


def scan_start(
    loss_fn: AbstractFcLoss,
    network,
    where: Callable,
    values: ArrayLike | Sequence[float],
    *,
    key: Key[Array, ""] | None,
    iterations: int = 8,
    side: str = "falling",
    tolerance: float = 0.0,
    on_point: Callable[[float], None] | None = None,
) -> StartScan:
    r"""Where to start a fit of the parameter ``where(network)`` (a scalar, usually the
    global coupling $G$): ``nd.level_search`` from ``values`` for the value next to the
    peak of the model's mean FC (``loss_fn``'s metric ``mean_fc``, one noise ``key`` at
    every point: common random numbers) where it meets the mean of ``loss_fn.target``,
    bisected ``iterations`` times; the start is the value with the lowest loss seen
    (non-finite losses skipped; with ``side="rising"``, not past the crossing, where a
    model such as the two-population Wong-Wang model with feedback inhibition leaves its
    balanced state during the run).

    Why: the FC of delay-coupled mean-field models peaks in a narrow band of $G$ at the
    edge of a bifurcation and the loss is nearly flat away from it, where a gradient says
    little; a coarse grid hits the band by chance only (weights scaled by 6 % moved it off
    a grid point that had hit it). The search follows the mean FC's peak and finds the
    crossing to any width. Use a cheap loss (one realisation: ``loss.replace(
    realisations=1)``); ``on_point(value)`` is called before each evaluation (progress,
    interrupts).

    ``tolerance`` (>= 0): when no value reaches the level but the highest mean FC seen is
    within ``tolerance`` below it, the start is that peak (``at_peak=True``) rather than
    none. A cheap scan reads the level low near a bifurcation: on the single-population
    Wong-Wang model at its own parameters, the mean FC of one 43.2 s realisation is about
    0.025 lower than that of the 288 s runs it was made from, with a standard deviation of
    0.05-0.11 between realisations, so a scan can miss a level the model reaches; the
    fit's own level term (``level_width``) takes over from the peak. Keep it 0 for a
    deterministic loss (the analytic FC).
    """
    if not (isinstance(tolerance, int | float) and not isinstance(tolerance, bool)
            and math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"scan_start: tolerance must be a finite number >= 0, got "
                         f"{tolerance!r}.")
    current = jnp.asarray(where(network))
    if current.ndim != 0:
        raise ValueError(f"scan_start: where must select one scalar, got shape "
                         f"{current.shape}.")
    level = float(np.mean(upper_triangle(np.asarray(loss_fn.target), k=1)))

    def evaluate(points: np.ndarray) -> dict[str, np.ndarray]:
        out = []
        for v in points:
            if on_point is not None:
                on_point(float(v))
            model = eqx.tree_at(where, network, jnp.asarray(v, current.dtype))
            # The program netdyn fit evaluates its fitted model with: compiled once.
            loss, metrics, _ = evaluate_compiled(loss_fn, model, key)
            out.append((float(loss), float(metrics["mean_fc"])))
        return {"mean_fc": np.array([m for _, m in out]),
                "loss": np.array([loss for loss, _ in out])}

    found = level_search(evaluate, values, level, key="mean_fc", iterations=iterations,
                         side=side)
    losses = np.where(np.isfinite(found.results["loss"]), found.results["loss"], np.inf)
    if found.bracket is not None and side == "rising":
        losses = np.where(found.values <= max(found.bracket), losses, np.inf)
    start = None if found.bracket is None else float(found.values[int(np.argmin(losses))])
    peak = _peak(found)
    at_peak = start is None and peak is not None and level - tolerance <= peak[1] < level
    if at_peak:
        start = peak[0]
    return StartScan(start=start, bracket=found.bracket, level=level, search=found,
                     at_peak=at_peak)


def _peak(found: LevelSearch) -> tuple[float, float] | None:
    """``(value, mean FC)`` where the search's mean FC is highest (finite ones only), or
    ``None`` when every evaluation diverged."""
    m = np.asarray(found.results["mean_fc"], dtype=float)
    if not np.isfinite(m).any():
        return None
    k = int(np.nanargmax(np.where(np.isfinite(m), m, np.nan)))
    return float(found.values[k]), float(m[k])
