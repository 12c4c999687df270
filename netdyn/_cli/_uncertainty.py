"""Error bars of ``netdyn fit``: whether and from what the fitted parameters' intervals are
computed (``--uncertainty``: noise keys and left-out training subjects;
``uncertainty_report``), and the held-out check's noise stream."""

import jax
import numpy as np

from .._evaluation.fit_uncertainty import uncertainty_report
from .._inference.leave_one_out import leave_one_run_out
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
    return uncertainty_report(loss_fn, fitted, where, bounds, key, MODELS[args.model], keys,
                              leave, None if leave is None else data.train_subjects,
                              _unresolved(args, loss_fn))


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
