"""A fit's checkpoint file: a JSON header and a PyTree's array leaves, with a checksum,
written atomically.

Layout (format 2)::

    netdyn-fit-checkpoint 2\n
    sha256 <64 hexadecimal digits>\n
    <the header: one line of JSON>\n
    <the leaves: eqx.tree_serialise_leaves, NumPy's .npy format (no pickle)>

The SHA-256 digest covers every byte after its own line (header and leaves), so that a
changed byte anywhere in the file is found before anything in it is used.
"""

import hashlib
import io
import json
import os
from pathlib import Path

import equinox as eqx

from .atomic import write_atomic
from .strict_json import strict_dumps

_MAGIC = b"netdyn-fit-checkpoint "
_VERSION = b"2"
_DIGEST = b"sha256 "


def save_checkpoint(path: str | os.PathLike, meta: dict, tree) -> None:
    """Write ``meta`` (JSON) and the array leaves of ``tree`` to ``path``, with the SHA-256
    digest of both (layout above).

    Written to a temporary file in the same folder, flushed to disk, then moved over
    ``path`` with ``os.replace``: a run killed at any moment leaves either the previous
    checkpoint or the new one, never a partial file (see ``atomic.write_atomic``).
    """
    payload = io.BytesIO()
    payload.write(strict_dumps(meta).encode() + b"\n")
    eqx.tree_serialise_leaves(payload, tree)
    data = payload.getvalue()
    digest = hashlib.sha256(data).hexdigest().encode()

    def write(f):
        f.write(_MAGIC + _VERSION + b"\n" + _DIGEST + digest + b"\n")
        f.write(data)

    write_atomic(path, write)


def _corrupt(path, why: str) -> ValueError:
    return ValueError(
        f"checkpoint {path} is corrupt or not a netdyn fit checkpoint ({why}); it cannot be "
        "resumed: move it away to start the fit afresh."
    )


def read_checkpoint(path: str | os.PathLike) -> tuple[dict, bytes]:
    """``(meta, leaves)``: the JSON header of a file written by ``save_checkpoint`` and its
    serialised leaves, to read with ``read_tree``, once the checksum matches. ``ValueError``
    naming ``path`` if it is not such a file, or has changed since it was written."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"checkpoint {path} is a folder, not a checkpoint file.")
    data = path.read_bytes()
    head, _, rest = data.partition(b"\n")
    if not head.startswith(_MAGIC):
        raise _corrupt(path, f"it does not start with {_MAGIC.decode().strip()!r}")
    if head[len(_MAGIC):] != _VERSION:
        version = head[len(_MAGIC):].decode(errors="replace")
        if version == "1":
            raise ValueError(
                f"checkpoint {path} was written by an older netdyn (format 1, without a "
                "checksum), so it cannot be validated: move it away to start the fit afresh."
            )
        raise _corrupt(path, f"unknown format {version!r}")
    line, _, payload = rest.partition(b"\n")
    digest = hashlib.sha256(payload).hexdigest().encode()
    if line != _DIGEST + digest:
        raise _corrupt(path, "its SHA-256 checksum does not match its contents")
    header, _, leaves = payload.partition(b"\n")
    try:
        meta = json.loads(header)
    except ValueError:
        raise _corrupt(path, "its header is not JSON") from None
    if not isinstance(meta, dict):
        raise _corrupt(path, "its header is not a JSON object")
    return meta, leaves


def read_tree(path: str | os.PathLike, leaves: bytes, like):
    """The serialised ``leaves`` of checkpoint ``path`` (from ``read_checkpoint``) as a
    PyTree of the structure, shapes and dtypes of ``like``; ``ValueError`` if they differ."""
    try:
        return eqx.tree_deserialise_leaves(io.BytesIO(leaves), like)
    except Exception as e:  # noqa: BLE001 - any mismatch of structure, shape or dtype
        raise ValueError(
            f"checkpoint {path} does not match this fit (optimizer state or trained "
            f"parameters differ: same optimizer and where are needed to resume): {e}"
        ) from None


def load_checkpoint(path: str | os.PathLike, like=None) -> tuple[dict, object]:
    """``(meta, tree)`` from a file written by ``save_checkpoint``: its JSON header, and
    its leaves read into the structure of ``like`` (``None`` when ``like`` is ``None``:
    the header only). ``ValueError`` if the file or the structure does not fit."""
    meta, leaves = read_checkpoint(path)
    return meta, None if like is None else read_tree(path, leaves, like)
