"""What ``netdyn fit`` writes and prints, in the units of its options, steps counted from 1:
the result files and the closing lines (also ``netdyn summary DIR``, from ``params.json``).

The library's ``FitHistory`` numbers steps from 0 and holds the network's values (for
``--model hopf`` in ms units); a person reading the progress line (``step 1/12``), the
summary, ``params.json`` and ``history.csv`` sees one numbering and the units of ``--G``
and ``--sigma``.
"""

import dataclasses
from pathlib import Path

import equinox as eqx
import numpy as np

from .._evaluation.heldout import heldout_cautions
from .._evaluation.long_check import long_check_caution, long_check_text
from .._fit.errors import FitDivergedError
from .._fit.history import FitHistory
from .._persistence.atomic import all_or_none, write_atomic, write_figure, write_matrix
from .._persistence.strict_json import read_json_object, write_json
from .._plot.fit_figure import fit_figure
from .._search.scan_record import scan_no_crossing_text
from ._model import MODELS
from ._run_folder import CHECKPOINT, MODEL, RESULTS, SCAN, settings
from ._uncertainty import G_interval, uncertainty_line

# What write_results writes: the results of a finished fit.
RESULT_FILES = tuple(name for name in RESULTS if name not in (CHECKPOINT, SCAN))


def value(x):
    """A parameter as JSON: a float, or a list for a per-region one."""
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


def for_people(history: FitHistory, model: str) -> FitHistory:
    """``history`` with steps numbered from 1 and parameters in the units of the options."""
    units = MODELS[model].in_preset_units
    return dataclasses.replace(
        history, step=history.step + 1,
        params={k: units(k, v) for k, v in history.params.items()},
    )


def report(args, history: FitHistory, fitted_leaves, metrics: tuple[dict, dict],
           scan: dict | None, target: np.ndarray, elapsed: float) -> dict:
    """The content of ``params.json``, from the history of ``for_people``."""
    train, heldout = metrics
    names = list(history.params)
    model = MODELS[args.model]
    best = history.best_step()
    used = settings(args)
    # The values this run used, in the units given (not the null of an omitted option).
    used["G"] = scan["start"] if scan is not None else (model.G if args.G is None else args.G)
    used["sigma"] = model.sigma if args.sigma is None else args.sigma
    iu = np.triu_indices(target.shape[0], k=1)
    return {
        "parameters": {k: value(model.in_preset_units(k, np.asarray(x)))
                       for k, x in zip(names, fitted_leaves)},
        "initial": {k: value(history.params[k][0]) for k in names},
        # Network value = value here * factor (netdyn simulates in ms).
        "units": {k: model.factor(k) for k in names},
        **{k: train[k] for k in ("loss", "fc_r", "rmse", "mean_fc", "saturation")},
        "heldout": heldout,
        "grid": None if scan is None else scan["grid"],
        "scan": None if scan is None else {k: scan.get(k) for k in ("bracket", "target_mean_fc")},
        "empirical_mean_fc": float(target[iu].mean()),
        "initial_loss": float(history.loss[0]),
        "initial_fc_r": float(history.metrics["fc_r"][0]),
        # The fit's own loss at its best step (with --engine linear: the analytic one; the
        # figures above are then the simulated model's).
        "engine": args.engine,
        "fit_loss": None if best is None else float(history.loss[best]),
        "fit_fc_r": None if best is None else float(history.metrics["fc_r"][best]),
        "steps": len(history),
        # As the progress line and history.csv: steps 1, 2, ...
        "best_step": None if best is None else int(history.step[best]),
        "seconds": elapsed,
        "settings": used,
    }


def write_history(out: Path, history: FitHistory) -> None:
    """``history.csv`` and ``history.json`` (``FitHistory`` writes both atomically, with
    the same helper as ``_persistence/atomic.py``), both or neither."""
    with all_or_none(out, ("history.csv", "history.json")):
        history.to_csv(out / "history.csv")
        history.to_json(out / "history.json")


