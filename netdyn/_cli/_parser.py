"""The argument parser of ``netdyn`` and the defaults of ``netdyn fit``."""

import argparse

from .. import datasets
from .._loss.fc_loss import METRICS
from ._model import MODELS
from ._uncertainty import AUTO_COORDINATES

_FIT_HELP = """\
Fit a delay-coupled network model to the functional connectivity (FC) of training runs of
BOLD by gradient descent through the whole simulation, and score it on test runs it never
saw, with noise it never saw.

With no options: the embedded HCP group connectome (80 AAL2 regions; delays = tract
length / 4 mm/ms, up to 62 ms) and its 7 BOLD runs; Reduced Wong-Wang nodes (w = 0.5,
I_o = 0.32), delayed linear coupling, additive noise on S, stochastic Heun with
dt = 1 ms, Balloon-Windkessel BOLD sampled at the data's TR (720 ms). The global coupling
G and the noise amplitude sigma are fitted (--fit G,sigma):

- Fitted on runs 1-4, scored on runs 5-7 (--train-runs, --test-runs; by default the
  first half of the runs, rounded up, trains): the target is the mean of the training
  runs' FCs. The score on the test runs is reported beside the noise ceiling, the FC r
  between the training and the test runs' FCs (0.899 here), which no model can be
  expected to beat. --bold reads your own runs (TSV/CSV as fMRIPrep, XCP-D or nilearn
  write them, with the TR from the BIDS JSON sidecar, or .npy); --fc fits a given FC.
- Stationary dynamics only: every simulation starts with a burn-in whose BOLD is not
  compared (57.6 s; 28.8 s for rww-ei-fic, which starts near its balanced state), so
  that the shared relaxation from the initial state (which correlates all regions and
  inflates FC) is not part of the signal. The gradient is
  exact, through the burn-in too (--truncated-gradient holds the burn-in's final state
  fixed: cheaper, but it can point the wrong way near the critical coupling).
- Enough BOLD for a stable FC: each step simulates 4 independent noise realisations of
  43.2 s (4 x 60 TRs, 2.9 min of BOLD) in parallel and compares their mean FC.
- Pattern and level: the loss is 1 - r + h(mean FC - empirical mean FC), with r the
  Pearson correlation of the FC upper triangles and h Huber's function of width 0.05
  (|x| far from the match, x^2 / 0.1 near it, with no kink where a fit sits; --loss
  1-r+mean uses |x|: the same test-run r, a held-out level 0.015 further off).
- The FC peaks in a narrow band of G (about 0.002 wide here) at the edge of the model's
  bifurcation, which moves with the connectome's scale. The start finds it: a scan of 17
  values of G (forward only, one realisation each), then a search for the peak of the
  simulated mean FC and 8 bisections of the G where it meets the data's mean FC; the fit
  starts at the lowest loss seen. If no G reaches the data's level, it says so and stops
  with exit status 3 (no fit). Then Adam refines G and sigma (12 steps, learning rate
  0.01 cosine-decayed to 0.001; the best step is kept). One fixed noise key for the
  whole fit (common random numbers: the loss is a smooth function of the parameters),
  so that a step which raises the loss is taken back and retried at half the length,
  with Adam restarted (netdyn.backtrack; not with --redraw).
- Gradient check: at the start, the gradient is compared with central finite
  differences of the loss along a random direction (--no-gradient-check skips it); a
  disagreement is printed and saved.
- Held-out check: the fitted model is simulated again with new noise, 3 independent sets
  of 4 x 288 s after the burn-in (--heldout-sets); its FC r, mean FC and fraction of pairs
  above 0.9 (saturation) against the fitted FC, and its FC r, mean FC, saturation and FCD
  KS against the test runs (with the fraction of the noise ceiling reached) are printed
  and saved next to the fit's, as mean and standard deviation over the sets.
- Error bars: 95 % intervals of the fitted parameters from other noise (the gradient's
  spread over 4 fresh noise keys through the loss's Hessian) and other runs (leaving out
  each training run), computed when at most 8 values are fitted (--uncertainty); a
  parameter the data do not constrain (a flat direction of the loss) is named and gets
  none. With an interval for G, the loss along G over 1.5 times the interval on each
  side (5 simulations, the other values moved as the Hessian says) is drawn beside the
  quadratic model the interval rests on (fit.png), with the ratio of their rises.

Measured with these defaults: 959 s for the whole command on a 2-core x86_64 CPU
shared with other jobs (load 3.1-4.0; the search for the start, the gradient check and
the fit 453 s, the error bars 390 s and G's profile 59 s, the 3 held-out sets the rest)
in float64
(benchmarks/fit.md in the source repository); an earlier run on a quieter machine, with
one held-out set and no error bars, took 310 s. It scales with --steps, --grid,
--duration, --realisations and the number of regions; --uncertainty off and
--heldout-sets 1 save the error bars' share.

Writes to --out, one folder per fit (each file written atomically): settings.json (the
options, at the start), scan.json (the search for the start), params.json (fitted and
initial parameters in the units of --G and --sigma with their 95 % intervals
(--uncertainty), fit and held-out metrics (mean and sd over --heldout-sets noise sets, and
each set's), the scores on the training and test runs with the noise ceiling, the scan,
the best step, the settings with the values used), history.csv and history.json (one row
per step, numbered from 1 as on the progress line: loss, fc_r, mean_fc, rmse, saturation,
gradient norm, seconds, parameters), fc_simulated.csv and fc_heldout.csv (the first
held-out set's), checkpoint.eqx and fit.png (loss curve, FC matrices and scatters of the
fit and of the held-out run, FC value histograms, the scan of G, the held-out FC against
the test runs', the profile of G, each held-out set's scores) when matplotlib is
installed (pip install "netdyn[plot]"). A folder with results is not overwritten without
--overwrite. Ctrl-C keeps the steps done in
checkpoint.eqx and prints the command that continues the fit (--resume, with the same
options). Exit status: 0 fitted, 1
diverged, 2 bad options or files, 3 no usable start (no G reaches the data's mean FC),
130 interrupted.
"""

