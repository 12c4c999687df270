"""A fit's checkpoint file: a JSON header and a PyTree's array leaves, written atomically."""

import io
import json
import os
from pathlib import Path

import equinox as eqx

from .atomic import write_atomic

_MAGIC = b"netdyn-fit-checkpoint 1\n"


def save_checkpoint(path: str | os.PathLike, meta: dict, tree) -> None:
    """Write ``meta`` (JSON) and the array leaves of ``tree`` to ``path``.

    Layout: a magic line, one line of JSON, then ``eqx.tree_serialise_leaves`` of
    ``tree`` (NumPy's ``.npy`` format, no pickle). Written to a temporary file in the same
    folder, flushed to disk, then moved over ``path`` with ``os.replace``: a run killed at
    any moment leaves either the previous checkpoint or the new one, never a partial file.
    """

    def write(f):
        f.write(_MAGIC)
        f.write(json.dumps(meta, allow_nan=False).encode() + b"\n")
        eqx.tree_serialise_leaves(f, tree)

    write_atomic(path, write)


def read_checkpoint(path: str | os.PathLike) -> tuple[dict, bytes]:
    """``(meta, leaves)``: the JSON header of a file written by ``save_checkpoint`` and its
    serialised leaves, to read with ``read_tree``. ``ValueError`` if it is not such a file."""
    path = Path(path)
    data = path.read_bytes()
    if not data.startswith(_MAGIC):
        raise ValueError(f"checkpoint {path} is not a netdyn fit checkpoint.")
    f = io.BytesIO(data[len(_MAGIC) :])
    meta = json.loads(f.readline())
    return meta, f.read()


def read_tree(path: str | os.PathLike, leaves: bytes, like):
    """The serialised ``leaves`` of checkpoint ``path`` (from ``read_checkpoint``) as a
    PyTree of the structure, shapes and dtypes of ``like``; ``ValueError`` if they differ."""
    try:
        return eqx.tree_deserialise_leaves(io.BytesIO(leaves), like)
    except Exception as e:  # noqa: BLE001 - any mismatch of structure, shape or dtype
        raise ValueError(
            f"checkpoint {path} does not match this fit (optimiser state or trained "
            f"parameters differ: same optimizer and where are needed to resume): {e}"
        ) from None


def load_checkpoint(path: str | os.PathLike, like=None) -> tuple[dict, object]:
    """``(meta, tree)`` from a file written by ``save_checkpoint``: its JSON header, and
    its leaves read into the structure of ``like`` (``None`` when ``like`` is ``None``:
    the header only). ``ValueError`` if the file or the structure does not fit."""
    meta, leaves = read_checkpoint(path)
    return meta, None if like is None else read_tree(path, leaves, like)
