"""What ``netdyn fit`` writes and prints, in the units of its options, steps counted from 1
(``netdyn/_evaluation/fit_report.py``): the result files and the closing lines (also
``netdyn summary DIR``, from ``params.json``)."""

from pathlib import Path

import numpy as np

from .._evaluation.fit_report import fit_report, history_in_units
from .._evaluation.fit_summary import summary_sentences
from .._evaluation.heldout import heldout_cautions
from .._evaluation.interval_text import G_interval
from .._evaluation.long_check_text import long_check_caution
from .._fit.errors import FitDivergedError
from .._fit.history import FitHistory
from .._persistence.fit_results import write_results as write_fit_results
from .._persistence.strict_json import read_json_object
from .._plot.fit_figure import fit_figure
from .._search.scan_record import scan_no_crossing_text
from ._model import MODELS
from ._run_folder import settings


def for_people(history: FitHistory, model: str) -> FitHistory:
    """``history`` with steps numbered from 1 and parameters in the units of the options."""
    return history_in_units(history, MODELS[model])


def report(args, history: FitHistory, fitted_leaves, metrics: tuple[dict, dict],
           scan: dict | None, target: np.ndarray, elapsed: float) -> dict:
    """The content of ``params.json`` (``fit_report``), from the history of ``for_people``."""
    model = MODELS[args.model]
    used = settings(args)
    # The values this run used, in the units given (not the null of an omitted option).
    used["G"] = scan["start"] if scan is not None else (model.G if args.G is None else args.G)
    used["sigma"] = model.sigma if args.sigma is None else args.sigma
    return fit_report(history, fitted_leaves, model, metrics, scan, target, elapsed,
                      args.engine, used, keep=keep_rule(args))


def keep_rule(args) -> str:
    """``nd.fit``'s ``keep`` for the command: the best step with one noise key for every
    step; with new noise each step (``--redraw``, ``--chain-burn-in``) the mean of the
    second half of the steps, for a best over different noise keeps the luckiest noise."""
    return "average" if args.redraw or args.chain_burn_in is not None else "best"


def write_results(args, out: Path, result: dict, history: FitHistory, empirical, simulated,
                  simulated_heldout, title: str, fitted) -> bool:
    """Write every result file (``write_results`` of the library: all or none; the
    checkpoint stays); whether the figure was written. ``empirical``: ``(target, test)``,
    the FC fitted and that of the test subjects (or ``None``); ``fitted``: the fitted
    network (``model.eqx``, its leaves)."""
    fig = None if args.no_plot else _figure(result, history, empirical,
                                            (simulated, simulated_heldout), title)
    write_fit_results(out, result, history, fitted, simulated, simulated_heldout, fig)
    return fig is not None


def _figure(result: dict, history: FitHistory, empirical, simulated: tuple, title: str):
    """``fit.png``'s figure, ``None`` (said) without matplotlib."""
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
    return fig


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


def summary(out: Path, result: dict, plotted: bool) -> str:
    """The closing lines printed by ``netdyn fit`` (``summary_sentences``)."""
    wrote = (f"wrote {out}/params.json, history.csv, history.json, fc_simulated.csv, "
             "fc_heldout.csv, model.eqx, checkpoint.eqx" + (", fit.png" if plotted else ""))
    return "\n".join(f"netdyn fit: {s}" for s in [*summary_sentences(result), wrote])


def finished_summary(out: Path) -> str:
    """``summary`` of the finished fit in ``out``, from its ``params.json`` (``netdyn
    summary DIR``)."""
    path = out / "params.json"
    result = read_json_object(path, missing=f": {out} holds no finished netdyn fit")
    try:
        return summary(out, result, (out / "fit.png").is_file())
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a netdyn params.json (no {e}).") from None

