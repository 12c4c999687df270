"""``netdyn fit``: a scan of G for the start, the gradient fit, the held-out check and the
scores on the test subjects."""

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import jax
import numpy as np

from .._evaluation.fit_report import at_fit
from .._fit.errors import FitDivergedError
from .._fit.fit import fit
from .._inference.check_gradient import check_gradient
from .._loss._base import AbstractFcLoss
from .._loss.chained import Chained
from .._network import Network
from .._observation._stats import upper_triangle
from .._observation.runs import runs_fc
from .._persistence import interrupt
from .._persistence.fit_checkpoint import Checkpoint
from .._persistence.fit_results import write_history
from .._persistence.strict_json import write_json
from .._search.scan_record import read_scan_record, scan_record, scan_skipped_text
from ._data import FitData
from ._evaluation import heldout_check, long_check
from ._model import MODELS, with_G
from ._options import fitted_names, one_line
from ._plan import FitPlan, plan_options
from ._report import (
    cautions,
    diverged_message,
    for_people,
    keep_rule,
    no_crossing_message,
    report,
    summary,
    write_results,
)
from ._run_folder import SCAN, prepare, record_resume, resume_hint, run_folder
from ._uncertainty import parameter_uncertainty


def _scan(args, net: Network, loss_fn: AbstractFcLoss, key) -> dict:
    """The start of G (in the units of ``--G``): the preset's ``scan_start`` over
    ``--grid`` values, ``--bisect`` times; a simulated scan whose peak falls short of the
    level by less than the loss's level width starts at the peak. ``{"start": G or None,
    "bracket", "at_peak", "target_mean_fc", "grid": {"G", "loss", "mean_fc", "stage"}}``."""
    preset = MODELS[args.model]
    G0 = preset.G
    level = float(np.mean(upper_triangle(np.asarray(loss_fn.target), k=1)))
    if not args.quiet:
        how = "the analytic FC" if args.engine == "linear" else "one simulation each"
        print(f"netdyn fit: scanning {args.grid} values of G ({how}) in [{G0 / 3:.3g}, "
              f"{3 * G0:.3g}] for the mean FC of the data ({level:.3f}), then its peak and "
              f"{args.bisect} bisections ...", flush=True)
    found = preset.scan_start(
        loss_fn, net, grid=args.grid, bisect=args.bisect, key=key,
        tolerance=loss_fn.level_width if args.engine == "simulation" else 0.0,
        on_point=lambda _: interrupt.check())  # Ctrl-C between simulations
    scan = scan_record(found, preset.factor("coupling.G"))
    if found.at_peak and not args.quiet:
        print(f"netdyn fit: no scanned G reached the data's mean FC ({found.level:.3f}); the "
              f"highest ({np.nanmax(found.search.results['mean_fc']):.3f}) is within the loss's "
              f"level width ({loss_fn.level_width:g}) of it, as one short simulation reads "
              "the level low: starting at that peak.", flush=True)
    skipped = scan_skipped_text(scan, analytic=args.engine == "linear")
    if skipped is not None:
        print(f"netdyn fit: {skipped}", file=sys.stderr, flush=True)
    return scan


def _start(args, out: Path, net, loss_fn, key) -> dict | None:
    """The scan of G (run now, or that of the run resumed), ``None`` without a scan."""
    if not (args.grid > 0 and args.G is None and "G" in fitted_names(args.fit)):
        return None
    if args.resume and (out / SCAN).is_file():
        return read_scan_record(out / SCAN, "--resume: ")  # every field checked
    scan = _scan(args, net, loss_fn, key)
    write_json(out / SCAN, scan)
    return scan


def fit_command(args, argv: Sequence[str]) -> int:
    """Run ``netdyn fit`` (``argv``: its command line, for the hints); the exit status."""
    planned = plan_options(args)  # --fit and every file checked before anything is written
    out = prepare(args)  # --out checked and made ready before any simulation
    if args.resume:
        done, total = run_folder(out).saved_steps()
        record_resume(args, out, done)
        print(f"netdyn fit: resuming the fit in {out}: {done} of {total} steps done"
              + (f", continuing at step {done + 1}." if done < total else
                 "; evaluating its result again."), flush=True)
    try:
        return _run(out, planned)
    except OSError as e:
        # A full disk: name the file, and say what the checkpoint still holds.
        saved, again = resume_hint(out, argv)
        raise ValueError(f"{one_line(e)}; " + (
            f"no step is saved: start again with: {again}" if saved is None else
            f"{saved}: once it can be written, continue with: {again}")) from None
    except KeyboardInterrupt:
        saved, again = resume_hint(out, argv)
        print("netdyn fit: " + (f"interrupted; {saved}. Continue with: {again}" if saved else
                                "interrupted before the first step was done: nothing to "
                                f"resume. Start again with: {again}"), file=sys.stderr)
        return 130


