"""``long_check``: the held-out loss on both sides of each fitted scalar (0.8x and 1.25x;
0.5x and 2x on a side flat there), each held-out set with its own noise: what
simulations as long as the held-out check say about a parameter that a fit's short, noisy
loss may not resolve (``netdyn fit``'s long check): where the loss is higher, which bounds
the value; where it is flat.

Measured on ``--model rww``: its own FC made at sigma 0.0022 (4 x 288 s) was fitted with
sigma kept at its start 0.00283, the loss of 4 x 43.2 s per step showing no curvature along
it, while 4 x 288 s simulations at the two values differ by 0.16 in FC r and 0.09 in mean FC.
So ``netdyn fit`` looks along each value at the held-out length before calling it
unconstrained.

With G fitted as well, a value such as sigma is looked at along its profile, not a slice:
G is moved back onto the fit's FC level at each point (secant steps in G, the first from the
level's slope there). Measured on the same truth (G 0.2213, sigma 0.0022;
``benchmarks/sigma_level.md``): with G re-found by the command's scan for each sigma (on
the level, or at the level's peak where the short scan found no crossing), the FC r
against the truth's FC at 4 x 288 s went only from 0.971 (sigma 0.0012) to 0.967 (sigma
0.003), set-to-set spread 0.0015, favouring the lowest noise, while a slice at fixed G
changes the mean FC by far more: a slice would call sigma constrained where the FC, with
G free, says little about it. With G put on the level by 4 x 288 s runs themselves
(``benchmarks/sigma_long.md``), the FC r, RMSE and FCD KS there were flat over sigma
0.0012-0.003 (their spread a third of what one noise key moves): a "flat" profile of sigma
is then what long simulations say too, not only the fit's short loss."""

import time
from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._loss._base import AbstractFcLoss
from .._network import Network
from .._persistence import interrupt
from .._presets.models import Preset
from .._presets.selection import leaf, long_name
from .heldout import heldout_scores

