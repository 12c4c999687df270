"""Reading files safely: UTF-8 text, ``.npz`` archives and numeric tables, with errors
that name the file and the problem instead of the exception of the layer that failed."""

import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

PathLike = str | os.PathLike


# What reading a damaged file can raise besides ValueError: zlib.error (corrupt deflate
# data), EOFError (empty or truncated streams), zipfile.BadZipFile (bad CRC, bad
# headers), OSError, RuntimeError (encrypted members), NotImplementedError (unsupported
# compression), KeyError (a member listed but unreadable).
READ_ERRORS = (
    ValueError, OSError, EOFError, RuntimeError, NotImplementedError, KeyError,
    zipfile.BadZipFile, zlib.error,
)


def not_utf8(e: UnicodeDecodeError) -> str:
    return (
        f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}); save it as "
        "UTF-8 (or plain ASCII)."
    )


def read_text(path: Path, what: str = "") -> str:
    """The UTF-8 text of ``path``; ``ValueError`` naming the file for anything else."""
    label = f" {what}" if what else ""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot read{label} ({e}).") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: cannot read{label}: {not_utf8(e)}") from None


class open_npz:
    """Context manager: the ``NpzFile`` of ``path``, with the file closed on every exit
    (``np.load(path)`` leaves it open when the archive is damaged)."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> np.lib.npyio.NpzFile:
        path = self.path
        try:
            self.file = open(path, "rb")
        except OSError as e:
            raise ValueError(f"{path}: cannot read as a .npz archive ({e}).") from None
        try:
            if os.fstat(self.file.fileno()).st_size == 0:
                raise ValueError(f"{path}: the file is empty (0 bytes), not a .npz archive.")
            try:
                archive = np.load(self.file, allow_pickle=False)
            except READ_ERRORS as e:
                raise ValueError(f"{path}: cannot read as a .npz archive ({e}).") from None
            if not isinstance(archive, np.lib.npyio.NpzFile):
                raise ValueError(f"{path}: expected a .npz archive, found a single .npy array.")
        except BaseException:
            self.file.close()
            raise
        self.archive = archive
        return archive

    def __exit__(self, *exc) -> None:
        self.archive.close()
        self.file.close()


def npz_array(archive: np.lib.npyio.NpzFile, key: str, path: Path) -> np.ndarray:
    """``archive[key]``; the archive is read lazily, so damage shows up here."""
    try:
        value = archive[key]
    except READ_ERRORS as e:
        raise ValueError(f"{path}: cannot read array {key!r} ({type(e).__name__}: {e}).") from None
    if not isinstance(value, np.ndarray):  # NumPy hands back a non-.npy member as bytes
        raise ValueError(
            f"{path}: array {key!r} is not a .npy array ({len(value)} bytes of other data)."
        )
    return value


def data_lines(content: str, what: str, where: str) -> list[str]:
    """The lines of ``content`` that are neither blank nor ``#`` comments; ``ValueError``
    naming ``where`` when there is none."""
    lines = [
        line for line in content.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise ValueError(f"{where}: {what} is empty.")
    return lines


def parse_table(content: str, what: str, where: str, delimiter: str | None = None) -> np.ndarray:
    """A rectangular numeric table from text (``#`` comments, comma when the first data line
    has one, else whitespace); ``ValueError`` naming ``where`` for anything else."""
    rows = data_lines(content, what, where)
    if delimiter is None:
        delimiter = "," if "," in rows[0] else None
    values = []
    for number, line in enumerate(rows):
        fields = [s.strip() for s in line.split(delimiter)] if delimiter else line.split()
        if delimiter and fields and fields[-1] == "":
            fields = fields[:-1]  # trailing delimiter
        try:
            values.append([float(s) for s in fields])
        except ValueError:
            raise ValueError(
                f"{where}: {what} has a non-numeric entry on data line {number + 1}: "
                f"{line.strip()[:60]!r}."
            ) from None
    lengths = {len(r) for r in values}
    if len(lengths) != 1:
        raise ValueError(f"{where}: {what} has ragged rows (row lengths {sorted(lengths)}).")
    return np.array(values, dtype=np.float64)
