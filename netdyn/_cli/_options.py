"""What the options of ``netdyn fit`` mean beyond the parser: the description ``--help``
prints above them (it states the defaults kept here), the defaults that depend on other
options (the engine, ``auto``; what is fitted, the burn-in, the held-out check's length and
the ``--quick`` profile), and the checks of the numeric options.

Options whose default depends on another are ``None`` in the parser and filled here, once,
before anything is checked or built; an option given on the command line is never changed.
The checks name the flag before anything runs: the library checks the same things deeper
down, but names what it sees there (a monitor called ``'signal'``, ``t1 - t0``): a person
typed ``--tr`` and ``--duration``. What the library checks when the plan is built (before
anything runs) is not checked again here: its error is said with the flag (``naming``).
"""

import contextlib
import math

from .._presets.models import MODELS

DEFAULT_DURATION = 43_200.0
DEFAULT_REALISATIONS = 4
DEFAULT_HELDOUT_DURATION = 288_000.0
DEFAULT_HELDOUT_REALISATIONS = 4
DEFAULT_HELDOUT_SETS = 2
DEFAULT_GRID = 17
DEFAULT_BISECT = 8
DEFAULT_STEPS = 12
DEFAULT_LR = 0.01

# The models whose FC the analytic engine describes (``Preset.analytic``).
LINEAR_MODELS = tuple(name for name, model in MODELS.items() if model.analytic)

# What --quick changes (only where the option is not given): a smoke run of the whole
# command, with a coarser scan, a short held-out check, no gradient check, no error bars.
QUICK = {
    "linear": {"grid": 9, "bisect": 4, "heldout_sets": 1, "heldout_duration": 72_000.0,
               "uncertainty": "off", "no_gradient_check": True},
    "simulation": {"grid": 9, "bisect": 4, "steps": 3, "duration": 14_400.0,
                   "realisations": 2, "heldout_sets": 1, "heldout_duration": 72_000.0,
                   "uncertainty": "off", "no_gradient_check": True},
}

FULL = {"grid": DEFAULT_GRID, "bisect": DEFAULT_BISECT, "steps": DEFAULT_STEPS,
        "duration": DEFAULT_DURATION, "realisations": DEFAULT_REALISATIONS,
        "heldout_sets": DEFAULT_HELDOUT_SETS,
        "heldout_realisations": DEFAULT_HELDOUT_REALISATIONS, "uncertainty": "auto",
        "no_gradient_check": False}

# What `netdyn fit --help` prints above the options (its figures are the defaults above).
FIT_HELP = """\
Fit a delay-coupled network model to the functional connectivity (FC) of training subjects'
BOLD, and score it on test subjects it never saw, with noise it never saw.

With no options: the embedded HCP group connectome (80 AAL2 regions; delays = tract
length / 4 mm/ms, up to 62 ms) and the BOLD of its 7 subjects; two-population Wong-Wang
nodes with feedback inhibition control (rww-ei-fic: every region's inhibitory weight set
so that its excitatory rate is 3 Hz), delayed linear coupling, additive noise,
Balloon-Windkessel BOLD at the data's TR (720 ms). G is fitted on the analytic FC
(--engine auto picks linear for this model); every reported score is simulated:

- Subjects 1-4 train, 5-7 test (--train-subjects, --test-subjects; by default the first
  half, rounded up, trains): the target is the training subjects' mean FC. The test score
  is reported beside the noise ceiling, the FC r between the training and the test
  subjects' FCs (0.899 here: two groups of people), which no model can be expected to
  beat. --bold reads your own BOLD (one file per subject); --fc fits a given FC.
- Each step's loss (--engine): linear, the analytic FC of the network linearised at its
  stable fixed point (Lyapunov equation: exact, noise-free, a fraction of a second), for
  models that fluctuate around one (rww-ei-fic); or simulation, the FC of 4 noise
  realisations of 43.2 s of BOLD after a burn-in that is not compared (57.6 s; 28.8 s
  for rww-ei-fic), differentiated exactly through the whole simulation
  (--truncated-gradient: cheaper, approximate). Only the simulation fits sigma (a
  uniform noise amplitude cancels in the analytic FC), an FCD term, rww and hopf.
- Pattern and level: the loss is 1 - r + h(mean FC - empirical mean FC), with r the
  Pearson correlation of the FC upper triangles and h Huber's function of width 0.05.
- The start: a scan of 17 values of G, a search for the peak of the mean FC and 8
  bisections of the G where it meets the data's mean FC; the fit starts at the lowest
  loss seen. If no G reaches the data's level, it stops with exit status 3 (a simulated
  scan whose peak falls short by less than the loss's level width, 0.05, starts at that
  peak: one short simulation reads the level low). Then Adam refines (12 steps; a step
  that raises the loss is retried at half the length: netdyn.backtrack). The gradient
  is checked against central finite differences at the start (--no-gradient-check).
- Held-out check: the fitted model simulated with new noise, 2 sets of 4 x 288 s
  (--heldout-sets, --heldout-duration; a shorter --duration shortens them in
  proportion): FC r, mean FC, fraction of pairs above 0.9 (saturation) and FCD KS
  against the training and the test subjects, with the fraction of the noise ceiling,
  as mean and sd over the sets.
- Error bars: 95 % intervals of the fitted parameters from other subjects (leaving out
  each training subject) and, with the simulation engine, other noise (4 fresh keys),
  through the loss's Hessian, when at most 8 values are fitted (--uncertainty); a
  parameter the loss does not constrain gets none and is named. With an interval for G,
  the loss along G (5 points) is drawn beside the quadratic model the interval rests on.
- Long check (simulation engine, 2 or more held-out sets): for each fitted global value
  (G, sigma) without an interval, the loss at the held-out length at 0.8x and 1.25x it,
  and at 0.5x / 2x on a side flat there (sigma with G moved back onto the fit's FC
  level), each set with its own noise. A point is lower (higher) where every set is and
  the mean change passes a 95 % t test over the sets: lower is a caution (the fit
  missed the minimum); higher points bound the value (reported: "below X", "between X
  and Y"); flat at every point: not constrained by the FC over that range.

Time on 2 CPU cores (float64), an otherwise idle machine (load average 0.6): 68 s
for the whole command (the scan, the gradient check and the fit 19 s; the held-out
simulations 31 s; the error bars 10 s); --quick 20 s; --model rww (every step
simulated) 959 s at load 3-4, before the BOLD was integrated every 10 ms
(benchmarks/fit.md and fit_rww.md in the source repository).

Writes to --out, one folder per fit (each file written atomically): settings.json,
scan.json (the search for the start), params.json (fitted and initial parameters in the
units of --G and --sigma with their intervals, every score and the settings),
history.csv and history.json (one row per step), fc_simulated.csv, fc_heldout.csv,
model.eqx (the fitted network: nd.cli.load_fitted(DIR)), checkpoint.eqx and fit.png
(with matplotlib: pip install "netdyn[plot]"). Results are not replaced without
--overwrite. Ctrl-C keeps the steps done and prints the command that continues the fit
(--resume). Exit status: 0 fitted, 1 diverged, 2 bad options or files, 3 no usable
start, 130 interrupted.
"""