# The fitted value times these: -20 % and +25 % (the same step on a log scale); on a side
# where the loss is flat there, OUTER's factor of that side as well (0.5x below, 2x above):
# a value that the fit's short loss left unresolved is then bounded where the long loss
# rises, or said to be flat over a range four times wide.
FACTORS = (0.8, 1.25)
OUTER = (0.5, 2.0)
# The step in G (relative) that measures the level's slope for re-levelling, and the
# largest move of G (relative) one re-levelling may make: the band of G where the
# single-population model's FC lives is a few thousandths wide.
LEVEL_STEP, LEVEL_MOVE = 0.002, 0.05
# Re-levelling takes secant steps until the mean FC is within LEVEL_TOL (relative) of the
# fit's, at most LEVEL_STEPS of them. One step was not enough: on rww (G 0.2216, sigma
# 0.00283 x 1.25, fitted to its own FC made at sigma 0.0015) it left the mean FC 0.015 below
# the fit's 0.321, and that shortfall alone raised the loss by the 0.014 that both held-out
# sets showed (the loss moves about one for one with the mean FC there, FC r 0.960 ->
# 0.958): a bound on sigma made by G, not by sigma. At 0.5 % the shortfall's share of
# the loss is about 0.0016 there.
LEVEL_TOL, LEVEL_STEPS = 0.005, 4
# A change counts when every held-out set agrees on its sign and its mean exceeds the
# 97.5 % quantile of Student's t with (sets - 1) degrees of freedom times the standard
# error (over the sets) of the mean: a two-sided 95 % test, 12.7 standard errors with 2
# sets (with 2 standard errors, 2 sets called 15 % of pure-noise changes higher). Each
# set compares the points with its own noise (common random numbers): near the
# bifurcation one set's loss differs from another's by far more than the points of one set
# differ from each other (rww at G 0.221, sigma 0.00283, against an FC made at sigma
# 0.0022: the two sets' losses 0.39 and 0.12, while sigma x 0.8 lowered the first set's
# by 0.22). Measured on rww (benchmarks/recovery.md, truth sigma 0.0036): at sigma x 1.25
# both sets rose by 0.0012 and 0.0019 (4 standard errors, 2 % of the loss, within what
# a 1.5 % level tolerance could make): called "higher" with 2 standard errors, it bounded
# sigma below 0.00354, under the truth.
# Student's t, 97.5 % quantiles for 1-30 degrees of freedom (standard tables); beyond, 1.96.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def long_check(heldout_fn: AbstractFcLoss, fitted: Network, names: Sequence[str], key,
               heldout_each: list[dict], *, relevel: bool = False,
               preset: Preset | None = None) -> dict:
    """The held-out loss (``heldout_fn``, each held-out set's noise in turn, the sets of
    ``nd.heldout_scores(heldout_fn, fitted, key=key, sets=len(heldout_each))``, whose
    ``heldout_each`` holds each set's metrics at the fit) at ``FACTORS`` (0.8, 1.25)
    times each scalar parameter ``names`` of the preset network ``fitted`` (as
    ``nd.presets.select`` names them: ``G``, ``sigma``, a field of the dynamics), the
    others fixed, beside that set's loss at the fit; on a side where it is flat, at that
    side's ``OUTER`` factor too (0.5x, 2x). With ``relevel`` (G fitted too), a parameter
    other than G is looked at along its profile: G moved back onto the fit's mean FC at
    each point (secant steps until within ``LEVEL_TOL``). Values in ``preset``'s units
    (``None``: the network's). Each set compares the points with its own noise (common
    random numbers).

    Each point's *side*: ``"higher"`` (every set's loss higher than at the fit, the mean
    change by more than ``critical_t(sets - 1)`` standard errors over the sets: a
    two-sided 95 % t test), ``"lower"`` (every set lower, by as much) or ``"flat"``; on a
    profile, ``"higher off the level"`` where re-levelling left the mean FC further than
    ``LEVEL_TOL`` from the fit's. A ``"higher"`` point bounds the value at the held-out
    length (the nearest one on each side: ``bounds``); a flat value is said flat over the
    points found flat.

    **Returns** ``{"factors", "parameters": {name: {"value", "values", "rise",
    "rise_each", "fc_r", "mean_fc", "G", "outer_factors", "outer_values", "outer_rise",
    "outer_rise_each", "outer_fc_r", "outer_mean_fc", "outer_G", "sides", "bounds",
    "verdict"}}, "loss_at_fit", "seconds"}``, named as the fitted leaves are
    (``coupling.G``): ``value`` the fitted value, the next six at ``FACTORS``, the
    ``outer_`` ones at the outer factors looked at (none, one or both); ``rise`` the mean
    over the sets of the loss's change from the fit, ``rise_each`` each set's, ``fc_r``
    and ``mean_fc`` the means over the sets, ``G`` the re-levelled G at each point
    (``None`` without); ``sides`` each point's side, ``FACTORS``' then the outer ones;
    ``bounds`` ``[lower, upper]``,
    the nearest value on each side where the loss is higher (``None``: none found);
    ``verdict`` ``"lower at FACTORx"`` (a point lower: the long loss's minimum lies
    beyond the fitted value), ``"minimum"`` (bounded on both sides), ``"bounded above"``,
    ``"bounded below"`` or ``"flat"`` (flat at every point looked at). Ctrl-C is acted
    on between simulations (``nd.defer_interrupts``).
    """
    if len(heldout_each) < 2:
        raise ValueError("long_check: needs 2 or more held-out sets (a spread to judge a "
                         f"change by), got {len(heldout_each)}.")

    def units(name: str, x):
        return x if preset is None else preset.in_preset_units(name, x)

    start = time.perf_counter()
    centres = np.array([e["loss"] for e in heldout_each])
    level = _mean(heldout_each, "mean_fc")

    def scores(model) -> list[dict]:
        """The loss and metrics of each held-out set (its own noise) at ``model``."""
        interrupt.check()
        result = heldout_scores(heldout_fn, model, key=key,
                                sets=len(heldout_each), on_set=lambda i, one: interrupt.check())
        return [one["fit"] for one in result.sets]

    out = {}
    for name in names:
        value = leaf(fitted, name)
        profile = relevel and name != "G"
        full = long_name(name)

        def point(f, name=name, value=value, profile=profile):
            """``(the sets' metrics, the re-levelled G or None)`` at ``f`` times the value."""
            moved = eqx.tree_at(lambda m: leaf(m, name), fitted,
                                jnp.asarray(value * f, jnp.result_type(value)))
            row = scores(moved)
            if not profile:
                return row, None
            moved, row = _relevel(moved, row, level, scores)
            return row, float(units("coupling.G", leaf(moved, "G")))

        def side(row):
            """The point's side; a profile's point higher but off the level does not bound
            (its rise may be the mean FC's, which G could not restore)."""
            found = _side(np.array([p["loss"] for p in row]) - centres)
            off = abs(_mean(row, "mean_fc") - level) > LEVEL_TOL * abs(level)
            return "higher off the level" if found == "higher" and profile and off else found

        inner = [point(f) for f in FACTORS]
        sides = [side(row) for row, _ in inner]
        outer_factors = [o for o, s in zip(OUTER, sides) if s == "flat"]
        outer = [point(f) for f in outer_factors]
        sides += [side(row) for row, _ in outer]
        def at_factor(f, full=full, value=value):
            return units(full, value * f)

        record = {**_points(inner, FACTORS, centres, at_factor),
                  **_points(outer, outer_factors, centres, at_factor, prefix="outer_")}
        if not profile:
            record["G"], record["outer_G"] = None, None
        bounds = _bounds(list(FACTORS) + outer_factors, sides, at_factor)
        out[full] = {**record, "value": float(at_factor(1.0)),
                     "outer_factors": outer_factors, "sides": sides,
                     "bounds": bounds,
                     "verdict": _verdict(list(FACTORS) + outer_factors, sides,
                                         record["rise"] + record["outer_rise"], bounds)}
    return {"factors": list(FACTORS), "parameters": out,
            "loss_at_fit": float(centres.mean()), "seconds": time.perf_counter() - start}