def _run(out: Path, planned: FitPlan) -> int:
    """The scan, the fit, the held-out check and the results; Ctrl-C is acted on between
    these (and between the scan's simulations and the fit's steps: ``interrupt``)."""
    args, data, net, where = planned.options, planned.data, planned.network, planned.where
    loss_fn = planned.loss
    interrupt.check()
    key = jax.random.key(args.seed)
    if not args.quiet:
        simulated = planned.simulated_loss
        each = ("the analytic FC of the network linearised at its fixed point" if
                args.engine == "linear" else
                f"{args.realisations} x {args.duration / 1000:g} s of BOLD after a "
                f"{simulated.burn_in_simulated / 1000:g} s burn-in (dt = {args.dt:g} ms)")
        if args.chain_burn_in is not None:
            each = (f"{args.realisations} x {args.duration / 1000:g} s of BOLD continuing "
                    f"the previous step's runs after "
                    f"{Chained(simulated, burn_in=args.chain_burn_in).burn_in / 1000:g} s "
                    f"(the {simulated.burn_in_simulated / 1000:g} s burn-in once; dt = "
                    f"{args.dt:g} ms)")
        print(
            f"netdyn fit: {args.model} on {data.name!r} ({data.weights.shape[0]} regions), "
            f"{_fitted_on(data, args.fc)}; each step: {each}; fitting "
            f"{args.fit} over {args.steps} steps (loss {args.loss}, engine {args.engine}); "
            f"results in {out}/", flush=True
        )
    start = time.perf_counter()  # the scan and the fit
    scan = _start(args, out, net, loss_fn, key)
    interrupt.check()
    if scan is not None and scan["start"] is None:
        print(no_crossing_message(scan, out), file=sys.stderr)
        return 3
    if scan is not None:
        net = with_G(args, net, scan["start"])
    check = None if args.no_gradient_check or args.resume else _gradient_check(
        args, loss_fn, net, where, key)
    interrupt.check()
    try:
        chains = (loss_fn if args.chain_burn_in is None else
                  Chained(loss_fn, burn_in=args.chain_burn_in))
        fitted, history = fit(
            net, chains, planned.optimizer,
            where=where, bounds=planned.bounds,
            steps=args.steps, key=key, redraw=args.redraw,
            checkpoint=Checkpoint(out / "checkpoint.eqx", every=args.checkpoint_every,
                                  resume=args.resume),
            progress=not args.quiet, keep=keep_rule(args),
        )
    except FitDivergedError as e:
        write_history(out, for_people(e.history, args.model))
        print(diverged_message(args, e, out), file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start

    # The fit's own FC and metrics at its end: simulated as each step was, or the analytic
    # ones (what the linear engine fitted; the held-out check below simulates).
    train, simulated = at_fit(loss_fn if args.engine == "linear" else planned.simulated_loss,
                              fitted, key)
    interrupt.check()
    heldout, simulated_heldout, runs = heldout_check(args, data, planned.heldout_loss, fitted,
                                                       key)
    if not args.quiet and args.uncertainty != "off":
        print("netdyn fit: error bars of the parameters ...", flush=True)
    spread = parameter_uncertainty(args, data, loss_fn, fitted, where, planned.bounds, key)
    long = long_check(args, planned.heldout_loss, fitted, where, key, heldout[2], spread)
    interrupt.check()  # the last: from here the results are written whole
    history = for_people(history, args.model)
    result = report(args, history, where(fitted), (train, heldout[0]), scan, data.target,
                    elapsed)
    result.update(heldout_sd=heldout[1], heldout_each=heldout[2], heldout_sets=args.heldout_sets,
                  runs=runs[0], runs_sd=runs[1], runs_each=runs[2], uncertainty=spread,
                  long_check=long, gradient_check=check, resumed=run_folder(out).record.resumes())
    if planned.maps is not None:
        result["maps"] = {"names": list(planned.maps.names), "parameters": list(where.mapped)}
    result["cautions"] = cautions(result)
    test = runs_fc(data.test) if data.test else None
    plotted = write_results(args, out, result, history, (data.target, test), simulated,
                            simulated_heldout, f"{args.model} on {data.name}: fit {args.fit}",
                            fitted)
    print(summary(out, result, plotted))
    return 0


def _gradient_check(args, loss_fn: AbstractFcLoss, net: Network, where, key) -> dict:
    """``check_gradient`` at the start along a random direction relative to each fitted
    value (a relative step of 1.5e-3: smaller steps meet the loss's roughness near the
    bifurcation; values that start at 0, such as map coefficients and input log-gains,
    take an absolute step of that size), printed when the two disagree."""
    if not args.quiet:
        print("netdyn fit: checking the gradient at the start against finite differences "
              "...", flush=True)
    c = check_gradient(loss_fn, net, where, key=key, seed=args.seed, relative=True,
                       step=1.5e-3)
    out = {"gradient": c.gradient, "finite_difference": c.finite_difference_half,
           "finite_difference_2h": c.finite_difference, "relative_step": c.step,
           "relative_error": c.relative_error, "settled": c.settled, "agree": c.agree}
    if not c.settled:
        print(f"netdyn fit: the gradient could not be checked at the start: central "
              f"finite differences do not settle ({c.finite_difference:.4g} and "
              f"{c.finite_difference_half:.4g} at a relative step of {c.step:g} and half "
              "of it; the loss is rough at that scale).", file=sys.stderr, flush=True)
    elif not c.agree:
        print(f"netdyn fit: caution: at the start, the gradient along a random direction is "
              f"{c.gradient:.4g}, central finite differences of the loss give "
              f"{c.finite_difference_half:.4g} ({c.finite_difference:.4g} at twice the "
              "step): the fit's gradient may point the wrong way here"
              + ("" if args.burn_in_gradient else
                 " (--truncated-gradient holds the burn-in fixed; without it the gradient "
                 "is exact)")
              + ".", file=sys.stderr, flush=True)
    return out


def _fitted_on(data: FitData, fc_file: str | None) -> str:
    """What the fit matches and what it is scored on, for the first line."""
    if data.train is None and not data.test:
        return f"fitting the FC of {fc_file or 'the dataset'} (no BOLD runs to test on)"
    runs = (f"--fc {fc_file}" if fc_file else
            "subjects " + ",".join(map(str, data.train_subjects)))
    tested = (f", scored on subjects {','.join(map(str, data.test_subjects))}" if data.test
              else ", no test subjects")
    return f"fitting the FC of {runs}{tested}"