def write_results(args, out: Path, result: dict, history: FitHistory, empirical, simulated,
                  simulated_heldout, title: str, fitted) -> bool:
    """Write every result file (each atomically); whether the figure was written.
    ``empirical``: ``(target, test)``, the FC fitted and that of the test subjects (or
    ``None``); ``fitted``: the fitted network (``model.eqx``, its leaves). All of them or
    none: on a failure (a full disk) the result files are removed, ``params.json``
    (written last) included, and the checkpoint stays."""
    with all_or_none(out, RESULT_FILES):
        write_atomic(out / MODEL, lambda f: eqx.tree_serialise_leaves(f, fitted))
        write_history(out, history)
        write_matrix(out / "fc_simulated.csv", simulated)
        write_matrix(out / "fc_heldout.csv", simulated_heldout)
        plotted = _write_figure(args, out, result, history, empirical, (simulated,
                                simulated_heldout), title)
        write_json(out / "params.json", result)
    return plotted


def _write_figure(args, out: Path, result: dict, history: FitHistory, empirical,
                  simulated: tuple, title: str) -> bool:
    """``fit.png`` unless ``--no-plot`` or without matplotlib; whether it was written."""
    if args.no_plot:
        return False
    fig = fit_figure(history, empirical[0], *simulated, test=empirical[1], title=title,
                     scan=result["grid"], runs=result.get("runs"),
                     interval=G_interval(result.get("uncertainty")),
                     profile=(result.get("uncertainty") or {}).get("profile"),
                     heldout_each=result.get("heldout_each"),
                     runs_each=result.get("runs_each"),
                     analytic=result.get("engine") == "linear")
    if fig is None:
        print("netdyn fit: matplotlib is not installed, no figure "
              "(pip install 'netdyn[plot]').")
        return False
    write_figure(out / "fit.png", fig)
    return True


def no_crossing_message(scan: dict, out: Path) -> str:
    """Why there is no fit when no scanned G reaches the data's mean FC."""
    return (f"netdyn fit: error: no usable fit: {scan_no_crossing_text(scan)}; the scan is in "
            f"{out}/scan.json. The model cannot reach the FC's level here: change --sigma, the "
            "model's parameters or --speed, check the weights' scale (--normalise), or give "
            "--G to fit from a start of your own.")


def cautions(result: dict) -> list[str]:
    """What makes the result doubtful, in words (empty when nothing does): the held-out
    FC's (``nd.heldout_cautions``), the long check's and the gradient check's."""
    out = heldout_cautions(result["heldout"], result["empirical_mean_fc"])
    check, u = result.get("long_check"), result.get("uncertainty") or {}
    free = [n for n, ok in zip(u.get("names", ()), u.get("constrained", ())) if not ok]
    missed = None if check is None else long_check_caution(check, free)
    if missed is not None:
        out.append(missed + " (fit with a longer --duration or more --realisations)")
    check = result.get("gradient_check")
    if check is not None and check["settled"] and not check["agree"]:
        out.append(f"at the start the gradient ({check['gradient']:.4g} along a random "
                   f"direction) disagreed with finite differences "
                   f"({check['finite_difference']:.4g})")
    return out


def diverged_message(args, e: FitDivergedError, out: Path) -> str:
    """One line: where the fit stopped, what is kept, which options to change."""
    h = for_people(e.history, args.model)
    params = ", ".join(f"{k.split('.')[-1]} = {float(np.mean(v[-1])):.4g}"
                       for k, v in h.params.items())
    return (f"netdyn fit: error: the loss or its gradient is not finite at step {e.step + 1} of "
            f"{args.steps} ({params}); {out}/history.csv holds the steps so far and "
            f"{out}/checkpoint.eqx the last good parameters. Start again with a smaller --lr "
            f"(now {args.lr:g}), another start (--G, --sigma) or fewer parameters in --fit, "
            "with --overwrite or another --out.")


def _fcd(scores: dict, sd: dict) -> str:
    return f", FCD KS {_pm(scores, sd, 'fcd_ks')}" if "fcd_ks" in scores else ""


def _runs_line(runs: dict | None, runs_sd: dict | None) -> str:
    """The line on the test subjects (and the training subjects) for ``summary``; ``± sd`` over
    the held-out noise sets where there are several."""
    if runs is None:
        return ""
    t, sd = runs.get("test"), runs_sd or {}
    train, train_sd = runs["train"], sd.get("train", {})
    names = ",".join(map(str, runs["test_subjects"]))
    if t is None:
        return (f"netdyn fit: no test subjects; on the training subjects "
                f"{','.join(map(str, runs['train_subjects']))}: FC r "
                f"{_pm(train, train_sd, 'fc_r')}{_fcd(train, train_sd)}.\n")
    t_sd = sd.get("test", {})
    return (f"netdyn fit: test subjects {names} (never fitted), held-out simulation: FC r "
            f"{_pm(t, t_sd, 'fc_r')} = {100 * t['fraction_of_ceiling']:.0f} % of the noise "
            f"ceiling {t['ceiling']:.3f} (r between training and test FC), mean FC "
            f"{_pm(t, t_sd, 'mean_fc')} (test subjects {t['empirical_mean_fc']:.3f}, training "
            f"{train['empirical_mean_fc']:.3f}){_fcd(t, t_sd)}; training subjects: FC r "
            f"{_pm(train, train_sd, 'fc_r')}{_fcd(train, train_sd)}"
            + (f" (FCD not scored: {runs['fcd_skipped']})" if runs.get("fcd_skipped") else "")
            + ".\n")


