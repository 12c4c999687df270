"""Checks of the numeric options of ``netdyn fit``, naming the flag, before anything runs.

The library checks the same things deeper down, but names what it sees there (a monitor
called ``'signal'``, ``t1 - t0``): a person typed ``--tr`` and ``--duration``.
"""

import math

from ._defaults import LINEAR_MODELS

# The time loop counts steps in int32.
_MAX_STEPS = 2**31 - 1


def _positive(flag: str, value: float, unit: str = "") -> None:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{flag} must be a finite number{unit} > 0, got {value}.")


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
    for flag, value in (("--realisations", args.realisations),
                        ("--heldout-realisations", args.heldout_realisations),
                        ("--checkpoint-every", args.checkpoint_every),
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
    if not (math.isfinite(args.fcd_weight) and args.fcd_weight >= 0):
        raise ValueError(f"--fcd-weight must be a finite number >= 0, got {args.fcd_weight}.")
    if not (math.isfinite(args.burn_in) and args.burn_in >= 0):
        raise ValueError(f"--burn-in must be a finite number of ms >= 0, got {args.burn_in}.")
    _positive("--speed", args.speed, " of mm/ms")
    if args.G is not None:
        _positive("--G", args.G)
    if args.sigma is not None and not (math.isfinite(args.sigma) and args.sigma >= 0):
        raise ValueError(f"--sigma must be a finite number >= 0, got {args.sigma}.")
    fitted = {spec.partition(":")[0].strip() for spec in args.fit.split(",")}
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
    _whole("--tr", args.tr, "time steps --dt", args.dt)
    if not (math.isfinite(args.warmup) and args.warmup >= 0):
        raise ValueError(f"--warmup must be a finite number of ms >= 0, got {args.warmup}.")
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
