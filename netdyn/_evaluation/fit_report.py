"""A fit of a preset as a report in the preset's units, steps counted from 1: the fit's own
metrics at its end, the history a person reads (``history.csv``) and the core of
``params.json`` (``netdyn fit``).

The library's ``FitHistory`` numbers steps from 0 and holds the network's values (for
``--model hopf`` in ms units); a person reading the progress line (``step 1/12``), the
summary, ``params.json`` and ``history.csv`` sees one numbering and the preset's units."""

import dataclasses

import numpy as np

from .._fit.history import FitHistory
from .._loss._base import AbstractFcLoss, evaluate_compiled
from .._presets.models import Preset


def at_fit(loss_fn: AbstractFcLoss, model, key) -> tuple[dict[str, float], np.ndarray]:
    """The fit's own metrics (``fc_r``, ``rmse``, ``mean_fc``, ``saturation``, ``loss``,
    and any the loss adds) and FC at ``model``: simulated with ``key`` as each step was,
    or the analytic FC, through the program the start's scan compiled (``evaluate_compiled``:
    for the linear engine, the same loss and model structure, so compiled once)."""
    loss, metrics, f = evaluate_compiled(loss_fn, model, key)
    out = {k: float(v) for k, v in metrics.items()}
    out["loss"] = float(loss)
    return out, np.asarray(f)


def value(x):
    """A parameter as JSON: a float, or a list for a per-region one."""
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


def history_in_units(history: FitHistory, preset: Preset) -> FitHistory:
    """``history`` with steps numbered from 1 and parameters in the ``preset``'s units."""
    return dataclasses.replace(
        history, step=history.step + 1,
        params={k: preset.in_preset_units(k, v) for k, v in history.params.items()},
    )


def fit_report(history: FitHistory, fitted_leaves, preset: Preset,
               metrics: tuple[dict, dict], scan: dict | None, target: np.ndarray,
               elapsed: float, engine: str, settings: dict, keep: str = "best") -> dict:
    """The report of a fit (the start of ``params.json``): the fitted and initial values
    (``fitted_leaves``, the network's, in ``history``'s order) in the preset's units, the
    fit's metrics and the held-out check's (``metrics``), the scan (``scan_record``), the
    target's mean FC, the loss at the start and at the best step, the seconds taken and the
    ``settings``. ``history`` is ``history_in_units``'s; ``keep`` is ``nd.fit``'s (with
    ``"average"``: ``averaged_steps``, the first and last step averaged, and no best step)."""
    train, heldout = metrics
    names = list(history.params)
    best = history.best_step() if keep == "best" else None
    averaged = history.average_rows() if keep == "average" else np.array([], int)
    iu = np.triu_indices(target.shape[0], k=1)
    return {
        "parameters": {k: value(preset.in_preset_units(k, np.asarray(x)))
                       for k, x in zip(names, fitted_leaves)},
        "initial": {k: value(history.params[k][0]) for k in names},
        # Network value = value here * factor (netdyn simulates in ms).
        "units": {k: preset.factor(k) for k in names},
        **{k: train[k] for k in ("loss", "fc_r", "rmse", "mean_fc", "saturation")},
        "heldout": heldout,
        "grid": None if scan is None else scan["grid"],
        "scan": None if scan is None else {k: scan.get(k) for k in ("bracket", "target_mean_fc")},
        "empirical_mean_fc": float(target[iu].mean()),
        "initial_loss": float(history.loss[0]),
        "initial_fc_r": float(history.metrics["fc_r"][0]),
        # The fit's own loss at its best step (with the linear engine: the analytic one; the
        # figures above are then the simulated model's).
        "engine": engine,
        "fit_loss": None if best is None else float(history.loss[best]),
        "fit_fc_r": None if best is None else float(history.metrics["fc_r"][best]),
        "steps": len(history),
        # As the progress line and history.csv: steps 1, 2, ...
        "best_step": None if best is None else int(history.step[best]),
        "averaged_steps": ([int(history.step[averaged[0]]), int(history.step[averaged[-1]])]
                           if averaged.size else None),
        "seconds": elapsed,
        "settings": settings,
    }
