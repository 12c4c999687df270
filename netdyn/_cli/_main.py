"""``main``: the entry point of the ``netdyn`` command."""

from collections.abc import Sequence

import jax

from ._fit_command import fit_command
from ._parser import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``netdyn`` command (``netdyn fit --help``).

    Turns on ``jax_enable_x64`` (float64 simulation) for the process.

    **Arguments**: ``argv``, the arguments without the program name (default:
    ``sys.argv[1:]``).

    **Returns** the exit status: 0 on success, 1 if the fit diverged (the history and
    checkpoint are still written), 2 for invalid arguments (reported on stderr).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    # The command owns its process: simulate in float64, as the library's tests do.
    jax.config.update("jax_enable_x64", True)
    if args.command == "fit":
        try:
            return fit_command(args)
        except ValueError as e:
            parser.exit(2, f"netdyn fit: error: {e}\n")
    return 2  # pragma: no cover - argparse requires a command
