"""Error bars of ``netdyn fit``: the fitted parameters' intervals (``nd.uncertainty``: noise
keys and left-out training subjects), G's profile, and the held-out check's noise stream."""

import time

import jax
import numpy as np

from .._inference.leave_one_out import leave_one_run_out
from .._inference.profile import INTERVAL_STEPS, interval_profile
from .._inference.uncertainty import uncertainty
from .._loss._base import AbstractFcLoss
from ._data import FitData
from ._model import MODELS

HELDOUT_STREAM = 2**31 - 1  # the held-out noise: a stream of the seed no fit step uses
UNCERTAINTY_STREAM = 2**31 - 2  # the noise keys of the parameters' error bars
AUTO_COORDINATES = 8  # --uncertainty auto: computed up to this many fitted values


def heldout_key(key):
    """The held-out check's key (``nd.heldout_scores`` derives each noise set's from it;
    the first set's is this one, as in earlier versions, so its results are unchanged)."""
    return jax.random.fold_in(key, HELDOUT_STREAM)


def parameter_uncertainty(args, data: FitData, loss_fn: AbstractFcLoss, fitted, where, bounds,
                          key) -> dict:
    """``nd.uncertainty`` at the fitted parameters (``--uncertainty``,
    ``--uncertainty-keys``), in the units of the options; ``{"skipped": why}`` when off."""
    n = sum(int(np.size(x)) for x in jax.tree.leaves(where(fitted)))
    if args.uncertainty == "off":
        return {"skipped": "--uncertainty off"}
    if args.uncertainty == "auto" and n > AUTO_COORDINATES:
        return {"skipped": f"{n} fitted values, more than {AUTO_COORDINATES}: --uncertainty "
                f"on computes them ({n} Hessian-vector products, about {3 * n} gradients)"}
    base = jax.random.fold_in(key, UNCERTAINTY_STREAM)
    # A deterministic (analytic) loss has no noise part.
    keys = [jax.random.fold_in(base, k) for k in range(args.uncertainty_keys)
            ] if loss_fn.stochastic else []
    leave = (leave_one_run_out(loss_fn, data.train)
             if data.train is not None and len(data.train) >= 2 else None)
    if not keys and leave is None:
        return {"skipped": "the loss is deterministic (--engine linear) and there are fewer "
                "than 2 training subjects to leave out: no spread to measure"}
    start = time.perf_counter()
    u = uncertainty(loss_fn, fitted, where, key=key, noise_keys=keys or None,
                    leave_one_out=leave, bounds=bounds)
    out = u.in_units(MODELS[args.model].factor).as_dict()
    out.update(seconds=time.perf_counter() - start, noise_keys=len(keys),
               runs_left_out=None if leave is None else list(data.train_subjects),
               unresolved=_unresolved(args, loss_fn))
    out["profile"] = _G_profile(args, loss_fn, fitted, where, bounds, key, u, out)
    return out


def _unresolved(args, loss_fn: AbstractFcLoss) -> str:
    """What a flat or negative curvature of the fit's loss along a parameter means, in
    words. A simulated loss's curvature is that of a few short noisy simulations: near the
    bifurcation it can miss what long ones show (measured on rww: ``nd.long_check``'s text,
    the long check). So only the analytic loss's flatness is said to be the data's."""
    if not loss_fn.stochastic:
        return "not constrained by the analytic FC"
    return (f"not resolved by the fit's loss ({args.realisations} x "
            f"{args.duration / 1000:g} s per evaluation): whether the data constrain it "
            "needs longer simulations, e.g. a grid along it at the held-out check's length")


def has_interval(name: str, u: dict | None) -> bool:
    """Whether the report's ``uncertainty`` gave ``name`` an interval (its curvature seen)."""
    if not u or not u.get("valid") or name not in u["names"]:
        return False
    return bool(u["constrained"][u["names"].index(name)])


def G_interval(u: dict | None) -> tuple[float, float, float] | None:
    """The fitted G and its interval, ``(G, lower, upper)`` in the units of ``--G``, from
    the report's ``uncertainty``; ``None`` when G has none."""
    if not has_interval("coupling.G", u):
        return None
    i = u["names"].index("coupling.G")
    return u["values"][i], u["lower"][i], u["upper"][i]


