"""``netdyn fit``: a scan of G for the start, the gradient fit, the held-out check."""

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._fit.errors import FitDivergedError
from .._fit.fc_loss import FcLoss
from .._fit.fit import fit
from .._network import Network
from .._solver.heun import Heun
from .._sweep import sweep
from ._atomic import write_json
from ._checks import check_numbers
from ._data import load_data
from ._model import MODELS, factor, network, optimiser, remat, selection
from ._report import diverged_message, for_people, report, summary, write_history, write_results
from ._run_folder import SCAN, checkpoint_steps, prepare, rerun_command, resume_command

# The held-out noise: a stream of the seed's key that the fit's realisations
# (fold_in(key, b) for b < --realisations) never use.
HELDOUT_STREAM = 2**31 - 1


def _evaluate(loss_fn: FcLoss, model, key) -> tuple[dict[str, float], np.ndarray]:
    """Metrics (``fc_r``, ``rmse``, ``mean_fc``, ``saturation``, ``loss``) and the FC."""
    simulated = np.asarray(_simulated_fc(loss_fn, model, key))
    loss, metrics = loss_fn.loss_of_fc(jnp.asarray(simulated))
    out = {k: float(v) for k, v in metrics.items()}
    out["loss"] = float(loss)
    return out, simulated


@eqx.filter_jit
def _simulated_fc(loss_fn: FcLoss, model, key):
    return loss_fn.simulated_fc(model, key)


def _grid_start(args, net: Network, loss_fn: FcLoss, key) -> dict:
    """The scan of ``args.grid`` values of G over [G0 / 3, 3 G0] (G0 the model's default;
    loss of one realisation, forward only), in the units of ``--G``:
    ``{"start": best G, "grid": {"G": [...], "loss": [...]}}``.

    The FC of delay-coupled mean-field models peaks in a narrow band of G at the edge of a
    bifurcation, and the loss is nearly flat far from it, where gradients say little: a
    coarse forward scan finds the band, the gradient fit then refines within it."""
    G0 = MODELS[args.model].G
    values = np.linspace(G0 / 3, 3 * G0, args.grid)
    # The network's G for each value, as the preset computes it from --G.
    internal = values * factor(args.model, "coupling.G")
    one = loss_fn.replace(realisations=1)
    if not args.quiet:
        print(f"netdyn fit: scanning {args.grid} values of G in [{values[0]:.3g}, "
              f"{values[-1]:.3g}] for a starting point ...", flush=True)
    losses = np.asarray(sweep(lambda m: one(m, key)[0], net, internal,
                              where=lambda n: n.coupling.G, batch_size=1))
    best = int(np.argmin(np.where(np.isfinite(losses), losses, np.inf)))
    return {"start": float(values[best]),
            "grid": {"G": values.tolist(), "loss": [float(x) for x in losses]}}


def _losses(args, target, monitor) -> tuple[FcLoss, FcLoss]:
    """The fit's loss and the held-out check's."""
    loss_fn = FcLoss(target, Heun(remat=remat(args.remat)), monitor, duration=args.duration,
                     dt=args.dt, metric=args.loss, burn_in=args.burn_in,
                     realisations=args.realisations, burn_in_gradient=args.burn_in_gradient)
    heldout_fn = loss_fn.replace(duration=args.heldout_duration,
                                 realisations=args.heldout_realisations)
    return loss_fn, heldout_fn


def _start(args, out: Path, net, loss_fn, key) -> dict | None:
    """The scan of G (run now, or that of the run resumed), ``None`` without a scan."""
    if not (args.grid > 0 and args.G is None and "G" in selection(args, net)[0].names):
        return None
    if args.resume and (out / SCAN).is_file():
        return json.loads((out / SCAN).read_text(encoding="utf-8"))
    scan = _grid_start(args, net, loss_fn, key)
    write_json(out / SCAN, scan)
    return scan


def fit_command(args, argv: Sequence[str]) -> int:
    """Run ``netdyn fit`` (``argv``: its command line, for the hints); the exit status."""
    check_numbers(args)
    weights, lengths, target, name = load_data(args)
    net, monitor = network(args, weights, lengths)
    selection(args, net)  # --fit checked before anything is written
    loss_fn, heldout_fn = _losses(args, target, monitor)
    out = prepare(args)  # --out checked and made ready before any simulation
    if args.resume:
        done, total = checkpoint_steps(out)
        print(f"netdyn fit: resuming the fit in {out}: {done} of {total} steps done"
              + (f", continuing at step {done + 1}." if done < total else
                 "; evaluating its result again."), flush=True)
    try:
        return _run(args, out, (weights, lengths, target, name), net, loss_fn, heldout_fn)
    except KeyboardInterrupt:
        saved = checkpoint_steps(out)
        if saved is None or saved[0] == 0:
            print("netdyn fit: interrupted before the first step was done: nothing to "
                  f"resume. Start again with: {rerun_command(argv)}", file=sys.stderr)
        else:
            print(f"netdyn fit: interrupted; {saved[0]} of {saved[1]} steps are saved in "
                  f"{out / 'checkpoint.eqx'}. Continue with: {resume_command(argv)}",
                  file=sys.stderr)
        return 130


def _run(args, out: Path, data, net, loss_fn, heldout_fn) -> int:
    weights, lengths, target, name = data
    key = jax.random.key(args.seed)
    if not args.quiet:
        print(
            f"netdyn fit: {args.model} on {name!r} ({weights.shape[0]} regions); each step: "
            f"{args.realisations} x {args.duration / 1000:g} s of BOLD after a "
            f"{loss_fn.burn_in_simulated / 1000:g} s burn-in (dt = {args.dt:g} ms); fitting "
            f"{args.fit} over {args.steps} steps (loss {args.loss}, remat {args.remat}); "
            f"results in {out}/", flush=True
        )
    start = time.perf_counter()  # the scan and the fit
    scan = _start(args, out, net, loss_fn, key)
    G = scan["start"] if scan is not None else None
    if G is not None:
        net, _ = network(args, weights, lengths, G=G)
    where, bounds, net = selection(args, net)
    try:
        fitted, history = fit(
            net, loss_fn, optimiser(args.lr, args.steps, args.redraw), where=where, bounds=bounds,
            steps=args.steps, key=key, redraw=args.redraw,
            checkpoint=out / "checkpoint.eqx", checkpoint_every=args.checkpoint_every,
            resume=args.resume, progress=not args.quiet, keep="best",
        )
    except FitDivergedError as e:
        write_history(out, for_people(e.history, args.model))
        print(diverged_message(args, e, out), file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start

    train, simulated = _evaluate(loss_fn, fitted, key)
    if not args.quiet:
        print(f"netdyn fit: held-out check, {args.heldout_realisations} x "
              f"{args.heldout_duration / 1000:g} s with new noise ...", flush=True)
    heldout, simulated_heldout = _evaluate(heldout_fn, fitted,
                                           jax.random.fold_in(key, HELDOUT_STREAM))
    history = for_people(history, args.model)
    result = report(args, history, where(fitted), (train, heldout), scan, target, elapsed)
    plotted = write_results(args, out, result, history, target, simulated,
                            simulated_heldout, f"{args.model} on {name}: fit {args.fit}")
    print(summary(out, result, plotted))
    return 0
