"""``main``: the entry point of the ``netdyn`` command, and its error handling."""

import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import jax

from .._persistence import interrupt
from ._fit_command import fit_command
from ._options import one_line
from ._parser import build_parser
from ._report import finished_summary

# Said at the first Ctrl-C: the fit stops at its next safe point (see _persistence/interrupt.py).
_STOPPING = ("netdyn fit: Ctrl-C: stopping once the current step (or simulation) is done; "
             "the checkpoint keeps every step done (Ctrl-C again, more than "
             f"{interrupt.GRACE:g} s from now, stops sooner and loses the step in "
             "progress).\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``netdyn`` command (``netdyn fit --help``): ``main(["fit",
    "--out", "run"])`` runs ``netdyn fit --out run`` in this process.

    Turns on ``jax_enable_x64`` (float64 simulation) for the process. Ctrl-C is held back
    to safe points (as in ``netdyn.fit``): the fit stops after the step in progress,
    with its checkpoint, and a second Ctrl-C within seconds changes nothing. Called
    without ``argv`` (as the ``netdyn`` command), ``main`` owns its process: on return,
    Ctrl-C is ignored, so that one pressed while the process exits prints no traceback.

    **Arguments**: ``argv``, the arguments without the program name (default:
    ``sys.argv[1:]``).

    **Returns** the exit status: 0 on success, 1 if the fit diverged (the history and
    checkpoint are still written), 2 for invalid arguments or input files, or a file that
    cannot be written (a full disk; one line on stderr), 3 if no scanned G brings the
    simulated mean FC to the data's (no usable start: no fit is made), 130 if interrupted
    (Ctrl-C; the line says how to resume).
    """
    owned = argv is None
    with interrupt.defer_interrupts(_STOPPING) as stop:
        try:
            return _command(list(sys.argv[1:] if owned else argv))
        finally:
            stop.dismiss()  # a Ctrl-C after the last safe point: the command is done
            if owned:
                signal.signal(signal.SIGINT, signal.SIG_IGN)


def _command(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # The command owns its process: simulate in float64, as the library's tests do.
    jax.config.update("jax_enable_x64", True)
    try:
        if args.command == "summary":
            print(finished_summary(Path(args.out)))
            return 0
        return fit_command(args, argv)
    except (ValueError, OSError) as e:
        # Bad options, unreadable or corrupt files (checkpoints included), an unwritable
        # --out or a full disk: said in one line, not a traceback.
        parser.exit(2, f"netdyn {args.command}: error: {one_line(e)}\n")
    except KeyboardInterrupt:
        # Before the fit started (the fit command handles it from there on).
        print(f"netdyn {args.command}: interrupted.", file=sys.stderr)
        return 130