def _G_profile(args, loss_fn: AbstractFcLoss, fitted, where, bounds, key, u,
               reported: dict) -> dict | None:
    """The loss along G across its interval of ``u`` (``nd.interval_profile``: the other
    fitted values moved as the Hessian says), beside the quadratic model the interval rests
    on, G in the units of ``--G``; ``None`` without an interval for G (``reported``)."""
    if not has_interval("coupling.G", reported):
        return None
    start = time.perf_counter()
    prof = interval_profile(loss_fn, fitted, where, u, "coupling.G", key=key, bounds=bounds)
    ratio = prof.rise_ratio(INTERVAL_STEPS.index(0.0))  # 1 where the quadratic model holds
    return {"G": (prof.values / MODELS[args.model].factor("coupling.G")).tolist(),
            "loss": prof.loss.tolist(), "quadratic": prof.quadratic.tolist(),
            "steps": list(INTERVAL_STEPS),
            "rise_ratio": [None if f == 0 or not np.isfinite(r) else float(r)
                           for f, r in zip(INTERVAL_STEPS, ratio)],
            "seconds": time.perf_counter() - start}


def profile_text(p: dict) -> str:
    """G's profile in words: the loss's rise over the quadratic model's at each point."""
    pairs = [(f, r) for f, r in zip(p["steps"], p["rise_ratio"]) if r is not None]
    at = ", ".join(f"{f:+g}" for f, _ in pairs)
    ratios = ", ".join(f"{r:.2g}" for _, r in pairs)
    return (f"profile of G ({len(p['G'])} points, {p['seconds']:.0f} s; fit.png): the "
            "loss's rise from the fit over that of the quadratic model the interval rests "
            f"on (1 where it holds), at {at} half-widths of the interval: {ratios}")


def _label(name: str, map_names: list[str]) -> str:
    """A coefficient along a map named by its map: ``....coefficients[1] (fc-gradient)``."""
    base, _, index = name.partition("[")
    if base.endswith(".coefficients") and index[:-1].isdigit():
        k = int(index[:-1])
        if k < len(map_names):
            return f"{name} ({map_names[k]})"
    return name


# What the summary says of a value without an interval whose long check is flat too: the
# fit's short loss and simulations as long as the held-out check agree (measured on rww's
# sigma along the level: benchmarks/sigma_long.md, recovery.md).
AGREED_FLAT = ("not constrained by the FC here: flat along it at the fit's length and at "
               "the held-out length (the long check below)")


def uncertainty_line(u: dict | None, map_names: list[str] = (),
                     long_check: dict | None = None) -> str:
    """The summary's line of intervals (or why there are none); a map's coefficient whose
    interval holds 0 is said to be so (the data do not tell it from a flat map). A value
    without an interval is "not resolved by the fit's loss" (``u["unresolved"]``) unless
    ``long_check`` (the report's) found it flat at the held-out length too: then both
    agree that the FC does not constrain it (``AGREED_FLAT``)."""
    flat = {n for n, p in ((long_check or {}).get("parameters") or {}).items()
            if p.get("verdict") == "flat"}
    if u is None:
        return ""
    if "skipped" in u:
        return f"netdyn fit: parameter intervals skipped ({u['skipped']}).\n"
    if not u["valid"]:
        return f"netdyn fit: no parameter intervals: {u['note']} ({u['seconds']:.0f} s).\n"
    parts = []
    for name, v, lo, hi, ok in zip(u["names"], u["values"], u["lower"], u["upper"],
                                   u["constrained"]):
        label = _label(name, list(map_names))
        zero = " (holds 0: no evidence for the map)" if (
            ok and label != name and lo <= 0 <= hi) else ""
        why = AGREED_FLAT if name in flat else u.get("unresolved", "not constrained")
        parts.append(f"{label} {v:.4g} [{lo:.4g}, {hi:.4g}]{zero}" if ok else
                     f"{label} {v:.4g} ({why}: no interval)")
    sources = [f"noise over {u['noise_keys']} keys"] if u["noise_keys"] else []
    if u["runs_left_out"]:
        sources.append(f"leaving out each of the {len(u['runs_left_out'])} training subjects")
    sources = ", ".join(sources)
    sloppy = ("; barely constrained: " + "; ".join(u["sloppy"])) if u["sloppy"] else ""
    p = u.get("profile")
    profile = "" if p is None else "; " + profile_text(p)
    return (f"netdyn fit: {100 * u['level']:.0f} % intervals ({sources}; "
            f"{u['seconds']:.0f} s): {', '.join(parts)}{sloppy}{profile}.\n")
