"""Save and restore the state of a fit in one file, written atomically."""

import io
import json
import os
from pathlib import Path

import equinox as eqx

_MAGIC = b"netdyn-fit-checkpoint 1\n"


def save_checkpoint(path: str | os.PathLike, meta: dict, tree) -> None:
    """Write ``meta`` (JSON) and the array leaves of ``tree`` to ``path``.

    Layout: a magic line, one line of JSON, then ``eqx.tree_serialise_leaves`` of
    ``tree``. Written to a temporary file in the same folder, flushed to disk, then moved
    over ``path`` with ``os.replace``: a run killed at any moment leaves either the
    previous checkpoint or the new one, never a partial file.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(_MAGIC)
        f.write(json.dumps(meta, allow_nan=False).encode() + b"\n")
        eqx.tree_serialise_leaves(f, tree)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_checkpoint(path: str | os.PathLike, like) -> tuple[dict, object]:
    """Read a file written by ``save_checkpoint``: ``(meta, tree)``, the leaves of
    ``tree`` read into the structure of ``like``. ``ValueError`` if it does not fit."""
    path = Path(path)
    data = path.read_bytes()
    if not data.startswith(_MAGIC):
        raise ValueError(f"checkpoint {path} is not a netdyn fit checkpoint.")
    f = io.BytesIO(data[len(_MAGIC) :])
    meta = json.loads(f.readline())
    return meta, f


def read_tree(path: str | os.PathLike, f, like):
    """The serialised leaves left in ``f`` (after ``load_checkpoint``), as ``like``."""
    try:
        return eqx.tree_deserialise_leaves(f, like)
    except Exception as e:  # noqa: BLE001 - any mismatch of structure, shape or dtype
        raise ValueError(
            f"checkpoint {path} does not match this fit (optimiser state or trained "
            f"parameters differ: same optimizer and where are needed to resume): {e}"
        ) from None
