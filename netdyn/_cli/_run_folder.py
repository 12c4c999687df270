"""The results folder of ``netdyn fit`` (``--out``): checked before any simulation.

A folder holds one fit. Its ``settings.json`` records the options of that fit when it
starts, so that ``--resume`` continues only the same fit, and each resume (the step it
continued from, the options it changed); results of an earlier fit are never replaced
without ``--overwrite``. ``load_fitted`` reads a finished fit back into Python.
"""

import argparse
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

import equinox as eqx
import jax

from .._network import Network
from .._persistence.fit_results import RESULT_FILES
from .._persistence.run_folder import RunFolder
from .._persistence.strict_json import read_json_object
from ._plan import FitPlan, plan_options

CHECKPOINT = "checkpoint.eqx"
SETTINGS = "settings.json"
SCAN = "scan.json"
# What a fit leaves in its folder: what --overwrite replaces.
RESULTS = (*RESULT_FILES, CHECKPOINT, SCAN)
# Options that do not change the optimization: they may differ on --resume. --remat
# changes memory and time; in exact arithmetic not the values, in floating point their last
# digits (XLA compiles the recomputation differently: ~1e-16 relative in the steps after
# the resume; the steps before it are kept as recorded). settings.json records each resume
# with the options it changed (record_resume).
FREE = frozenset({"out", "resume", "overwrite", "checkpoint_every", "no_plot", "quiet",
                  "heldout_duration", "heldout_realisations", "remat", "test_subjects",
                  "no_gradient_check", "heldout_sets", "uncertainty", "uncertainty_keys"})


def settings(args) -> dict:
    """The options of ``args`` (argparse names), as given."""
    return {k: v for k, v in vars(args).items() if k != "command"}


def run_folder(out: str | os.PathLike) -> RunFolder:
    """The results folder ``out`` (``nd.RunFolder``), its errors naming the options."""
    return RunFolder(Path(out), RESULTS, CHECKPOINT, FREE, _RENAMED, {
        "folder": "--out", "resume": "--resume", "overwrite": "--overwrite"},
        option=lambda name: "--" + name.replace("_", "-"))


# Options renamed since (old settings.json key -> new).
_RENAMED = {"train_runs": "train_subjects", "test_runs": "test_subjects"}


def prepare(args) -> Path:
    """Check ``--out`` for this run and make it ready (``RunFolder.prepare``)."""
    return run_folder(args.out).prepare(settings(args), resume=args.resume,
                                        overwrite=args.overwrite)


def record_resume(args, out: Path, step: int) -> None:
    """Add this resume to ``out/settings.json``: the step it continues from and the options
    that differ from the fit's saved ones (those of ``FREE``, such as ``--remat``: the steps
    after ``step`` were computed with them)."""
    run_folder(out).record.record_resume(settings(args), step, ignore=("resume", "overwrite"))


def command_line(argv: Sequence[str], flag: str) -> str:
    """``argv`` as a ``netdyn`` command line, with ``flag`` in place of ``--resume`` or
    ``--overwrite``: the command that continues the run (``"--resume"``) or starts it
    again from nothing (``"--overwrite"``)."""
    kept = [a for a in argv if a not in ("--resume", "--overwrite")]
    return shlex.join(["netdyn", *kept, flag])


def resume_hint(out: Path, argv: Sequence[str]) -> tuple[str | None, str]:
    """What the checkpoint in ``out`` holds, in words (``None`` without a step done), and
    the command that continues the fit from it (or, without a step, starts it again)."""
    saved = run_folder(out).saved_steps()
    if saved is None or saved[0] == 0:
        return None, command_line(argv, "--overwrite")
    return (f"{saved[0]} of {saved[1]} steps are saved in {out / CHECKPOINT}",
            command_line(argv, "--resume"))


def load_fitted(folder: str | os.PathLike) -> tuple[Network, FitPlan]:
    """The fitted network of the ``netdyn fit`` whose results are in ``folder``, and the
    plan of that fit (``nd.cli.plan`` of its options: data, losses, fitted leaves).

    The network's structure is rebuilt from ``folder/settings.json`` (the options, with
    the files they name read again) and its leaves are read from ``folder/model.eqx``
    (``eqx.tree_deserialise_leaves``), so ``nd.simulate(network, ...)`` continues from
    exactly what the command fitted. Turns on ``jax_enable_x64``, as the command does.
    A folder without a finished fit raises a ``ValueError`` that names the file.
    """
    folder = Path(folder)
    model = folder / "model.eqx"
    if not model.is_file():
        raise ValueError(f"nd.cli.load_fitted: {model} does not exist; {folder} holds no "
                         "finished fit (the command writes it with params.json).")
    options = read_json_object(folder / SETTINGS, "nd.cli.load_fitted: ")["settings"]
    jax.config.update("jax_enable_x64", True)  # as the netdyn command does
    planned = plan_options(argparse.Namespace(command="fit", **options))
    return eqx.tree_deserialise_leaves(model, planned.network), planned
