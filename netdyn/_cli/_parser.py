"""The argument parser of ``netdyn`` and the defaults of ``netdyn fit``."""

import argparse

from .. import datasets
from .._loss.fc_loss import METRICS
from ._model import MODELS
from ._options import (
    DEFAULT_BISECT,
    DEFAULT_DURATION,
    DEFAULT_GRID,
    DEFAULT_HELDOUT_DURATION,
    DEFAULT_HELDOUT_REALISATIONS,
    DEFAULT_HELDOUT_SETS,
    DEFAULT_LR,
    DEFAULT_REALISATIONS,
    DEFAULT_STEPS,
    FIT_HELP,
)
from ._uncertainty import AUTO_COORDINATES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="netdyn", description="netdyn: differentiable brain network models."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    p = sub.add_parser(
        "fit", help="fit a network model to an empirical FC", description=FIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_data_options(p)
    model = p.add_argument_group("model")
    model.add_argument("--model", choices=sorted(MODELS), default="rww-ei-fic",
                       help="rww: Reduced Wong-Wang (w=0.5, I_o=0.32), delayed linear coupling, "
                       "BOLD of S; hopf: Stuart-Landau oscillators (a=-0.02 /s, 0.05 Hz), delayed "
                       "diffusive coupling, TR averages of x as signal; rww-ei-fic: excitatory and "
                       "inhibitory Wong-Wang populations (TVB's ReducedWongWangExcInh) with "
                       "feedback inhibition control (every region's excitatory rate at 3 Hz), BOLD "
                       "of S_e (default: rww-ei-fic)")
    model.add_argument("--G", type=float, default=None,
                       help="initial global coupling (default: the best point of the --grid "
                       "search; without it 0.15 for rww, 0.5 for hopf and rww-ei-fic)")
    model.add_argument("--speed", type=float, default=4.0,
                       help="conduction speed in mm/ms (delays = lengths / speed; default 4)")
    model.add_argument("--sigma", type=float, default=None,
                       help="additive noise amplitude (default: 0.00283 rww, 0.02 hopf, "
                       "0.001 rww-ei-fic)")
    model.add_argument("--dt", type=float, default=1.0, help="time step in ms (default 1)")
    model.add_argument("--duration", type=float, default=None,
                       help="measured simulated time per realisation in ms, a multiple of "
                       f"--tr (default {DEFAULT_DURATION:.0f})")
    model.add_argument("--realisations", type=int, default=None,
                       help="independent noise realisations per step, simulated in parallel; the "
                       f"loss compares their mean FC (default {DEFAULT_REALISATIONS})")
    model.add_argument("--burn-in", type=float, default=None, dest="burn_in",
                       help="ms simulated before each measured run and not compared, so that the "
                       "FC is that of stationary dynamics (the gradient runs through it, see "
                       "--truncated-gradient); rounded up to whole TRs (default 57600; 28800 for "
                       "rww-ei-fic, which starts near its balanced state)")
    model.add_argument("--truncated-gradient", action="store_false", dest="burn_in_gradient",
                       help="hold the burn-in's final state fixed in the gradient (faster, "
                       "approximate: it can point the wrong way where the dynamics have a long "
                       "memory, near the critical coupling and for regional parameters); by "
                       "default the gradient is exact, through the burn-in too")
    model.add_argument("--chain-burn-in", type=float, default=None, dest="chain_burn_in",
                       metavar="MS",
                       help="persistent chains (nd.Chained): each step's runs continue the "
                       "previous step's after a burn-in of MS ms (whole TRs; the full --burn-in "
                       "once, before the first step), so a step simulates MS + --duration; the "
                       "gradient holds each chain's start fixed (benchmarks/chains.md); the "
                       "held-out check and error bars use the plain loss; the fitted values "
                       "are the mean over the second half of the steps (default: off)")
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
    opt.add_argument("--engine", choices=("auto", "simulation", "linear"), default="auto",
                     help="what each step's loss compares: simulation (the FC of simulated BOLD, "
                     "noisy; every parameter) or linear (the analytic FC of the network linearised "
                     "at its stable fixed point, nd.LinearFcLoss: exact, noise-free, milliseconds; "
                     "not sigma, which cancels in it; for models away from a bifurcation: "
                     "rww-ei-fic). The held-out check and the scores are simulated either way. "
                     "auto: linear for rww-ei-fic unless --fit names sigma or --fcd-weight is "
                     "given, else simulation (default auto)")
    opt.add_argument("--fit", default=None, metavar="NAMES",
                     help="comma-separated parameters to fit: G (global coupling), sigma (noise "
                     "amplitude, one for all regions) and the model's parameters (rww: w, I_o, "
                     "J_N, gamma, tau_s; hopf: a (/s), omega (Hz); rww-ei-fic: w_p, I_o, J_N, W_e, "
                     "W_i), one value per region, one in all with a ':global' suffix, or varying "
                     "along the --maps with a ':maps' suffix (P_i = P (1 + sum_k c_k M_ki), the "
                     "coefficients c_k fitted); input-gain: each region's input scaled by "
                     "exp(g_i), g mean-free, per region or along the maps (input-gain:maps); e.g. "
                     "'G,I_o', 'G,w:global', 'G,sigma,w_p:maps' or 'G,sigma,input-gain' (default: "
                     "G,sigma; G with --engine linear)")
    opt.add_argument("--maps", default="in-strength,fc-gradient", metavar="MAPS",
                     help="the regional maps of ':maps' parameters, comma-separated: in-strength "
                     "(of the weights), fc-gradient (the principal gradient of the fitted FC, "
                     "Margulies et al. 2016) or files with one value per region (an optional first "
                     "line names the map), each z-scored (default: in-strength,fc-gradient)")
    opt.add_argument("--loss", choices=METRICS, default="1-r+huber",
                     help="1-r+huber: 1 - the Pearson r of the FC upper triangles (pattern) plus "
                     "the difference of their means (level), smoothed within 0.05 of the empirical "
                     "mean (Huber: no kink where a fit sits); 1-r+mean: the absolute difference "
                     "instead; 1-r: pattern only; rmse: their RMSE (default: 1-r+huber)")
    opt.add_argument("--grid", type=int, default=None, metavar="N",
                     help="when G is fitted and --G is not given: scan N values of G evenly "
                     "spaced over [G0 / 3, 3 G0] (G0 the model's default; extended up to twice, 3x "
                     "beyond its edge, if needed), one forward simulation each, for the bracket "
                     "where the simulated mean FC crosses the empirical one (--bisect narrows "
                     f"it); the fit starts at the lowest loss seen. 0: start at G0 (default "
                     f"{DEFAULT_GRID})")
    opt.add_argument("--bisect", type=int, default=None, metavar="K",
                     help="bisections of the bracket of the mean-FC crossing (each one "
                     f"forward simulation; default {DEFAULT_BISECT}: 2^-{DEFAULT_BISECT} of "
                     "the grid's spacing)")
    opt.add_argument("--fcd-weight", type=float, default=0.0, dest="fcd_weight",
                     help="weight of an FCD term in the loss: the smoothed Kolmogorov-Smirnov "
                     "distance between the simulated and the training subjects' FCD values "
                     "(--fcd-window, --fcd-step; --duration must hold a window; default 0: none)")
    opt.add_argument("--steps", type=int, default=None,
                     help=f"optimization steps (default {DEFAULT_STEPS})")
    opt.add_argument("--lr", type=float, default=DEFAULT_LR,
                     help="Adam learning rate on the unconstrained scale at the first step, "
                     f"cosine-decayed to a tenth at the last (default {DEFAULT_LR})")
    opt.add_argument("--remat", default="uniform:1000+save",
                     help="gradient checkpointing: none, uniform:K, nested:K1,K2 or "
                     "multilevel:B, +save after it to keep the solver stages (a faster "
                     "gradient for more memory; default uniform:1000+save: the state kept "
                     "every 1000 steps, a block's stages while it is differentiated)")
    opt.add_argument("--no-gradient-check", action="store_true", default=None,
                     dest="no_gradient_check",
                     help="skip the check of the gradient against central finite differences "
                     "along a random direction at the start (4 forward simulations and one "
                     "gradient; a disagreement is printed and saved in params.json)")
    opt.add_argument("--redraw", action="store_true",
                     help="new noise every step, the fitted values the mean over the second "
                     "half of the steps (default: one fixed realisation, the best step)")
    opt.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    opt.add_argument("--quick", action="store_true",
                     help="a smoke run of the whole command: a coarser scan (9 values of G, "
                     "4 bisections), one held-out set of 4 x 72 s, no gradient check, no "
                     "error bars; with the simulation engine also 3 steps of 2 x 14.4 s. "
                     "Options given explicitly keep their values")


def add_data_options(p: argparse.ArgumentParser) -> None:
    """The data options of ``netdyn fit``: connectome, FC, BOLD runs and their split."""
    data = p.add_argument_group("data")
    data.add_argument("--dataset", default="hcp",
                      help=f"embedded dataset name ({', '.join(datasets.available())}), "
                      "a .npz file (arrays weights, lengths, fc) or a TVB connectivity .zip "
                      "(default: hcp)")
    data.add_argument("--weights", metavar="CSV",
                      help="weights matrix file [target, source] (replaces --dataset)")
    data.add_argument("--lengths", metavar="CSV", help="tract lengths file in mm (with --weights)")
    data.add_argument("--fc", metavar="FILE", help="empirical FC matrix to fit (.csv/.txt or "
                      ".npy); default: the mean FC of the training subjects (--train-subjects), "
                      "else the dataset's. Alone, it leaves the dataset's subjects unused (not "
                      "this FC's: no test-subject scores, no leave-one-subject-out error bars); "
                      "give its subjects' BOLD with --bold instead to have both")
    data.add_argument("--bold", nargs="+", metavar="FILE",
                      help="regional BOLD time series, one file per subject (or per run; "
                      "each file is one 'subject' below): TSV/CSV as written "
                      "by fMRIPrep, XCP-D or nilearn (one column per region, rows = TRs, "
                      "optional header; the TR from a BIDS JSON sidecar's RepetitionTime), "
                      "or .npy [time, regions] / [runs, time, regions]; default: the "
                      "dataset's (the embedded hcp has one run of each of 7 subjects)")
    data.add_argument("--train-subjects", "--train-runs", dest="train_subjects",
                      metavar="LIST",
                      help="the subjects whose mean FC is fitted, counted from 1, e.g. 1-4 "
                      "or 1,3,5 (default: the first half, rounded up: 1-4 of 7; "
                      "--train-runs is the old name)")
    data.add_argument("--test-subjects", "--test-runs", dest="test_subjects", metavar="LIST",
                      help="the subjects the fit is scored on, never seen by it: FC r, mean "
                      "FC, saturation, FCD KS and the noise ceiling (r between training and "
                      "test FC); 'none' for no test (default: those not trained on; "
                      "--test-runs is the old name)")
    data.add_argument("--normalise", action="store_true",
                      help="divide the weights by their maximum")


def add_output_options(p: argparse.ArgumentParser) -> None:
    """The held-out check and output options of ``netdyn fit``."""
    held = p.add_argument_group("held-out validation")
    held.add_argument("--heldout-duration", type=float, default=None,
                      help="measured ms per realisation of the held-out simulation at the "
                      "fitted parameters, with noise the fit never saw (default "
                      f"{DEFAULT_HELDOUT_DURATION:.0f})")
    held.add_argument("--heldout-realisations", type=int,
                      default=None,
                      help="held-out noise realisations; their FCs are averaged (default "
                      f"{DEFAULT_HELDOUT_REALISATIONS})")
    held.add_argument("--heldout-sets", type=int, default=None,
                      help="independent held-out noise sets, each of --heldout-realisations "
                      "runs: the held-out metrics and the test-run scores are reported as "
                      f"mean and standard deviation over them (default {DEFAULT_HELDOUT_SETS})")
    held.add_argument("--uncertainty", choices=("auto", "on", "off"), default=None,
                      help="95 %% intervals of the fitted parameters from two sources: other "
                      "noise (the gradient's spread over --uncertainty-keys fresh keys, "
                      "through the loss's Hessian) and other runs (leaving out each training "
                      "run, one Newton step each); auto: on for at most "
                      f"{AUTO_COORDINATES} fitted values (default auto)")
    held.add_argument("--uncertainty-keys", type=int, default=4, dest="uncertainty_keys",
                      help="noise keys for the intervals, >= 2 (default 4)")
    held.add_argument("--fcd-window", type=int, default=None, dest="fcd_window", metavar="TRS",
                      help="FCD sliding window in TRs (default: the TRs in 60 s, 83 at TR 720 ms)")
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

