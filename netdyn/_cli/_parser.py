"""The argument parser of ``netdyn`` and the defaults of ``netdyn fit``."""

import argparse

from .. import datasets
from .._fit.fc_loss import METRICS
from ._model import MODELS

_FIT_HELP = """\
Fit a delay-coupled network model to an empirical functional connectivity (FC) matrix by
gradient descent through the whole simulation, and check the fit on noise it never saw.

With no options: the embedded HCP group connectome (80 AAL2 regions; delays = tract
length / 4 mm/ms, up to 62 ms), Reduced Wong-Wang nodes (w = 0.5, I_o = 0.32), delayed
linear coupling, additive noise on S, stochastic Heun with dt = 1 ms, Balloon-Windkessel
BOLD sampled at TR = 720 ms (the HCP's). The global coupling G and the noise amplitude
sigma are fitted (--fit G,sigma):

- Stationary dynamics only: every simulation starts with a 57.6 s burn-in, simulated
  forward without gradient, so that the shared relaxation from the initial state (which
  correlates all regions and inflates FC) is not part of the signal. (The gradient then
  holds the burn-in's final state fixed: an approximation, biased above the critical
  coupling; --burn-in-gradient gives the exact gradient, at more cost.)
- Enough BOLD for a stable FC: each step simulates 4 independent noise realisations of
  43.2 s (4 x 60 TRs, 2.9 min of BOLD) in parallel and compares their mean FC.
- Pattern and level: the loss is 1 - r + |mean FC - empirical mean FC|, with r the
  Pearson correlation of the FC upper triangles.
- The FC peaks in a narrow band of G at the edge of the model's bifurcation: a scan of
  17 values of G (forward only) picks the start, then Adam refines G and sigma (12 steps,
  learning rate 0.01 cosine-decayed to 0.001; the best step is kept). One fixed noise
  key for the whole fit (common random numbers: the loss is a smooth function of the
  parameters), so that a step which raises the loss is taken back and retried at half
  the length, with Adam restarted (netdyn.backtrack; not with --redraw).
- Held-out check: the fitted model is simulated again with new noise, 4 x 288 s after the
  burn-in; its FC r, mean FC and fraction of pairs above 0.9 (saturation) are printed
  and saved next to the fit's.

Measured with these defaults: 223 s for the whole command on a quiet 2-core x86_64 CPU
in float64, 458 s on a loaded one (benchmarks/fit.md in the source repository); it
scales with --steps, --grid, --duration, --realisations and the number of regions.

Writes to --out, one folder per fit (each file written atomically): settings.json (the
options, at the start), scan.json (the G scan), params.json (fitted and initial
parameters in the units of --G and --sigma, fit and held-out metrics, the G scan, the
best step, the settings with the values used), history.csv and history.json (one row
per step, numbered from 1 as on the progress line: loss, fc_r, mean_fc, rmse,
saturation, gradient norm, seconds, parameters), fc_simulated.csv and fc_heldout.csv,
checkpoint.eqx and fit.png (loss curve, FC matrices and scatters of the fit and of the
held-out run, FC value histograms) when matplotlib is installed (pip install
"netdyn[plot]"). A folder with results is not overwritten without --overwrite. Ctrl-C
keeps the steps done in checkpoint.eqx and prints the command that continues the fit
(--resume, with the same options).
"""

