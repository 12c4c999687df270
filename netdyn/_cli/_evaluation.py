"""The fitted model's evaluations in ``netdyn fit``: its own FC at the fit (simulated, or
the analytic one), the held-out check over noise sets (``nd.heldout_scores``), scored
on the training and the test subjects, and the long check: the loss at the held-out
check's length along each fitted global value of a simulated fit, what long simulations
say about a parameter that the fit's own short, noisy loss may not resolve.

Measured on ``--model rww``: its own FC made at sigma 0.0022 (4 x 288 s) was fitted with
sigma kept at its start 0.00283, the loss of 4 x 43.2 s per step showing no curvature along
it, while 4 x 288 s simulations at the two values differ by 0.16 in FC r and 0.09 in mean FC.
So the command looks along each value at the held-out length before calling it
unconstrained.

With G fitted as well, a value such as sigma is looked at along its profile, not a slice:
G is moved back onto the fit's FC level at each point (one secant step in G from the
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

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._evaluation.heldout import heldout_scores, mean_and_sd
from .._loss._base import AbstractFcLoss, evaluate_compiled
from .._loss.fc_loss import FcLoss
from .._persistence import interrupt
from ._data import FitData
from ._model import Where, in_option_units, leaf, long_name
from ._plan import fcd_samples
from ._uncertainty import has_interval, heldout_key

# The fitted value times these: -20 % and +25 % (the same step on a log scale).
FACTORS = (0.8, 1.25)
# The step in G (relative) that measures the level's slope for re-levelling, and the
# largest move of G (relative) one re-levelling may make: the band of G where the
# single-population model's FC lives is a few thousandths wide.
LEVEL_STEP, LEVEL_MOVE = 0.002, 0.05
# A change counts when every held-out set agrees on its sign and its mean exceeds this
# many standard errors (over the sets) of the mean. Each set compares the points with its
# own noise (common random numbers): near the bifurcation one set's loss differs from
# another's by far more than the points of one set differ from each other (rww at G
# 0.221, sigma 0.00283, against an FC made at sigma 0.0022: the two sets' losses 0.39 and
# 0.12, while sigma x 0.8 lowered the first set's by 0.22).
RISE_SES = 2.0


def at_fit(loss_fn: AbstractFcLoss, model, key) -> tuple[dict[str, float], np.ndarray]:
    """The fit's own metrics (``fc_r``, ``rmse``, ``mean_fc``, ``saturation``, ``loss``,
    and any the loss adds) and FC at ``model``: simulated with ``key`` as each step was,
    or the analytic FC, through the program the start's scan compiled (``evaluate_compiled``:
    for the linear engine, the same loss and model structure, so compiled once)."""
    loss, metrics, f = evaluate_compiled(loss_fn, model, key)
    out = {k: float(v) for k, v in metrics.items()}
    out["loss"] = float(loss)
    return out, np.asarray(f)


def heldout_check(args, data: FitData, heldout_fn: FcLoss, fitted, key):
    """The held-out check over ``--heldout-sets`` noise sets (``nd.heldout_scores``):
    ``((mean metrics, their sd, each set's), the first set's FC, (mean run scores, their
    sd, each set's))``."""
    if not args.quiet:
        print(f"netdyn fit: held-out check, {args.heldout_sets} set(s) of "
              f"{args.heldout_realisations} x {args.heldout_duration / 1000:g} s with new "
              "noise ...", flush=True)
    window, step = fcd_samples(args)
    # FCD windows count samples: compared only when the simulation samples as the data do.
    same_tr = data.tr is None or abs(data.tr - args.tr) <= 1e-6 * data.tr
    clock = [time.perf_counter()]

    def progress(i, one):
        interrupt.check()
        if not args.quiet and args.heldout_sets > 1:  # a long stage shows its progress
            test = f", test subjects {one['test']['fc_r']:.3f}" if data.test else ""
            print(f"netdyn fit: held-out set {i + 1}/{args.heldout_sets}: FC r "
                  f"{one['fit']['fc_r']:.3f}{test} ({time.perf_counter() - clock[0]:.0f} s)",
                  flush=True)
        clock[0] = time.perf_counter()

    interrupt.check()
    test, train = (data.test, data.train) if data.test else (data.train, None)
    result = heldout_scores(heldout_fn, fitted, key=heldout_key(key), sets=args.heldout_sets,
                            test=test, train=train, fcd_window=window if same_tr else None,
                            fcd_step=step, on_set=progress)
    metrics = [one["fit"] for one in result.sets]
    if data.train is None:
        return (*mean_and_sd(metrics), metrics), result.fc, (None, None, None)
    skipped = "the simulation's TR is not the data's" if not same_tr else result.fcd_skipped
    scores = [{"train_subjects": list(data.train_subjects),
               "test_subjects": list(data.test_subjects),
               "fcd_window": None if skipped else window, "fcd_step": step,
               "fcd_skipped": skipped,
               **({"train": one["train"], "test": one["test"]} if data.test
                  else {"train": one["test"]})}
              for one in result.sets]
    return (*mean_and_sd(metrics), metrics), result.fc, (*mean_and_sd(scores), scores)


def long_check(args, heldout_fn: FcLoss, fitted, where: Where, key,
               heldout_each: list[dict], uncertainty: dict | None = None) -> dict | None:
    """The held-out loss (``heldout_fn``, each held-out set's noise in turn) at
    ``FACTORS`` times each fitted global value, the others fixed, beside that set's loss
    at the fit; ``None`` for the analytic engine (deterministic: its Hessian is the whole
    answer), with fewer than 2 held-out sets, or without a fitted global value left
    without an interval by the error bars (``uncertainty``, the command's report of them:
    each value it gave no interval, every value when it gave none or was skipped).

    ``{"factors", "parameters": {name: {"values", "rise", "rise_each", "fc_r",
    "mean_fc", "verdict"}}, "loss_at_fit", "seconds"}``: ``rise`` the mean over the sets
    of the loss's change from the fit, ``rise_each`` each set's, ``fc_r`` and ``mean_fc``
    the means over the sets; ``verdict`` ``_verdict``'s."""
    if args.engine == "linear" or not heldout_fn.stochastic or len(heldout_each) < 2:
        return None  # one set has no spread to judge a change by
    names = [n for n in where.names if n not in where.mapped
             and np.ndim(leaf(fitted, n)) == 0 and not has_interval(long_name(n), uncertainty)]
    if not names:
        return None
    if not args.quiet:
        print(f"netdyn fit: the loss along {', '.join(names)} at the held-out length "
              f"({len(heldout_each)} set(s)) ...", flush=True)
    start = time.perf_counter()
    centres = np.array([e["loss"] for e in heldout_each])
    level = _mean(heldout_each, "mean_fc")

    def scores(model) -> list[dict]:
        """The loss and metrics of each held-out set (its own noise) at ``model``."""
        interrupt.check()
        result = heldout_scores(heldout_fn, model, key=heldout_key(key),
                                sets=len(heldout_each), on_set=lambda i, one: interrupt.check())
        return [one["fit"] for one in result.sets]

    out = {}
    for name in names:
        value = leaf(fitted, name)
        profile = name != "G" and "G" in where.names and "G" not in where.mapped
        points, Gs = [], []  # points: [factor][set], each set with its own noise
        for f in FACTORS:
            moved = eqx.tree_at(lambda m, n=name: leaf(m, n), fitted,
                                jnp.asarray(value * f, jnp.result_type(value)))
            row = scores(moved)
            if profile:
                moved, row = _relevel(moved, row, level, scores)
                Gs.append(float(in_option_units(args.model, "coupling.G", leaf(moved, "G"))))
            points.append(row)
        rise_each = np.array([[p["loss"] for p in row] for row in points]) - centres
        full = long_name(name)
        out[full] = {
            "values": [float(in_option_units(args.model, full, value * f)) for f in FACTORS],
            "rise": rise_each.mean(axis=1).tolist(), "rise_each": rise_each.tolist(),
            "fc_r": [_mean(row, "fc_r") for row in points],
            "mean_fc": [_mean(row, "mean_fc") for row in points],
            "verdict": _verdict(rise_each), "G": Gs if profile else None}
    return {"factors": list(FACTORS), "parameters": out,
            "loss_at_fit": float(centres.mean()), "seconds": time.perf_counter() - start}


def _relevel(model, row: list[dict], level: float, scores):
    """``(model, its scores)`` with G moved back onto the mean FC ``level`` (the fit's, at
    the held-out length): one secant step from the slope of the mean FC over a step of
    ``LEVEL_STEP`` in G, the move at most ``LEVEL_MOVE`` of G; ``model`` and ``row``
    unchanged where the slope is zero or not finite."""
    G = leaf(model, "G")
    g = float(G)

    def at(x):
        return eqx.tree_at(lambda m: leaf(m, "G"), model, jnp.asarray(x, jnp.result_type(G)))

    h = LEVEL_STEP * g
    slope = (_mean(scores(at(g + h)), "mean_fc") - _mean(row, "mean_fc")) / h
    if not (np.isfinite(slope) and slope != 0):
        return model, row
    move = float(np.clip((level - _mean(row, "mean_fc")) / slope, -LEVEL_MOVE * g, LEVEL_MOVE * g))
    relevelled = at(g + move)
    return relevelled, scores(relevelled)


def _mean(rows: list[dict], key: str) -> float:
    """The mean of ``key`` over ``rows`` (the held-out sets' metrics)."""
    return float(np.mean([r[key] for r in rows]))


def _verdict(rise_each: np.ndarray) -> str:
    """From the changes ``[factor, set]``: ``"lower at FACTORx"`` (every set lower there,
    the mean by more than ``RISE_SES`` standard errors: the long loss's minimum lies
    beyond the fitted value), ``"minimum"`` (every set higher on both sides, each mean by
    more than that) or ``"flat"`` (within the noise)."""
    mean = rise_each.mean(axis=1)
    se = rise_each.std(axis=1, ddof=1) / np.sqrt(rise_each.shape[1])
    for i in np.argsort(mean):
        if np.all(rise_each[i] < 0) and mean[i] < -RISE_SES * se[i]:
            return f"lower at {FACTORS[i]:g}x"
    if np.all(rise_each > 0) and np.all(mean > RISE_SES * se):
        return "minimum"
    return "flat"


def long_check_line(check: dict | None) -> str:
    """The summary's line on the long check (empty without one)."""
    if check is None:
        return ""
    parts = []
    for name, p in check["parameters"].items():
        verdict = {"minimum": ", a minimum",
                   "flat": ", flat within this length's noise"
                   }.get(p["verdict"], f", {p['verdict']}: the fit is off")
        profile = ("" if not p.get("G") else
                   f" (G re-levelled to {p['G'][0]:.4g} / {p['G'][1]:.4g})")
        parts.append(f"{name} {p['rise'][0]:+.3g} / {p['rise'][1]:+.3g}{profile}{verdict}")
    sets = len(next(iter(check["parameters"].values()))["rise_each"][0])
    spread = f"mean over {sets} held-out sets, each with its own noise"
    factors = " and ".join(f"{f:g}x" for f in check["factors"])
    return (f"netdyn fit: change of the loss at the held-out length at {factors} each "
            f"fitted value, from {check['loss_at_fit']:.4g} at the fit ({spread}; "
            f"{check['seconds']:.0f} s): {'; '.join(parts)}.\n")


def long_check_caution(check: dict | None, uncertainty: dict | None) -> str | None:
    """A caution (``None`` if none) when simulations as long as the held-out check put a
    parameter's minimum away from the fitted value, or constrain one the error bars left
    unresolved."""
    if check is None:
        return None
    off = [f"{n} ({p['verdict']})" for n, p in check["parameters"].items()
           if p["verdict"].startswith("lower")]
    missed = [n for n in _missed(check, uncertainty) if n not in check["parameters"] or
              not check["parameters"][n]["verdict"].startswith("lower")]
    parts = []
    if off:
        parts.append(f"at the held-out length the loss is lower away from the fitted "
                     f"{', '.join(off)}: the fit's short, noisy loss missed its minimum")
    if missed:
        parts.append(f"{', '.join(missed)}: unresolved by the fit's loss, but simulations as "
                     "long as the held-out check constrain "
                     f"{'it' if len(missed) == 1 else 'them'}")
    if not parts:
        return None
    return "; ".join(parts) + " (fit with a longer --duration or more --realisations)"


def _missed(check: dict, uncertainty: dict | None) -> list[str]:
    """The parameters the error bars found unconstrained that the long check finds
    constrained."""
    if not uncertainty or "names" not in uncertainty:
        return []
    free = {n for n, ok in zip(uncertainty["names"], uncertainty["constrained"]) if not ok}
    return [n for n, p in check["parameters"].items()
            if n in free and p["verdict"] != "flat"]
