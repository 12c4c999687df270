"""Reading files safely: UTF-8 text, ``.npz`` archives and numeric tables, with errors
that name the file and the problem instead of the exception of the layer that failed."""

import math
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


def decode_text(raw: bytes, where: str, what: str = "") -> str:
    """``raw`` as UTF-8 text, without the byte-order mark that spreadsheet programs put
    first (it would otherwise stick to the first field); ``ValueError`` naming ``where``
    for anything that is not UTF-8."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        label = f" {what}" if what else ""
        raise ValueError(f"{where}: cannot read{label}: {not_utf8(e)}") from None


def read_text(path: Path, what: str = "") -> str:
    """The UTF-8 text of ``path`` (a leading byte-order mark dropped); ``ValueError``
    naming the file for anything else."""
    label = f" {what}" if what else ""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot read{label} ({e}).") from None
    return decode_text(raw, str(path), what)


def npy_stream(f, size: int) -> np.ndarray:
    """The array of the ``.npy`` stream ``f``, ``size`` bytes from its start. The header is
    checked against ``size`` before anything is allocated, so a damaged header cannot make
    NumPy allocate what it claims (terabytes: a ``MemoryError``). ``ValueError`` with the
    reason (no file name: the caller adds it) for a damaged header (NumPy's parser raises
    many exception types, e.g. ``tokenize.TokenError``), too little data, or Python
    objects (which are never unpickled)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ValueError(f"unknown format version {version}")
        # 3.0 differs from 2.0 only in the header's encoding (UTF-8 for field names)
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = read_header(f)
    except Exception as e:  # any failure of the parser is a damaged header
        raise ValueError(f"damaged header: {type(e).__name__}: {e}") from None
    if dtype.hasobject:
        raise ValueError("it holds Python objects, which netdyn does not unpickle")
    count = math.prod(shape)
    need = f.tell() + count * dtype.itemsize
    if need > size:
        raise ValueError(
            f"the header claims shape {shape} of {dtype} ({need} bytes), but there are only "
            f"{size} bytes: truncated or damaged"
        )
    array = np.empty(count, dtype)
    if count and dtype.itemsize:
        try:
            got = f.readinto(array.view(np.uint8))
        except READ_ERRORS as e:
            raise ValueError(f"{type(e).__name__}: {e}") from None
        if got != array.nbytes:
            raise ValueError(f"the data stop after {got} of {array.nbytes} bytes")
    return array.reshape(shape, order="F" if fortran else "C")


def read_npy(path: Path) -> np.ndarray:
    """The array of the ``.npy`` file ``path`` (see ``npy_stream``); ``ValueError`` naming
    the file for a missing, empty, zipped or damaged one."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ValueError(f"{path}: cannot read as a .npy array ({e}).") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ValueError(f"{path}: cannot read as a .npy array: the file is empty (0 bytes).")
        if f.read(2) == b"PK":
            raise ValueError(f"{path}: expected a .npy array, found a .npz (zip) archive.")
        f.seek(0)
        try:
            return npy_stream(f, size)
        except ValueError as e:
            raise ValueError(f"{path}: cannot read as a .npy array ({e}).") from None


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
    """``archive[key]``, read as ``npy_stream`` reads (the header checked against the
    member's size first); the archive is read lazily, so damage shows up here."""
    names = archive.zip.namelist()
    member = f"{key}.npy" if f"{key}.npy" in names else key
    try:
        info = archive.zip.getinfo(member)
        with archive.zip.open(info) as f:
            if f.read(len(np.lib.format.MAGIC_PREFIX)) != np.lib.format.MAGIC_PREFIX:
                raise _NotNpy
            f.seek(0)
            return npy_stream(f, info.file_size)
    except _NotNpy:
        raise ValueError(
            f"{path}: array {key!r} is not a .npy array ({info.file_size} bytes of other data)."
        ) from None
    except READ_ERRORS as e:
        why = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
        raise ValueError(f"{path}: cannot read array {key!r} ({why}).") from None


class _NotNpy(Exception):
    """A member of a ``.npz`` archive that is not a ``.npy`` array."""


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
