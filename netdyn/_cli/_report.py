"""What ``netdyn fit`` writes and prints once the fit is done."""

import json
from pathlib import Path

import jax
import numpy as np

from .._fit.history import FitHistory, write_text_atomic
from ._plot import figure


def value(x):
    """A parameter as JSON: a float, or a list for a per-region one."""
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


def report(args, history: FitHistory, where, fitted, initial: list, train: dict,
           heldout: dict, scan: dict | None, target: np.ndarray, elapsed: float) -> dict:
    """The content of ``params.json``."""
    fitted_values = [value(x) for x in jax.tree.leaves(where(fitted))]
    names = list(history.params)
    iu = np.triu_indices(target.shape[0], k=1)
    return {
        "parameters": dict(zip(names, fitted_values)),
        "initial": dict(zip(names, initial)),
        **{k: train[k] for k in ("loss", "fc_r", "rmse", "mean_fc", "saturation")},
        "heldout": heldout,
        "grid": scan,
        "empirical_mean_fc": float(target[iu].mean()),
        "initial_loss": float(history.loss[0]),
        "initial_fc_r": float(history.metrics["fc_r"][0]),
        "steps": len(history),
        "best_step": history.best_step(),
        "seconds": elapsed,
        "settings": {k: v for k, v in vars(args).items() if k != "command"},
    }


def write_results(args, out: Path, result: dict, history: FitHistory, target, simulated,
                  simulated_heldout, title: str) -> bool:
    """Write every result file; whether the figure was written."""
    write_text_atomic(out / "params.json", json.dumps(result, indent=1))
    history.to_csv(out / "history.csv")
    history.to_json(out / "history.json")
    np.savetxt(out / "fc_simulated.csv", simulated, delimiter=",")
    np.savetxt(out / "fc_heldout.csv", simulated_heldout, delimiter=",")
    plotted = False
    if not args.no_plot:
        plotted = figure(out / "fit.png", history, target, simulated, simulated_heldout, title)
        if not plotted:
            print("netdyn fit: matplotlib is not installed, no figure "
                  "(pip install 'netdyn[plot]').")
    return plotted


def summary(out: Path, result: dict, n_steps: int, elapsed: float, plotted: bool) -> str:
    """The closing lines printed by ``netdyn fit``."""
    heldout = result["heldout"]
    values = ", ".join(
        f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = mean {np.mean(v):.4g}"
        for k, v in result["parameters"].items()
    )
    return (
        f"netdyn fit: {values}; loss {result['initial_loss']:.4g} -> {result['loss']:.4g}, "
        f"FC r {result['initial_fc_r']:.3f} -> {result['fc_r']:.3f} "
        f"(best of {n_steps} steps: {result['best_step']}; {elapsed:.0f} s).\n"
        f"netdyn fit: held-out (new noise): FC r {heldout['fc_r']:.3f}, mean FC "
        f"{heldout['mean_fc']:.3f} (empirical {result['empirical_mean_fc']:.3f}), "
        f"{100 * heldout['saturation']:.1f} % of pairs > 0.9. Wrote {out}/params.json, "
        "history.csv, history.json, fc_simulated.csv, fc_heldout.csv, checkpoint.eqx"
        + (", fit.png" if plotted else "")
    )
