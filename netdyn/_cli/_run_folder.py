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
from .._persistence.atomic import check_writable
from .._persistence.resume import saved_steps
from .._persistence.run_settings import RunSettings
from .._persistence.strict_json import read_json_object
from .._search.scan_record import read_scan_record
from ._plan import FitPlan, plan_options

CHECKPOINT = "checkpoint.eqx"
SETTINGS = "settings.json"
SCAN = "scan.json"
# What a fit leaves in its folder: what --overwrite replaces.
MODEL = "model.eqx"
RESULTS = ("params.json", "history.csv", "history.json", "fc_simulated.csv",
           "fc_heldout.csv", "fit.png", MODEL, CHECKPOINT, SCAN)
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


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def prepare(args) -> Path:
    """Check ``--out`` for this run and make it ready: the folder, writable, with no
    results of another fit (or ``--overwrite``: removed) and, on ``--resume``, the
    checkpoint of a fit with the same settings. ``ValueError`` naming the flag."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; give a folder for the results.")
    checkpoint = out / CHECKPOINT
    if checkpoint.is_dir():
        raise ValueError(f"--out {out}: {checkpoint} is a folder, not a checkpoint file; "
                         "move it away.")
    if args.resume and args.overwrite:
        raise ValueError("--resume continues the fit in --out, --overwrite replaces it: "
                         "give one of them.")
    if args.resume:
        _check_resumable(args, out)
    found = [name for name in RESULTS if (out / name).exists()]
    if found and not (args.resume or args.overwrite):
        raise ValueError(
            f"--out {out} already holds the results of a fit ({', '.join(found)}): pass "
            "--overwrite to replace them, --resume to continue that fit, or another --out."
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"--out {out}: the folder cannot be made ({e.strerror}).") from None
    check_writable(out / SETTINGS, "--out: the file")
    if not args.resume:
        for name in found:  # --overwrite: nothing of the earlier fit stays beside the new
            (out / name).unlink()
        _record(out).write(settings(args))
    return out


def _check_resumable(args, out: Path) -> None:
    if not (out / CHECKPOINT).is_file():
        raise ValueError(
            f"--resume: there is no checkpoint in {out} ({out / CHECKPOINT} does not exist); "
            "run without --resume to start a new fit there."
        )
    changed = _record(out).changed(settings(args), FREE)
    if changed:
        name, (value, saved) = next(iter(changed.items()))
        raise ValueError(
            f"--resume: {_flag(name)} is {value!r} here but {saved!r} in the fit in {out} "
            f"({out / SETTINGS}); resume with the same settings, or start a new fit "
            "(--overwrite, or another --out) to change them."
        )


def _record(out: Path) -> RunSettings:
    """``out/settings.json``: the options of the fit, and its resumes."""
    return RunSettings(out, "--resume: ", f"; the settings of the fit in {out} are unknown: "
                       "start it afresh with --overwrite", _RENAMED)


# Options renamed since (old settings.json key -> new).
_RENAMED = {"train_runs": "train_subjects", "test_runs": "test_subjects"}


def record_resume(args, out: Path, step: int) -> None:
    """Add this resume to ``out/settings.json``: the step it continues from and the options
    that differ from the fit's saved ones (those of ``FREE``, such as ``--remat``: the steps
    after ``step`` were computed with them); ``resumes`` reads them back."""
    _record(out).record_resume(settings(args), step, ignore=("resume", "overwrite"))


def resumes(out: Path) -> list[dict]:
    """The resumes recorded in ``out/settings.json`` (``record_resume``), oldest first."""
    return _record(out).resumes()


def read_scan(out: Path) -> dict:
    """``out/scan.json``, written by the scan of G of the fit resumed, every field checked
    (``nd.read_scan_record``: ``ValueError`` naming the file and the field)."""
    return read_scan_record(out / SCAN, "--resume: ")


def checkpoint_steps(out: Path) -> tuple[int, int] | None:
    """``(steps done, steps in all)`` of the checkpoint in ``out`` (validated: a corrupt
    or hand-edited file is a ``ValueError`` naming it), ``None`` if there is none."""
    path = out / CHECKPOINT
    if not path.is_file():
        return None
    return saved_steps(path)


def command_line(argv: Sequence[str], flag: str) -> str:
    """``argv`` as a ``netdyn`` command line, with ``flag`` in place of ``--resume`` or
    ``--overwrite``: the command that continues the run (``"--resume"``) or starts it
    again from nothing (``"--overwrite"``)."""
    kept = [a for a in argv if a not in ("--resume", "--overwrite")]
    return shlex.join(["netdyn", *kept, flag])


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
    model = folder / MODEL
    if not model.is_file():
        raise ValueError(f"nd.cli.load_fitted: {model} does not exist; {folder} holds no "
                         "finished fit (the command writes it with params.json).")
    options = read_json_object(folder / SETTINGS, "nd.cli.load_fitted: ")["settings"]
    jax.config.update("jax_enable_x64", True)  # as the netdyn command does
    planned = plan_options(argparse.Namespace(command="fit", **options))
    return eqx.tree_deserialise_leaves(model, planned.network), planned
