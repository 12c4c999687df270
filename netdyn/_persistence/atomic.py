"""Files written atomically: a temporary file in the same folder, then ``os.replace``.

A reader (or a resumed fit) sees either the previous file or the new one, never a partial
one. The temporary file, ``.NAME.tmpPID``, is removed when the write fails in any way (an
exception, ``KeyboardInterrupt``); one left by a process killed mid-write (``SIGKILL``,
power loss) is removed by the next write of the same file.
"""

import contextlib
import glob
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

import numpy as np


def temp_path(path: Path) -> Path:
    """The temporary file that this process writes before replacing ``path``."""
    return path.with_name(f".{path.name}.tmp{os.getpid()}")


def _running(pid: int) -> bool:
    """Whether process ``pid`` may still be writing its temporary file."""
    if pid == os.getpid():
        # Ours, left by a failed write that could not remove it: the next write reuses it.
        return False
    if os.name != "posix":
        # os.kill(pid, 0) terminates the process on Windows: never probe there.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        # PermissionError: alive, another user's. Anything else: leave the file alone.
        return True
    return True


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files of ``path`` left by processes that no longer run
    (killed while writing it); returns the files removed."""
    prefix = f".{path.name}.tmp"
    removed = []
    for found in path.parent.glob(glob.escape(prefix) + "*"):
        pid = found.name[len(prefix):]
        if pid.isdigit() and not _running(int(pid)):
            found.unlink(missing_ok=True)
            removed.append(found)
    return removed


def check_writable(path: str | os.PathLike, what: str) -> None:
    """``ValueError`` naming ``what`` and ``path`` unless ``path`` can be written atomically
    (its folder exists and is writable, and it is not itself a folder), so that a long run
    fails before it starts rather than at its first save."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{what} {path} is a folder; give a file path.")
    if not path.parent.is_dir():
        raise ValueError(f"{what} {path}: the folder {path.parent} does not exist.")
    tmp = temp_path(path)
    try:
        with open(tmp, "wb"):
            pass
    except OSError as e:
        raise ValueError(f"{what} {path} cannot be written: {e.strerror or e}.") from None
    tmp.unlink(missing_ok=True)


def write_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """Call ``write(f)`` on a temporary binary file next to ``path``, flush it to disk, then
    move it over ``path`` with ``os.replace``; the temporary file never outlives a failure.
    An ``OSError`` (a full disk: ``ENOSPC``) names ``path``, not the temporary file."""
    path = Path(path)
    remove_stale_temps(path)
    tmp = temp_path(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        # A failed write() or fsync() names no file: say which one could not be written.
        raise OSError(e.errno, e.strerror or str(e), os.fspath(path)) from e
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see ``write_atomic``)."""
    write_atomic(path, lambda f: f.write(text.encode("utf-8")))


def write_matrix(path: str | os.PathLike, matrix: np.ndarray) -> None:
    """A matrix as comma-separated text, one row a line, full precision."""
    write_atomic(path, lambda f: np.savetxt(f, np.asarray(matrix), delimiter=","))


def write_figure(path: str | os.PathLike, figure, dpi: int = 100) -> None:
    """A matplotlib ``Figure`` as PNG."""
    write_atomic(path, lambda f: figure.savefig(f, format="png", dpi=dpi))


@contextlib.contextmanager
def all_or_none(folder: Path, names: Iterable[str]):
    """Files ``names`` of ``folder`` written whole or not at all: if the block fails (a
    full disk, Ctrl-C), those of them already written are removed, so that no folder
    holds part of a result (each file is written atomically by itself; this makes a
    group of them so)."""
    try:
        yield
    except BaseException:
        for name in names:
            (Path(folder) / name).unlink(missing_ok=True)
        raise