DEFAULT_DURATION = 43_200.0
DEFAULT_REALISATIONS = 4
DEFAULT_BURN_IN = 57_600.0
DEFAULT_HELDOUT_DURATION = 288_000.0
DEFAULT_HELDOUT_REALISATIONS = 4
DEFAULT_GRID = 17
DEFAULT_STEPS = 12
DEFAULT_LR = 0.01


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="netdyn", description="netdyn: differentiable brain network models."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p = sub.add_parser(
        "fit", help="fit a network model to an empirical FC", description=_FIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    data = p.add_argument_group("data")
    data.add_argument("--dataset", default="hcp",
                      help=f"embedded dataset name ({', '.join(datasets.available())}), "
                      "a .npz file (arrays weights, lengths, fc) or a TVB connectivity .zip "
                      "(default: hcp)")
    data.add_argument("--weights", metavar="CSV",
                      help="weights matrix file [target, source] (replaces --dataset)")
    data.add_argument("--lengths", metavar="CSV", help="tract lengths file in mm (with "
                      "--weights)")
    data.add_argument("--fc", metavar="FILE", help="empirical FC matrix (.csv/.txt or .npy); "
                      "default: the dataset's")
    data.add_argument("--normalise", action="store_true",
                      help="divide the weights by their maximum")
    model = p.add_argument_group("model")
    model.add_argument("--model", choices=sorted(MODELS), default="rww",
                       help="rww: Reduced Wong-Wang (w=0.5, I_o=0.32), delayed linear "
                       "coupling, BOLD of S; hopf: Stuart-Landau oscillators (a=-0.02 /s, "
                       "0.05 Hz), delayed diffusive coupling, TR averages of x as signal "
                       "(default: rww)")
    model.add_argument("--G", type=float, default=None,
                       help="initial global coupling (default: the best point of the "
                       "--grid scan; without it 0.15 for rww, 0.5 for hopf)")
    model.add_argument("--speed", type=float, default=4.0,
                       help="conduction speed in mm/ms (delays = lengths / speed; default 4)")
    model.add_argument("--sigma", type=float, default=None,
                       help="additive noise amplitude (default: 0.00283 rww, 0.02 hopf)")
    model.add_argument("--dt", type=float, default=1.0, help="time step in ms (default 1)")
    model.add_argument("--duration", type=float, default=DEFAULT_DURATION,
                       help="measured simulated time per realisation in ms, a multiple of "
                       f"--tr (default {DEFAULT_DURATION:.0f})")
    model.add_argument("--realisations", type=int, default=DEFAULT_REALISATIONS,
                       help="independent noise realisations per step, simulated in parallel; "
                       "the loss compares their mean FC (default "
                       f"{DEFAULT_REALISATIONS})")
    model.add_argument("--burn-in", type=float, default=DEFAULT_BURN_IN, dest="burn_in",
                       help="ms simulated before each measured run, forward only (no "
                       "gradient), so that the FC is that of stationary dynamics; rounded "
                       f"up to whole TRs (default {DEFAULT_BURN_IN:.0f})")
    model.add_argument("--burn-in-gradient", action="store_true", dest="burn_in_gradient",
                       help="differentiate through the burn-in as well: the exact gradient "
                       "of the whole simulation (slower); by default the burn-in's final "
                       "state is held fixed, which biases the gradient where the dynamics "
                       "have a long memory (above the critical coupling)")
    model.add_argument("--tr", type=float, default=720.0,
                       help="BOLD sampling period in ms (default 720, the HCP's)")
    model.add_argument("--warmup", type=float, default=0.0,
                       help="with --burn-in 0: initial ms of BOLD discarded (default 0)")
    opt = p.add_argument_group("fit")
    opt.add_argument("--fit", default="G,sigma", metavar="NAMES",
                     help="comma-separated parameters to fit: G (global coupling), sigma "
                     "(noise amplitude, one for all regions) and the model's parameters "
                     "(rww: w, I_o, J_N, gamma, tau_s; hopf: a, omega), one value per region, "
                     "or one in all with a ':global' suffix, e.g. 'G,I_o' or 'G,w:global' "
                     "(default: G,sigma)")
    opt.add_argument("--loss", choices=METRICS, default="1-r+mean",
                     help="1-r+mean: 1 - the Pearson r of the FC upper triangles (pattern) "
                     "plus the absolute difference of their means (level); 1-r: pattern "
                     "only; rmse: their RMSE (default: 1-r+mean)")
    opt.add_argument("--grid", type=int, default=DEFAULT_GRID, metavar="N",
                     help="when G is fitted and --G is not given: start from the best of N "
                     "values of G evenly spaced over [G0 / 3, 3 G0] (G0 the model's default), "
                     "each scored by one forward simulation of one realisation; 0: start "
                     f"at G0 (default {DEFAULT_GRID})")
    opt.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                     help=f"optimisation steps (default {DEFAULT_STEPS})")
    opt.add_argument("--lr", type=float, default=DEFAULT_LR,
                     help="Adam learning rate on the unconstrained scale at the first step, "
                     f"cosine-decayed to a tenth at the last (default {DEFAULT_LR})")
    opt.add_argument("--remat", default="uniform:1000",
                     help="gradient checkpointing: none, uniform:K, nested:K1,K2 or "
                     "multilevel:B (default uniform:1000: small memory, ~1 extra forward)")
    opt.add_argument("--redraw", action="store_true",
                     help="new noise every step (default: one fixed realisation)")
    opt.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    add_output_options(p)
    return parser


def add_output_options(p: argparse.ArgumentParser) -> None:
    """The held-out check and output options of ``netdyn fit``."""
    held = p.add_argument_group("held-out validation")
    held.add_argument("--heldout-duration", type=float, default=DEFAULT_HELDOUT_DURATION,
                      help="measured ms per realisation of the held-out simulation at the "
                      "fitted parameters, with noise the fit never saw (default "
                      f"{DEFAULT_HELDOUT_DURATION:.0f})")
    held.add_argument("--heldout-realisations", type=int,
                      default=DEFAULT_HELDOUT_REALISATIONS,
                      help="held-out noise realisations; their FCs are averaged (default "
                      f"{DEFAULT_HELDOUT_REALISATIONS})")
    out = p.add_argument_group("output")
    out.add_argument("--out", default="netdyn-fit", metavar="DIR",
                     help="results folder (default: ./netdyn-fit)")
    out.add_argument("--resume", action="store_true",
                     help="continue the fit in DIR from DIR/checkpoint.eqx; the options that "
                     "change the fit must be those of DIR/settings.json (--out, --remat, "
                     "--checkpoint-every, --heldout-*, --no-plot, --quiet may differ)")
    out.add_argument("--overwrite", action="store_true",
                     help="start a new fit in DIR, deleting the results of an earlier one "
                     "(without it, a DIR with results is refused)")
    out.add_argument("--checkpoint-every", type=int, default=5, metavar="N",
                     help="save the checkpoint every N steps (default 5)")
    out.add_argument("--no-plot", action="store_true", help="do not write fit.png")
    out.add_argument("--quiet", action="store_true", help="no progress line")