def _points(points: list, factors: Sequence[float], centres: np.ndarray, value,
            prefix: str = "") -> dict:
    """``values``, ``rise``, ``rise_each``, ``fc_r``, ``mean_fc`` and ``G`` (each key
    with ``prefix``) of the points ``[(sets' metrics, G)]`` at ``factors``."""
    rise_each = np.array([[p["loss"] for p in row] for row, _ in points]).reshape(
        len(points), len(centres)) - centres
    return {f"{prefix}values": [float(value(f)) for f in factors],
            f"{prefix}rise": rise_each.mean(axis=1).tolist(),
            f"{prefix}rise_each": rise_each.tolist(),
            f"{prefix}fc_r": [_mean(row, "fc_r") for row, _ in points],
            f"{prefix}mean_fc": [_mean(row, "mean_fc") for row, _ in points],
            f"{prefix}G": [g for _, g in points]}


def _relevel(model, row: list[dict], level: float, scores):
    """``(model, its scores)`` with G moved back onto the mean FC ``level`` (the fit's, at
    the held-out length): secant steps on the mean FC as a function of G, the first from
    its slope over a step of ``LEVEL_STEP`` in G, until the mean FC is within ``LEVEL_TOL``
    (relative) of ``level`` or after ``LEVEL_STEPS`` steps, G kept within ``LEVEL_MOVE``
    (relative) of where it was; of the points simulated, the one whose mean FC is nearest
    ``level``. ``model`` and ``row`` unchanged where their mean FC is within
    ``LEVEL_TOL`` already, or where the slope is zero or not finite."""
    if abs(_mean(row, "mean_fc") - level) <= LEVEL_TOL * abs(level):
        return model, row
    G = leaf(model, "G")
    g = float(G)

    def at(x):
        return eqx.tree_at(lambda m: leaf(m, "G"), model, jnp.asarray(x, jnp.result_type(G)))

    probe_g = g + LEVEL_STEP * g
    probe = at(probe_g)
    probe_row = scores(probe)
    points = [(g, _mean(row, "mean_fc"), model, row),  # (G, mean FC, model, scores)
              (probe_g, _mean(probe_row, "mean_fc"), probe, probe_row)]
    for _ in range(LEVEL_STEPS):
        (g0, m0, *_), (g1, m1, *_) = points[-2], points[-1]
        slope = (m1 - m0) / (g1 - g0)
        if not (np.isfinite(slope) and slope != 0):
            break
        x = float(np.clip(g1 + (level - m1) / slope, g * (1 - LEVEL_MOVE), g * (1 + LEVEL_MOVE)))
        if x == g1:
            break
        moved = at(x)
        found = scores(moved)
        points.append((x, _mean(found, "mean_fc"), moved, found))
        if abs(points[-1][1] - level) <= LEVEL_TOL * abs(level):
            break
    nearest = min(points, key=lambda p: abs(p[1] - level) if np.isfinite(p[1]) else np.inf)
    return nearest[2], nearest[3]


def _mean(rows: list[dict], key: str) -> float:
    """The mean of ``key`` over ``rows`` (the held-out sets' metrics)."""
    return float(np.mean([r[key] for r in rows]))


def _side(rise: np.ndarray) -> str:
    """One point's changes over the sets: ``"higher"`` (every set higher, the mean by more
    than ``critical_t(n - 1)`` standard errors of the mean), ``"lower"`` (every set lower,
    by as much) or ``"flat"`` (within the noise)."""
    mean, se = rise.mean(), rise.std(ddof=1) / np.sqrt(rise.size)
    t = critical_t(rise.size - 1)
    if np.all(rise < 0) and mean < -t * se:
        return "lower"
    if np.all(rise > 0) and mean > t * se:
        return "higher"
    return "flat"


def critical_t(dof: int) -> float:
    """Student's t 97.5 % quantile for ``dof`` degrees of freedom (``T975``; 1.96 past 30)."""
    return T975[dof - 1] if dof <= len(T975) else 1.96


def _bounds(factors: list[float], sides: list[str], value) -> list:
    """``[lower, upper]``: the value (``value(factor)``) of the factor nearest 1 on each
    side whose point is ``"higher"``; ``None`` where there is none."""
    def nearest(below: bool):
        hits = [f for f, s in zip(factors, sides) if s == "higher" and (f < 1) == below]
        return None if not hits else float(value(max(hits) if below else min(hits)))

    return [nearest(True), nearest(False)]


def _verdict(factors: list[float], sides: list[str], rise: list[float], bounds: list) -> str:
    """``"lower at Fx"`` (the lowest mean among the points lower than the fit),
    ``"minimum"`` (bounded on both sides), ``"bounded above"``, ``"bounded below"`` or
    ``"flat"``."""
    lower = [(r, f) for f, s, r in zip(factors, sides, rise) if s == "lower"]
    if lower:
        return f"lower at {min(lower)[1]:g}x"
    if bounds[0] is not None and bounds[1] is not None:
        return "minimum"
    if bounds[1] is not None:
        return "bounded above"
    if bounds[0] is not None:
        return "bounded below"
    return "flat"
