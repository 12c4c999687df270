"""The fitted model's evaluations in ``netdyn fit``: its own FC at the fit (simulated, or
the analytic one), and the held-out check over noise sets, scored on the training and the
test subjects."""

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._loss._base import AbstractFcLoss
from .._loss.fc_loss import FcLoss
from .._observation.runs import runs_fc, score_runs
from .._persistence import interrupt
from ._data import FitData
from ._plan import fcd_samples
from ._uncertainty import heldout_keys, mean_and_spread


def evaluate(loss_fn: FcLoss, model, key) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    """Metrics (``fc_r``, ``rmse``, ``mean_fc``, ``saturation``, ``loss``), the FC (the
    mean of the realisations') and the signals ``[realisations, samples, nodes]``."""
    signals = np.asarray(_signals(loss_fn, model, key))
    simulated = runs_fc(signals)
    loss, metrics = loss_fn.loss_of_fc(jnp.asarray(simulated))
    out = {k: float(v) for k, v in metrics.items()}
    out["loss"] = float(loss)
    return out, simulated, signals


def analytic(loss_fn: AbstractFcLoss, model) -> tuple[dict[str, float], np.ndarray]:
    """Metrics (as ``evaluate``'s) and the FC of a deterministic loss (the analytic FC)."""
    loss, metrics, f = _analytic_point(loss_fn, model)
    out = {k: float(v) for k, v in metrics.items()}
    out["loss"] = float(loss)
    return out, np.asarray(f)


@eqx.filter_jit
def _analytic_point(loss_fn: AbstractFcLoss, model):
    loss, metrics = loss_fn(model, None)
    return loss, metrics, loss_fn.model_fc(model, None)


@eqx.filter_jit
def _signals(loss_fn: FcLoss, model, key):
    """``loss_fn.signals(model, key)``: the same realisations (keys ``fold_in(key, b)``).
    On a CPU they run one after the other: forward only, 4 realisations of rww-ei-fic ran
    at 36 us per member-step in sequence against 64 under ``vmap`` (56 with the
    batch-last loop) on 2 cores; other devices run them in parallel, as the loss does."""
    if jax.default_backend() != "cpu":
        return loss_fn.signals(model, key)
    keys = jax.vmap(lambda b: jax.random.fold_in(key, b))(jnp.arange(loss_fn.realisations))
    return jax.lax.map(lambda k: loss_fn.signal(model, k), keys)


def heldout_check(args, data: FitData, heldout_fn: FcLoss, fitted, key):
    """The held-out check over ``--heldout-sets`` noise sets: ``((mean metrics, their
    sd, each set's), the first set's FC, (mean run scores, their sd, each set's))``."""
    if not args.quiet:
        print(f"netdyn fit: held-out check, {args.heldout_sets} set(s) of "
              f"{args.heldout_realisations} x {args.heldout_duration / 1000:g} s with new "
              "noise ...", flush=True)
    metrics, scores, first = [], [], None
    for i, k in enumerate(heldout_keys(key, args.heldout_sets)):
        interrupt.check()
        start = time.perf_counter()
        m, fc_k, signals = evaluate(heldout_fn, fitted, k)
        first = fc_k if first is None else first
        metrics.append(m)
        scores.append(run_scores(args, data, signals))
        if not args.quiet and args.heldout_sets > 1:  # a long stage shows its progress
            test = "" if scores[-1] is None or "test" not in scores[-1] else (
                f", test subjects {scores[-1]['test']['fc_r']:.3f}")
            print(f"netdyn fit: held-out set {i + 1}/{args.heldout_sets}: FC r "
                  f"{m['fc_r']:.3f}{test} ({time.perf_counter() - start:.0f} s)", flush=True)
    runs = (*mean_and_spread(scores), scores) if scores[0] is not None else (None, None, None)
    return (*mean_and_spread(metrics), metrics), first, runs


# The fewest FCD windows a run must hold for the FCD to be scored.
FCD_WINDOWS = 3


def run_scores(args, data: FitData, signals: np.ndarray) -> dict | None:
    """The held-out simulation scored on the training and the test subjects (``score_runs``)."""
    if data.train is None:
        return None
    window, step = fcd_samples(args)
    # FCD windows count samples: compared only when the simulation samples as the data do,
    # and when every run holds FCD_WINDOWS windows (fewer, heavily overlapping windows give
    # a distribution that says more about the run's length than about the dynamics: 4 x 72
    # s held out, --quick's, scored KS 0.94 where 4 x 288 s scored 0.32).
    same_tr = data.tr is None or abs(data.tr - args.tr) <= 1e-6 * data.tr
    shortest = min(signals.shape[1], *(r.shape[0] for r in data.train + (data.test or [])))
    fcd_window = window if same_tr and FCD_WINDOWS * window <= shortest else None
    scores = {"train_subjects": list(data.train_subjects),
              "test_subjects": list(data.test_subjects),
              "fcd_window": fcd_window, "fcd_step": step,
              "fcd_skipped": None if fcd_window is not None else (
                  "the simulation's TR is not the data's" if not same_tr else
                  f"runs of {shortest} TRs hold fewer than {FCD_WINDOWS} FCD windows of "
                  f"{window} TRs"),
              "train": score_runs(signals, data.train, fcd_window=fcd_window, fcd_step=step)}
    if data.test:
        scores["test"] = score_runs(signals, data.test, train=data.train,
                                    fcd_window=fcd_window, fcd_step=step)
    return scores
