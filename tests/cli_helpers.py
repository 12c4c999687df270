"""What the tests of the ``netdyn fit`` command share: the tiny fit's options and the
checks of a one-line error."""

import io
from pathlib import Path

import pytest

import netdyn as nd

# A very short simulation: a 7.2 s burn-in, then 2 realisations of 7.2 s with BOLD at the
# data's TR of 720 ms (10 samples each); held-out: one realisation of 7.2 s. Short, but past
# the first seconds' transient, so that the scan finds G where the mean FC crosses the data's.
# The single-population model fitted by simulation (--model rww: G and sigma), at tiny sizes;
# the default model and engine (rww-ei-fic, analytic) have tests of their own.
TINY = ["fit", "--model", "rww", "--duration", "7200", "--burn-in", "7200", "--realisations", "2",
        "--heldout-duration", "7200", "--heldout-realisations", "1", "--grid", "3",
        "--bisect", "3", "--uncertainty", "off", "--heldout-sets", "1", "--remat", "none"]


OUTPUTS = ("params.json", "history.csv", "history.json", "fc_simulated.csv", "fc_heldout.csv",
           "model.eqx",
           "fit.png", "settings.json", "scan.json")


def fail(argv, capsys) -> str:
    """Run ``argv``, expecting a one-line error with exit status 2; the line."""
    with pytest.raises(SystemExit) as info:
        nd.cli.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


class Watch(io.StringIO):
    """A stream that calls ``act()`` when ``text`` is first written to it."""

    def __init__(self, text: str, act):
        super().__init__()
        self.text, self.act, self.seen = text, act, False

    def write(self, s: str) -> int:
        n = super().write(s)
        if not self.seen and self.text in self.getvalue():
            self.seen = True
            self.act()
        return n


def announced(out: Path) -> str:
    """The start of the line ``netdyn fit`` prints when it starts simulating."""
    return f"results in {out}/"
