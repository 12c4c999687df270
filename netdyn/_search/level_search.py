"""``level_search``: find where a scalar summary of a model crosses a target level, by a
coarse scan that brackets the crossing and bisection that narrows it."""

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from .._custom_types import ArrayLike


class LevelSearch(NamedTuple):
    """What ``level_search`` evaluated and found.

    - ``values``: every parameter value evaluated, in the order evaluated (the scan, any
      extensions of it, then the bisection).
    - ``results``: ``fn``'s outputs at each of ``values`` (a dict of 1-D arrays).
    - ``stage``: for each value, ``"scan"``, ``"extend"``, ``"peak"`` or ``"bisect"``.
    - ``bracket``: ``(lo, hi)``, the final bracket of the crossing (the level at ``lo`` is
      on the other side of the target from that at ``hi``), or ``None`` when no value
      evaluated reached the target.
    """

    values: np.ndarray
    results: dict[str, np.ndarray]
    stage: tuple[str, ...]
    bracket: tuple[float, float] | None


def level_search(
    fn: Callable[[np.ndarray], dict[str, ArrayLike]],
    values: ArrayLike | Sequence[float],
    target: float,
    *,
    key: str = "level",
    iterations: int = 8,
    peak_iterations: int = 16,
    extend: int = 2,
    factor: float = 3.0,
    side: str = "falling",
) -> LevelSearch:
    r"""Find a parameter value $g$ where a level $\ell(g)$ (e.g. the mean of a simulated FC,
    as a function of the global coupling G) crosses ``target``, next to the level's peak.

    1. **Scan**: evaluate ``fn`` at ``values`` (sorted). When the highest level lies at an
       edge of the scan and below ``target``, scan further beyond that edge (up to
       ``extend`` times, each a geometric grid of ``max(4, len(values) // 2)`` points from
       the edge to ``factor`` times it, or a ``factor``-th of it; positive values only).
    2. **Peak**: while the highest level seen is below ``target``, probe the midpoint of the
       wider side of the bracket ``(a, m, b)`` around the highest point ``m`` (a
       bracketing maximisation, as golden-section search but from the scan's points), up
       to ``peak_iterations`` times.
    3. **Bisect** ``iterations`` times the pair of neighbours between which the level
       crosses ``target`` nearest the highest point, on the side of larger $g$ if there
       is one (the level falling through the target), else on the side of smaller $g$
       (``side="falling"``); with ``side="rising"`` only on the side of smaller $g$.

    Why: the FC of delay-coupled mean-field models is strongest in a narrow band of G at
    the edge of a bifurcation. On the Reduced Wong-Wang model the mean FC jumps from
    about 0.05 to 0.6 where the low-activity state loses stability, then falls back over
    a few thousandths of G; the data's level is met on that falling side, where the loss
    is lowest. A coarse grid places points in that band only by chance (with the
    connectome scaled by 6 %, a grid that had hit it missed it); the peak and the
    crossing move with the band, and the search finds them at one evaluation per
    halving. For a level that only rises with G (the Hopf model's), the crossing is
    the rising one. Where the falling side is not a stationary state (the two-population
    model with feedback inhibition: past the peak the balanced state loses stability
    and the network escapes from it during the run), ask for ``side="rising"``. Use one
    noise key for every evaluation (common random numbers), so that the level is a
    deterministic function of $g$.

    **Arguments**:

    - ``fn``: maps a 1-D array of parameter values ``[k]`` to a dict of ``[k]`` arrays,
      one of them named ``key`` (the level); the others (a loss, say) are recorded.
    - ``values``: the scan, 1-D, at least 3 distinct finite values.
    - ``target``: the level to reach, finite.
    - ``iterations``, ``peak_iterations``, ``extend``: ints ``>= 0``; ``factor > 1``.
    - ``side``: ``"falling"`` or ``"rising"``, the crossings bisected (step 3).

    **Returns**: a ``LevelSearch`` with every evaluation. Non-finite levels (a diverged
    simulation) count as below every target. ``bracket`` is ``None`` when no level
    reached ``target``, or every level did.
    """
    v, target = _checked(values, target, iterations, peak_iterations, extend, factor, side)
    run = _Evaluations(fn, key)
    evaluate, top, points = run.evaluate, run.top, run.points
    evaluate(v, "scan")
    for _ in range(extend):
        g, level, k = top()
        if level[k] >= target or 0 < k < g.size - 1 or (k == 0 and g[0] <= 0):
            break
        m = max(4, v.size // 2)
        edge = g[k]
        new = np.geomspace(edge, edge * factor if k else edge / factor, m + 1)[1:]
        evaluate(new, "extend")

    for _ in range(peak_iterations):
        g, level, k = top()
        if level[k] >= target or not 0 < k < g.size - 1:
            break
        a, m, b = g[k - 1], g[k], g[k + 1]
        evaluate(np.asarray([0.5 * (a + m) if m - a > b - m else 0.5 * (m + b)]), "peak")

    bracket = _crossing(*top(), target, side)
    if bracket is None:
        return run.result(None)
    lo, hi = bracket
    high_at_lo = points[lo] >= target
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        evaluate(np.asarray([mid]), "bisect")
        if (points[mid] >= target) == high_at_lo:
            lo = mid
        else:
            hi = mid
    return run.result((float(lo), float(hi)))


def _checked(values, target, iterations, peak_iterations, extend, factor, side):
    """``(sorted distinct values, target)``, every argument checked (``ValueError``)."""
    v = np.unique(np.asarray(values, dtype=float).ravel())
    if v.size < 3 or not np.all(np.isfinite(v)):
        raise ValueError(f"level_search values must hold >= 3 distinct finite values, got "
                         f"{np.asarray(values).tolist()!r}.")
    target = float(target)
    if not math.isfinite(target):
        raise ValueError(f"level_search target must be finite, got {target}.")
    for name, n in (("iterations", iterations), ("peak_iterations", peak_iterations),
                    ("extend", extend)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"level_search {name} must be an int >= 0, got {n!r}.")
    if not (math.isfinite(factor) and factor > 1):
        raise ValueError(f"level_search factor must be > 1, got {factor}.")
    if side not in ("falling", "rising"):
        raise ValueError(f"level_search side must be 'falling' or 'rising', got {side!r}.")
    return v, target


class _Evaluations:
    """Every evaluation of ``fn`` so far: its outputs, their order and stage, and the
    level at each value (``points``; non-finite as -inf)."""

    def __init__(self, fn, key: str):
        self.fn, self.key = fn, key
        self.seen: dict[str, list[float]] = {}
        self.order: list[float] = []
        self.stage: list[str] = []
        self.points: dict[float, float] = {}

    def evaluate(self, x: np.ndarray, label: str) -> None:
        out = self.fn(x)
        if self.key not in out:
            raise ValueError(f"level_search: fn's output has no {self.key!r} entry "
                             f"(it has {sorted(out)}).")
        for name, y in out.items():
            y = np.asarray(y, dtype=float).reshape(-1)
            if y.shape != x.shape:
                raise ValueError(f"level_search: fn returned {name!r} of shape {y.shape} "
                                 f"for {x.shape[0]} values.")
            self.seen.setdefault(name, []).extend(y.tolist())
        levels = np.asarray(out[self.key], dtype=float).reshape(-1)
        for g, level in zip(x.tolist(), levels.tolist()):
            self.points[g] = level if math.isfinite(level) else -math.inf
        self.order.extend(x.tolist())
        self.stage.extend([label] * x.size)

    def top(self) -> tuple[np.ndarray, np.ndarray, int]:
        """``(values sorted, their levels, index of the highest)``."""
        g = np.asarray(sorted(self.points))
        level = np.asarray([self.points[x] for x in g])
        return g, level, int(np.argmax(level))

    def result(self, bracket) -> LevelSearch:
        return LevelSearch(np.asarray(self.order),
                           {n: np.asarray(x) for n, x in self.seen.items()},
                           tuple(self.stage), bracket)


def _crossing(g, level, k: int, target: float, side: str) -> tuple[float, float] | None:
    """The pair of neighbours between which the level crosses ``target`` next to the peak
    ``k`` (see ``level_search``, step 3), or ``None``: never reached, or never left."""
    # The crossing next to the peak, between neighbours; a diverged point is none.
    finite = np.isfinite(level)
    right = np.flatnonzero(level[k + 1:] < target)
    left = np.flatnonzero(level[:k] < target)
    right = right[finite[k + 1:][right]][:1] + k + 1
    left = left[finite[:k][left]][-1:]
    # Only a crossing: the neighbour towards the peak must reach the target (a diverged
    # point between them makes that side no bracket).
    right = right[level[right - 1] >= target] if right.size else right
    left = left[level[left + 1] >= target] if left.size else left
    if side == "rising":
        right = right[:0]
    if level[k] < target or not (right.size or left.size):
        return None
    # Between the first point past the peak below the target and its neighbour towards
    # the peak.
    return (g[right[0] - 1], g[right[0]]) if right.size else (g[left[0]], g[left[0] + 1])
