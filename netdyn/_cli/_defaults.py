"""The defaults of ``netdyn fit`` that depend on other options: the engine (``auto``), what
is fitted, the burn-in, the held-out check's length and the ``--quick`` profile.

Options whose default depends on another are ``None`` in the parser and filled here, once,
before anything is checked or built; an option given on the command line is never changed.
"""

import math

from ._model import MODELS

DEFAULT_DURATION = 43_200.0
DEFAULT_REALISATIONS = 4
DEFAULT_HELDOUT_DURATION = 288_000.0
DEFAULT_HELDOUT_REALISATIONS = 4
DEFAULT_HELDOUT_SETS = 2
DEFAULT_GRID = 17
DEFAULT_BISECT = 8
DEFAULT_STEPS = 12
DEFAULT_LR = 0.01

# The models whose FC the analytic engine describes, measured against long simulations
# (FC r 0.955-0.982 at G 0.45-0.51 for rww-ei-fic). The single-population rww is bistable
# where its fit lives (FC r 0.40-0.95 against simulation) and hopf's cubic term sets its
# fluctuations at the default noise: the linear picture does not hold for them.
LINEAR_MODELS = ("rww-ei-fic",)

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


def _fitted_names(fit: str | None) -> set[str]:
    return set() if fit is None else {s.partition(":")[0].strip() for s in fit.split(",")}


def engine(args) -> str:
    """``--engine auto``: the analytic engine for a model it describes (``LINEAR_MODELS``)
    when nothing asked for needs simulated time series (sigma in ``--fit``, an FCD term),
    else the simulation."""
    if args.engine != "auto":
        return args.engine
    needs_simulation = "sigma" in _fitted_names(args.fit) or args.fcd_weight > 0
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
