"""A fit's error bars as its report records them (``params.json``'s ``uncertainty``):
``nd.uncertainty`` at the fit in a preset's units, with what it was measured from, and
the loss along G across G's interval (``nd.interval_profile``)."""

import time
from collections.abc import Sequence

import numpy as np

from .._inference.profile import INTERVAL_STEPS, interval_profile
from .._inference.uncertainty import Uncertainty, uncertainty
from .._loss._base import AbstractFcLoss
from .._presets.models import Preset
from .interval_text import has_interval


def uncertainty_report(loss_fn: AbstractFcLoss, fitted, where, bounds, key, preset: Preset,
                       noise_keys: list, leave_one_out, subjects: Sequence[int] | None,
                       unresolved: str) -> dict:
    """``nd.uncertainty`` at ``fitted`` (``noise_keys``, ``leave_one_out`` as there) as a
    dict in the ``preset``'s units, with its ``seconds``, the number of noise keys, the
    training ``subjects`` left out (``runs_left_out``), ``unresolved`` (what a value
    without an interval is said to be) and G's ``profile`` (``None`` without an interval
    for G)."""
    start = time.perf_counter()
    u = uncertainty(loss_fn, fitted, where, key=key, noise_keys=noise_keys or None,
                    leave_one_out=leave_one_out, bounds=bounds)
    out = u.in_units(preset.factor).as_dict()
    out.update(seconds=time.perf_counter() - start, noise_keys=len(noise_keys),
               runs_left_out=None if subjects is None else list(subjects),
               unresolved=unresolved)
    out["profile"] = (_G_profile(loss_fn, fitted, where, bounds, key, u, preset)
                      if has_interval("coupling.G", out) else None)
    return out


def _G_profile(loss_fn: AbstractFcLoss, fitted, where, bounds, key, u: Uncertainty,
               preset: Preset) -> dict:
    """The loss along G across its interval of ``u`` (``nd.interval_profile``: the other
    fitted values moved as the Hessian says), beside the quadratic model the interval rests
    on, G in the ``preset``'s units, and the loss's rise over the model's at each point."""
    start = time.perf_counter()
    prof = interval_profile(loss_fn, fitted, where, u, "coupling.G", key=key, bounds=bounds)
    ratio = prof.rise_ratio(INTERVAL_STEPS.index(0.0))  # 1 where the quadratic model holds
    return {"G": (prof.values / preset.factor("coupling.G")).tolist(),
            "loss": prof.loss.tolist(), "quadratic": prof.quadratic.tolist(),
            "steps": list(INTERVAL_STEPS),
            "rise_ratio": [None if f == 0 or not np.isfinite(r) else float(r)
                           for f, r in zip(INTERVAL_STEPS, ratio)],
            "seconds": time.perf_counter() - start}