def _parameter_text(name: str, v, map_names: list[str]) -> str:
    """``name = value``: a scalar, each map's coefficient, or a per-region spread (a
    ``RegionalDeviation``'s deviations with their mean removed, as the model applies
    them: their raw mean has no effect)."""
    if isinstance(v, float):
        return f"{name} = {v:.4g}"
    if name.endswith(".coefficients") and len(v) == len(map_names):
        return f"{name} = " + ", ".join(f"{c:+.4g} {m}" for c, m in zip(v, map_names))
    v = np.asarray(v, dtype=float)
    if name.endswith(".deviations"):
        v = v - v.mean()
        return (f"{name} (mean removed) sd {v.std():.3g}, from {v.min():.3g} to "
                f"{v.max():.3g}")
    return f"{name} = mean {v.mean():.4g}, sd {v.std():.3g}"


def _pm(values: dict, sd: dict, key: str, digits: int = 3) -> str:
    """``value ± sd`` (just the value without a spread)."""
    text = f"{values[key]:.{digits}f}"
    return text + (f" ± {sd[key]:.{digits}f}" if sd.get(key) else "")


def _sets(result: dict) -> str:
    n = result.get("heldout_sets") or 1
    return "1 set" if n == 1 else f"mean ± sd over {n} sets"


def summary(out: Path, result: dict, plotted: bool) -> str:
    """The closing lines printed by ``netdyn fit``."""
    heldout, sd = result["heldout"], result.get("heldout_sd") or {}
    caution = result.get("cautions") or []
    maps = result.get("maps") or {"names": []}
    values = ", ".join(_parameter_text(k, v, maps["names"])
                       for k, v in result["parameters"].items())
    if result.get("engine") == "linear":  # the simulated figures are the held-out check's
        progress = (
            f"analytic loss {result['initial_loss']:.4g} -> {result['fit_loss']:.4g}, FC r "
            f"{result['initial_fc_r']:.3f} -> {result['fit_fc_r']:.3f}")
    else:
        progress = (f"loss {result['initial_loss']:.4g} -> {result['loss']:.4g}, FC r "
                    f"{result['initial_fc_r']:.3f} -> {result['fc_r']:.3f}")
    return (f"netdyn fit: {values}; {progress} "
            f"(best: step {result['best_step']} of {result['steps']}; "
            f"{result['seconds']:.0f} s).\n"
            f"netdyn fit: held-out (new noise, {_sets(result)}): FC r "
            f"{_pm(heldout, sd, 'fc_r')}, mean FC {_pm(heldout, sd, 'mean_fc')} (empirical "
            f"{result['empirical_mean_fc']:.3f}), {100 * heldout['saturation']:.1f} % of pairs "
            "> 0.9.\n"
            + _runs_line(result.get("runs"), result.get("runs_sd"))
            + uncertainty_line(result.get("uncertainty"), maps["names"],
                               result.get("long_check"))
            + ("" if result.get("long_check") is None else
               f"netdyn fit: {long_check_text(result['long_check'])}.\n")
            + "".join(f"netdyn fit: caution: {c}.\n" for c in caution)
            + f"netdyn fit: wrote {out}/params.json, "
            "history.csv, history.json, fc_simulated.csv, fc_heldout.csv, model.eqx, checkpoint.eqx"
            + (", fit.png" if plotted else ""))


def finished_summary(out: Path) -> str:
    """``summary`` of the finished fit in ``out``, from its ``params.json`` (``netdyn
    summary DIR``)."""
    path = out / "params.json"
    result = read_json_object(path, missing=f": {out} holds no finished netdyn fit")
    try:
        return summary(out, result, (out / "fit.png").is_file())
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a netdyn params.json (no {e}).") from None