def fitted_names(fit: str | None) -> set[str]:
    """The parameters ``--fit`` names, without their ``:global``/``:maps`` suffixes."""
    return set() if fit is None else {s.partition(":")[0].strip() for s in fit.split(",")}


def engine(args) -> str:
    """``--engine auto``: the analytic engine for a model it describes (``LINEAR_MODELS``)
    when nothing asked for needs simulated time series (sigma in ``--fit``, an FCD term),
    else the simulation."""
    if args.engine != "auto":
        return args.engine
    needs_simulation = "sigma" in fitted_names(args.fit) or args.fcd_weight > 0
    return "linear" if args.model in LINEAR_MODELS and not needs_simulation else "simulation"


def heldout_duration(args, given_duration: bool) -> float:
    """The held-out simulations' length: 288 s; with a ``--duration`` shorter than its
    default, shorter in proportion (in whole TRs), so that a short request stays short."""
    if not given_duration or args.duration >= DEFAULT_DURATION:
        return DEFAULT_HELDOUT_DURATION
    scaled = args.duration * DEFAULT_HELDOUT_DURATION / DEFAULT_DURATION
    return max(args.duration, math.ceil(scaled / args.tr - 1e-9) * args.tr)


def fill_defaults(args) -> None:
    """Fill, in place, the options left ``None`` by the parser (see the module's text)."""
    args.engine = engine(args)
    if args.fit is None:
        args.fit = "G" if args.engine == "linear" else "G,sigma"
    if args.burn_in is None:
        args.burn_in = MODELS[args.model].burn_in
    given_duration = args.duration is not None
    profile = QUICK[args.engine] if args.quick else {}
    for name, value in (FULL | profile).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.heldout_duration is None:
        args.heldout_duration = heldout_duration(args, given_duration)

@contextlib.contextmanager
def naming(flag: str, *library: str):
    """A ``ValueError`` raised inside, said with the option ``flag`` that gave the value:
    ``"FLAG MESSAGE"`` (the error of that option's parser, which names its text), or, with
    ``library`` (the library's names of that value, such as ``"FcLoss realisations"``),
    ``"FLAG: MESSAGE"`` for an error that names one of them (others pass unchanged)."""
    try:
        yield
    except ValueError as e:
        if library and not any(name in str(e) for name in library):
            raise
        raise ValueError(f"{flag}{':' if library else ''} {e}") from None


def one_line(e: BaseException) -> str:
    """An error as one line that names its input (a file error names the file)."""
    if isinstance(e, OSError) and e.strerror:
        text = f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    else:
        text = str(e) or type(e).__name__
    return " ".join(text.split())


# The time loop counts steps in int32.
_MAX_STEPS = 2**31 - 1