DEFAULT_DURATION = 43_200.0
DEFAULT_REALISATIONS = 4
DEFAULT_HELDOUT_DURATION = 288_000.0
DEFAULT_HELDOUT_REALISATIONS = 4
DEFAULT_HELDOUT_SETS = 3
DEFAULT_GRID = 17
DEFAULT_BISECT = 8
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
    add_data_options(p)
    model = p.add_argument_group("model")
    model.add_argument("--model", choices=sorted(MODELS), default="rww",
                       help="rww: Reduced Wong-Wang (w=0.5, I_o=0.32), delayed linear "
                       "coupling, BOLD of S; hopf: Stuart-Landau oscillators (a=-0.02 /s, "
                       "0.05 Hz), delayed diffusive coupling, TR averages of x as signal; "
                       "rww-ei-fic: excitatory and inhibitory Wong-Wang populations (TVB's "
                       "ReducedWongWangExcInh) with feedback inhibition control (every "
                       "region's excitatory rate at 3 Hz), BOLD of S_e "
                       "(default: rww)")
    model.add_argument("--G", type=float, default=None,
                       help="initial global coupling (default: the best point of the "
                       "--grid search; without it 0.15 for rww, 0.5 for hopf and "
                       "rww-ei-fic)")
    model.add_argument("--speed", type=float, default=4.0,
                       help="conduction speed in mm/ms (delays = lengths / speed; default 4)")
    model.add_argument("--sigma", type=float, default=None,
                       help="additive noise amplitude (default: 0.00283 rww, 0.02 hopf, "
                       "0.001 rww-ei-fic)")
    model.add_argument("--dt", type=float, default=1.0, help="time step in ms (default 1)")
    model.add_argument("--duration", type=float, default=DEFAULT_DURATION,
                       help="measured simulated time per realisation in ms, a multiple of "
                       f"--tr (default {DEFAULT_DURATION:.0f})")
    model.add_argument("--realisations", type=int, default=DEFAULT_REALISATIONS,
                       help="independent noise realisations per step, simulated in parallel; "
                       "the loss compares their mean FC (default "
                       f"{DEFAULT_REALISATIONS})")
    model.add_argument("--burn-in", type=float, default=None, dest="burn_in",
                       help="ms simulated before each measured run and not compared, so "
                       "that the FC is that of stationary dynamics (the gradient runs "
                       "through it, see --truncated-gradient); rounded up to whole TRs "
                       "(default 57600; 28800 for rww-ei-fic, which starts near its "
                       "balanced state)")
    model.add_argument("--truncated-gradient", action="store_false", dest="burn_in_gradient",
                       help="hold the burn-in's final state fixed in the gradient (faster, "
                       "approximate: it can point the wrong way where the dynamics have a "
                       "long memory, near the critical coupling and for regional "
                       "parameters); by default the gradient is exact, through the burn-in "
                       "too")
    model.add_argument("--tr", type=float, default=None,
                       help="BOLD sampling period in ms (default: the BOLD runs', else 720, "
                       "the HCP's)")
    model.add_argument("--warmup", type=float, default=0.0,
                       help="with --burn-in 0: initial ms of BOLD discarded (default 0)")
    add_fit_options(p)
    add_output_options(p)
    shown = sub.add_parser(
        "summary", help="print again what a finished fit found (from DIR/params.json)",
        description="Print the closing lines of a finished `netdyn fit` (its parameters "
        "with their intervals, scores and cautions), read from DIR/params.json.")
    shown.add_argument("out", metavar="DIR", help="the results folder of a finished fit")
    return parser


