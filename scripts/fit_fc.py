"""Fit a network model to an empirical FC: the same as ``netdyn fit`` (see ``--help``).

    python scripts/fit_fc.py                      # the reference fit, a few minutes on a CPU
    python scripts/fit_fc.py --fit G,I_o --steps 50 --out results/
"""

import sys

from netdyn._cli import main

if __name__ == "__main__":
    sys.exit(main(["fit", *sys.argv[1:]]))
