"""The results folder of ``netdyn fit`` (``--out``): checked before any simulation.

A folder holds one fit. Its ``settings.json`` records the options of that fit when it
starts, so that ``--resume`` continues only the same fit; results of an earlier fit are
never replaced without ``--overwrite``.
"""

import json
import shlex
from collections.abc import Sequence
from pathlib import Path

from .._fit.atomic import check_writable
from .._fit.checkpoint import load_checkpoint
from ._atomic import write_json

CHECKPOINT = "checkpoint.eqx"
SETTINGS = "settings.json"
SCAN = "scan.json"
# What a fit leaves in its folder: what --overwrite replaces.
RESULTS = ("params.json", "history.csv", "history.json", "fc_simulated.csv",
           "fc_heldout.csv", "fit.png", CHECKPOINT, SCAN)
# Options that do not change the optimisation: they may differ on --resume (--remat
# changes memory and time, not the values: checkpointed gradients are exact).
FREE = frozenset({"out", "resume", "overwrite", "checkpoint_every", "no_plot", "quiet",
                  "heldout_duration", "heldout_realisations", "remat", "test_runs",
                  "no_gradient_check"})


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
        write_json(out / SETTINGS, {"settings": settings(args)})
    return out


def _check_resumable(args, out: Path) -> None:
    if not (out / CHECKPOINT).is_file():
        raise ValueError(
            f"--resume: there is no checkpoint in {out} ({out / CHECKPOINT} does not exist); "
            "run without --resume to start a new fit there."
        )
    path = out / SETTINGS
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))["settings"]
    except FileNotFoundError:
        raise ValueError(f"--resume: {path} is missing, so the settings of the fit in {out} "
                         "are unknown; start it afresh with --overwrite.") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"--resume: {path} cannot be read ({e}).") from None
    for name, value in settings(args).items():
        if name not in FREE and saved.get(name) != value:
            raise ValueError(
                f"--resume: {_flag(name)} is {value!r} here but {saved.get(name)!r} in the "
                f"fit in {out} ({path}); resume with the same settings, or start a new fit "
                "(--overwrite, or another --out) to change them."
            )


def checkpoint_steps(out: Path) -> tuple[int, int] | None:
    """``(steps done, steps in all)`` of the checkpoint in ``out`` (validated: a corrupt
    file is a ``ValueError``), ``None`` if there is none."""
    path = out / CHECKPOINT
    if not path.is_file():
        return None
    meta, _ = load_checkpoint(path)
    return int(meta["step"]), int(meta["steps"])


def _command(argv: Sequence[str], flag: str) -> str:
    """``argv`` as a ``netdyn`` command line, with ``flag`` in place of ``--resume`` or
    ``--overwrite``."""
    kept = [a for a in argv if a not in ("--resume", "--overwrite")]
    return shlex.join(["netdyn", *kept, flag])


def resume_command(argv: Sequence[str]) -> str:
    """The command line that continues the run started with ``argv``."""
    return _command(argv, "--resume")


def rerun_command(argv: Sequence[str]) -> str:
    """The command line that starts the run of ``argv`` again, from nothing."""
    return _command(argv, "--overwrite")