def add_fit_options(p: argparse.ArgumentParser) -> None:
    """The options of ``netdyn fit`` that choose what is fitted and how."""
    opt = p.add_argument_group("fit")
    opt.add_argument("--engine", choices=("simulation", "linear"), default="simulation",
                     help="what each step's loss compares: simulation (the FC of simulated "
                     "BOLD, noisy; every parameter) or linear (the analytic FC of the network "
                     "linearised at its stable fixed point, nd.LinearFcLoss: exact, "
                     "noise-free, milliseconds; not sigma, which cancels in it; for models "
                     "away from a bifurcation, such as rww-ei-fic). The held-out check and "
                     "the scores are simulated either way (default simulation)")
    opt.add_argument("--fit", default=None, metavar="NAMES",
                     help="comma-separated parameters to fit: G (global coupling), sigma "
                     "(noise amplitude, one for all regions) and the model's parameters "
                     "(rww: w, I_o, J_N, gamma, tau_s; hopf: a, omega; rww-ei-fic: w_p, "
                     "I_o, J_N, W_e, W_i), one value per region, one in all with a ':global' "
                     "suffix, or varying along the --maps with a ':maps' suffix (P_i = P (1 "
                     "+ sum_k c_k M_ki), the coefficients c_k fitted); input-gain: each "
                     "region's input scaled by exp(g_i), g mean-free, per region or along "
                     "the maps (input-gain:maps); e.g. 'G,I_o', 'G,w:global', "
                     "'G,sigma,w_p:maps' or 'G,sigma,input-gain' (default: G,sigma; G with "
                     "--engine linear)")
    opt.add_argument("--maps", default="in-strength,fc-gradient", metavar="MAPS",
                     help="the regional maps of ':maps' parameters, comma-separated: "
                     "in-strength (of the weights), fc-gradient (the principal gradient of "
                     "the fitted FC, Margulies et al. 2016) or files with one value per "
                     "region (an optional first line names the map), each z-scored "
                     "(default: in-strength,fc-gradient)")
    opt.add_argument("--loss", choices=METRICS, default="1-r+huber",
                     help="1-r+huber: 1 - the Pearson r of the FC upper triangles (pattern) "
                     "plus the difference of their means (level), smoothed within 0.05 of "
                     "the empirical mean (Huber: no kink where a fit sits); 1-r+mean: the "
                     "absolute difference instead; 1-r: pattern only; rmse: their RMSE "
                     "(default: 1-r+huber)")
    opt.add_argument("--grid", type=int, default=DEFAULT_GRID, metavar="N",
                     help="when G is fitted and --G is not given: scan N values of G evenly "
                     "spaced over [G0 / 3, 3 G0] (G0 the model's default; extended up to "
                     "twice, 3x beyond its edge, if needed), each scored by one forward "
                     "simulation of one realisation, for the two neighbours between which "
                     "the simulated mean FC crosses the empirical one; --bisect narrows "
                     "that bracket; the fit starts at the lowest loss seen. 0: start at G0 "
                     f"(default {DEFAULT_GRID})")
    opt.add_argument("--bisect", type=int, default=DEFAULT_BISECT, metavar="K",
                     help="bisections of the bracket of the mean-FC crossing (each one "
                     f"forward simulation; default {DEFAULT_BISECT}: 2^-{DEFAULT_BISECT} of "
                     "the grid's spacing)")
    opt.add_argument("--fcd-weight", type=float, default=0.0, dest="fcd_weight",
                     help="weight of an FCD term in the loss: the smoothed Kolmogorov-Smirnov "
                     "distance between the simulated and the training runs' FCD values "
                     "(--fcd-window, --fcd-step; --duration must hold a window; default 0: "
                     "none)")
    opt.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                     help=f"optimization steps (default {DEFAULT_STEPS})")
    opt.add_argument("--lr", type=float, default=DEFAULT_LR,
                     help="Adam learning rate on the unconstrained scale at the first step, "
                     f"cosine-decayed to a tenth at the last (default {DEFAULT_LR})")
    opt.add_argument("--remat", default="uniform:1000",
                     help="gradient checkpointing: none, uniform:K, nested:K1,K2 or "
                     "multilevel:B (default uniform:1000: small memory, ~1 extra forward)")
    opt.add_argument("--no-gradient-check", action="store_true", dest="no_gradient_check",
                     help="skip the check of the gradient against central finite differences "
                     "along a random direction at the start (4 forward simulations and one "
                     "gradient; a disagreement is printed and saved in params.json)")
    opt.add_argument("--redraw", action="store_true",
                     help="new noise every step (default: one fixed realisation)")
    opt.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")


