"""The loss at the held-out check's length along each fitted global value of a simulated
fit: what long simulations say about a parameter that the fit's own short, noisy loss may
not resolve.

Measured on ``--model rww``: its own FC made at sigma 0.0022 (4 x 288 s) was fitted with
sigma kept at its start 0.00283, the loss of 4 x 43.2 s per step showing no curvature along
it, while 4 x 288 s simulations at the two values differ by 0.16 in FC r and 0.09 in mean FC.
So the command looks along each value at the held-out length before calling it
unconstrained."""

import time

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._loss.fc_loss import FcLoss
from .._persistence import interrupt
from ._evaluation import evaluate
from ._model import Where, in_option_units, leaf, long_name
from ._uncertainty import heldout_keys

# The fitted value times these: -20 % and +25 % (the same step on a log scale).
FACTORS = (0.8, 1.25)
# A rise counts when it exceeds this many standard deviations of the held-out sets' loss
# (the spread of one set's loss over independent noise; the points here share their noise,
# which removes most of it from their differences, so the test is conservative).
RISE_SDS = 2.0


def long_check(args, heldout_fn: FcLoss, fitted, where: Where, key,
               heldout_each: list[dict]) -> dict | None:
    """The held-out loss (``heldout_fn``, the first held-out set's noise for every point:
    common random numbers) at ``FACTORS`` times each fitted global value, the others
    fixed, beside the loss at the fit; ``None`` for the analytic engine (deterministic:
    its Hessian is the whole answer) or without a fitted global value.

    ``{"parameters": {name: {"values", "loss", "fc_r", "mean_fc", "rise", "verdict"}},
    "loss_at_fit", "sets_sd", "seconds"}``; ``verdict`` is ``None`` with one held-out set
    (no spread to judge a change by), else ``_verdict``'s, with ``RISE_SDS`` times the
    sets' standard deviation as the threshold."""
    if args.engine == "linear" or not heldout_fn.stochastic:
        return None
    names = [n for n in where.names
             if n not in where.mapped and np.ndim(leaf(fitted, n)) == 0]
    if not names:
        return None
    if not args.quiet:
        print(f"netdyn fit: the loss along {', '.join(names)} at the held-out length ...",
              flush=True)
    start = time.perf_counter()
    k = heldout_keys(key, 1)[0]
    centre = heldout_each[0]["loss"]
    losses = [e["loss"] for e in heldout_each]
    sd = float(np.std(losses, ddof=1)) if len(losses) > 1 else None
    out = {}
    for name in names:
        value = leaf(fitted, name)
        points = []
        for f in FACTORS:
            interrupt.check()
            moved = eqx.tree_at(lambda m, n=name: leaf(m, n), fitted,
                                jnp.asarray(value * f, jnp.result_type(value)))
            points.append(evaluate(heldout_fn, moved, k)[0])
        rise = [p["loss"] - centre for p in points]
        full = long_name(name)
        out[full] = {
            "values": [float(in_option_units(args.model, full, value * f)) for f in FACTORS],
            "loss": [p["loss"] for p in points], "fc_r": [p["fc_r"] for p in points],
            "mean_fc": [p["mean_fc"] for p in points], "rise": rise,
            "verdict": None if sd is None else _verdict(rise, RISE_SDS * sd)}
    return {"factors": list(FACTORS), "parameters": out, "loss_at_fit": centre,
            "sets_sd": sd, "seconds": time.perf_counter() - start}


def _verdict(rise: list[float], threshold: float) -> str:
    """``"minimum"`` (the loss rises on both sides by more than ``threshold``),
    ``"lower at FACTORx"`` (it falls by more on that side: the long loss's minimum lies
    beyond the fitted value) or ``"flat"``."""
    i = int(np.argmin(rise))
    if rise[i] < -threshold:
        return f"lower at {FACTORS[i]:g}x"
    return "minimum" if min(rise) > threshold else "flat"


def long_check_line(check: dict | None) -> str:
    """The summary's line on the long check (empty without one)."""
    if check is None:
        return ""
    parts = []
    for name, p in check["parameters"].items():
        verdict = {None: "", "minimum": ", a minimum", "flat": ", flat at this length too"
                   }.get(p["verdict"], f", {p['verdict']}: the fit is off")
        parts.append(f"{name} {p['rise'][0]:+.3g} / {p['rise'][1]:+.3g}{verdict}")
    sd = check["sets_sd"]
    spread = ("one held-out set: no spread to judge by" if sd is None else
              f"the held-out sets' loss sd {sd:.2g}")
    factors = " and ".join(f"{f:g}x" for f in check["factors"])
    return (f"netdyn fit: loss at the held-out length at {factors} each fitted value, "
            f"against {check['loss_at_fit']:.4g} at the fit ({spread}; "
            f"{check['seconds']:.0f} s): {'; '.join(parts)}.\n")


def long_check_caution(check: dict | None, uncertainty: dict | None) -> str | None:
    """A caution (``None`` if none) when simulations as long as the held-out check put a
    parameter's minimum away from the fitted value, or constrain one the error bars left
    unresolved."""
    if check is None:
        return None
    off = [f"{n} ({p['verdict']})" for n, p in check["parameters"].items()
           if (p["verdict"] or "").startswith("lower")]
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
            if n in free and p["verdict"] not in (None, "flat")]
