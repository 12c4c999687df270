"""Checks of the numeric options of ``netdyn fit``, naming the flag."""

import math


def check_numbers(args) -> None:
    """Reject out-of-range numeric options, naming the flag."""
    if args.steps < 1:
        raise ValueError(f"--steps must be >= 1, got {args.steps}.")
    if not args.lr > 0:
        raise ValueError(f"--lr must be positive, got {args.lr}.")
    for flag, value in (("--realisations", args.realisations),
                        ("--heldout-realisations", args.heldout_realisations)):
        if value < 1:
            raise ValueError(f"{flag} must be >= 1, got {value}.")
    if args.grid < 0:
        raise ValueError(f"--grid must be >= 0, got {args.grid}.")
    if not (math.isfinite(args.burn_in) and args.burn_in >= 0):
        raise ValueError(f"--burn-in must be a finite number of ms >= 0, got {args.burn_in}.")