def add_data_options(p: argparse.ArgumentParser) -> None:
    """The data options of ``netdyn fit``: connectome, FC, BOLD runs and their split."""
    data = p.add_argument_group("data")
    data.add_argument("--dataset", default="hcp",
                      help=f"embedded dataset name ({', '.join(datasets.available())}), "
                      "a .npz file (arrays weights, lengths, fc) or a TVB connectivity .zip "
                      "(default: hcp)")
    data.add_argument("--weights", metavar="CSV",
                      help="weights matrix file [target, source] (replaces --dataset)")
    data.add_argument("--lengths", metavar="CSV", help="tract lengths file in mm (with "
                      "--weights)")
    data.add_argument("--fc", metavar="FILE", help="empirical FC matrix to fit (.csv/.txt or "
                      ".npy); default: the FC of the training runs (--train-runs), else the "
                      "dataset's")
    data.add_argument("--bold", nargs="+", metavar="FILE",
                      help="regional BOLD time series, one file per run: TSV/CSV as written "
                      "by fMRIPrep, XCP-D or nilearn (one column per region, rows = TRs, "
                      "optional header; the TR from a BIDS JSON sidecar's RepetitionTime), "
                      "or .npy [time, regions] / [runs, time, regions]; default: the "
                      "dataset's runs (the embedded hcp has 7)")
    data.add_argument("--train-runs", dest="train_runs", metavar="RUNS",
                      help="the runs whose FC is fitted, counted from 1, e.g. 1-4 or 1,3,5 "
                      "(default: the first half, rounded up: 1-4 of 7)")
    data.add_argument("--test-runs", dest="test_runs", metavar="RUNS",
                      help="the runs the fit is scored on, never seen by it: FC r, mean FC, "
                      "saturation, FCD KS and the noise ceiling (r between training and test "
                      "FC); 'none' for no test (default: the runs not trained on)")
    data.add_argument("--normalise", action="store_true",
                      help="divide the weights by their maximum")


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
    held.add_argument("--heldout-sets", type=int, default=DEFAULT_HELDOUT_SETS,
                      help="independent held-out noise sets, each of --heldout-realisations "
                      "runs: the held-out metrics and the test-run scores are reported as "
                      f"mean and standard deviation over them (default {DEFAULT_HELDOUT_SETS})")
    held.add_argument("--uncertainty", choices=("auto", "on", "off"), default="auto",
                      help="95 %% intervals of the fitted parameters from two sources: other "
                      "noise (the gradient's spread over --uncertainty-keys fresh keys, "
                      "through the loss's Hessian) and other runs (leaving out each training "
                      "run, one Newton step each); auto: on for at most "
                      f"{AUTO_COORDINATES} fitted values (default auto)")
    held.add_argument("--uncertainty-keys", type=int, default=4, dest="uncertainty_keys",
                      help="noise keys for the intervals, >= 2 (default 4)")
    held.add_argument("--fcd-window", type=int, default=None, dest="fcd_window", metavar="TRS",
                      help="FCD sliding window in TRs (default: the TRs in 60 s, 83 at TR "
                      "720 ms)")
    held.add_argument("--fcd-step", type=int, default=None, dest="fcd_step", metavar="TRS",
                      help="FCD window step in TRs (default: the TRs in 2 s, at least 1: 3 "
                      "at TR 720 ms)")
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