def _positive(flag: str, value: float, unit: str = "", zero: bool = False) -> None:
    """A finite ``value`` > 0 (>= 0 with ``zero``), else a ``ValueError`` naming ``flag``."""
    if not (math.isfinite(value) and (value >= 0 if zero else value > 0)):
        sign = ">=" if zero else ">"
        raise ValueError(f"{flag} must be a finite number{unit} {sign} 0, got {value}.")


def _whole(flag: str, value: float, of: str, period: float) -> int:
    """``value / period`` as an integer, or a ``ValueError`` naming both flags."""
    n = round(value / period)
    if n < 1 or abs(n * period - value) > 1e-9 * max(1.0, abs(value)):
        raise ValueError(f"{flag} ({value:g} ms) must be a whole number of {of} "
                         f"({period:g} ms), e.g. {max(n, 1) * period:g}.")
    return n


def check_numbers(args) -> None:
    """Reject out-of-range numeric options, naming the flag."""
    if args.steps < 1:
        raise ValueError(f"--steps must be >= 1, got {args.steps}.")
    if not args.lr > 0:
        raise ValueError(f"--lr must be positive, got {args.lr}.")
    for flag, value in (("--checkpoint-every", args.checkpoint_every),
                        ("--heldout-sets", args.heldout_sets)):
        if value < 1:
            raise ValueError(f"{flag} must be >= 1, got {value}.")
    if args.uncertainty_keys < 2:
        raise ValueError(f"--uncertainty-keys must be >= 2 (a spread needs two), got "
                         f"{args.uncertainty_keys}.")
    if args.grid < 0 or args.grid in (1, 2):
        raise ValueError(f"--grid must be 0 (no scan) or >= 3, got {args.grid}.")
    if args.bisect < 0:
        raise ValueError(f"--bisect must be >= 0, got {args.bisect}.")
    _positive("--fcd-weight", args.fcd_weight, zero=True)
    _positive("--burn-in", args.burn_in, " of ms", zero=True)  # used below, before FcLoss
    if args.chain_burn_in is not None:
        _positive("--chain-burn-in", args.chain_burn_in, " of ms", zero=True)
        if args.engine != "simulation":
            raise ValueError("--chain-burn-in continues simulated runs: it needs the "
                             "simulation engine (--engine simulation).")
    if args.G is not None:
        _positive("--G", args.G)
    if args.sigma is not None:
        _positive("--sigma", args.sigma, zero=True)
    fitted = fitted_names(args.fit)
    if args.sigma == 0 and "sigma" in fitted:
        raise ValueError("--sigma 0 cannot be fitted (it is fitted on a log scale): give "
                         "--sigma > 0, or leave sigma out of --fit.")
    if args.engine == "linear" and args.model not in LINEAR_MODELS:
        raise ValueError(f"--engine linear with --model {args.model}: the analytic FC does not "
                         f"describe this model (measured against long simulations, it holds "
                         f"for {', '.join(LINEAR_MODELS)} only: rww is bistable where its "
                         "fit lives, hopf's fluctuations are set by its cubic term); use "
                         "--engine simulation.")
    if args.engine == "linear" and "sigma" in fitted:
        raise ValueError("--fit sigma with --engine linear: a uniform noise amplitude cancels "
                         "in the analytic FC, which therefore says nothing about it; fit sigma "
                         "with --engine simulation, or leave it out of --fit.")
    if args.engine == "linear" and args.fcd_weight > 0:
        raise ValueError("--fcd-weight with --engine linear: the FCD needs simulated time "
                         "series; use --engine simulation.")
    _check_times(args)


def _check_times(args) -> None:
    _positive("--dt", args.dt, " of ms")
    _positive("--tr", args.tr, " of ms")
    _positive("--warmup", args.warmup, " of ms", zero=True)
    _whole("--tr", args.tr, "time steps --dt", args.dt)
    burn_in = math.ceil(args.burn_in / args.tr - 1e-9) * args.tr  # whole TRs, as FcLoss
    skipped = math.ceil(args.warmup / args.tr - 1e-9)  # BOLD samples --warmup drops
    # The warm-up applies to every simulation, the burn-in's too.
    if burn_in > 0 and round(burn_in / args.tr) - skipped < 1:
        raise ValueError(f"--warmup ({args.warmup:g} ms) leaves no BOLD sample of the "
                         f"--burn-in ({burn_in:g} ms in whole TRs); --warmup is meant for "
                         "--burn-in 0.")
    for flag, duration in (("--duration", args.duration),
                           ("--heldout-duration", args.heldout_duration)):
        _positive(flag, duration, " of ms")
        samples = _whole(flag, duration, "TRs --tr", args.tr)
        if samples - skipped < 2:
            raise ValueError(f"{flag} ({duration:g} ms) leaves fewer than 2 BOLD samples "
                             f"(--tr {args.tr:g}, --warmup {args.warmup:g}) for an FC.")
        steps = (burn_in + duration) / args.dt
        if steps > _MAX_STEPS:
            raise ValueError(f"--burn-in + {flag} is {steps:.3g} steps of --dt {args.dt:g} ms, "
                             f"more than the {_MAX_STEPS} one simulation can count.")
