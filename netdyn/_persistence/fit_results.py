"""The result files of a finished fit (``netdyn fit --out``), each written atomically and
all of them or none."""

from pathlib import Path

import equinox as eqx

from .._fit.history import FitHistory
from .atomic import all_or_none, write_atomic, write_figure, write_matrix
from .strict_json import write_json

# What write_results writes, in the order a folder lists them.
RESULT_FILES = ("params.json", "history.csv", "history.json", "fc_simulated.csv",
                "fc_heldout.csv", "fit.png", "model.eqx")


def write_history(out: Path, history: FitHistory) -> None:
    """``history.csv`` and ``history.json`` (``FitHistory`` writes both atomically, with
    the same helper as ``atomic.py``), both or neither."""
    with all_or_none(out, ("history.csv", "history.json")):
        history.to_csv(out / "history.csv")
        history.to_json(out / "history.json")


def write_results(out: Path, report: dict, history: FitHistory, fitted, fc_fit, fc_heldout,
                  figure=None) -> None:
    """Write every result file into ``out``: ``model.eqx`` (the leaves of the network
    ``fitted``), the history, ``fc_simulated.csv`` and ``fc_heldout.csv`` (``fc_fit``,
    ``fc_heldout``), ``fit.png`` (a matplotlib ``figure``, if any) and ``params.json``
    (``report``). All of them or none: on a failure (a full disk) those written are
    removed, ``params.json`` (written last) included; a checkpoint stays."""
    with all_or_none(out, RESULT_FILES):
        write_atomic(out / "model.eqx", lambda f: eqx.tree_serialise_leaves(f, fitted))
        write_history(out, history)
        write_matrix(out / "fc_simulated.csv", fc_fit)
        write_matrix(out / "fc_heldout.csv", fc_heldout)
        if figure is not None:
            write_figure(out / "fit.png", figure)
        write_json(out / "params.json", report)
