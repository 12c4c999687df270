"""Strict JSON (RFC 8259: no ``NaN`` or ``Infinity``), the one writer of the library
(checkpoint headers, ``FitHistory.to_json``) and of the command line (``params.json``,
``settings.json``, ...), whose files are written atomically (a temporary file in the same
folder, flushed, then ``os.replace`` over the target: ``atomic.py``), so that a full disk,
a kill or Ctrl-C leaves the previous file or the new one, never a part; and the one reader
of the JSON files ``netdyn fit`` wrote back (``read_json_object``)."""

import json
import math
import os
from pathlib import Path
from typing import Literal

from .atomic import write_text_atomic


def _strict(x):
    """``x`` with NaN and infinities as ``None``: strict JSON, which any reader accepts."""
    if isinstance(x, dict):
        return {k: _strict(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_strict(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def strict_dumps(data, *, nonfinite: Literal["refuse", "null"] = "refuse",
                 indent: int | None = None) -> str:
    """``data`` as strict JSON text. A non-finite float (NaN, infinities) is refused
    (``ValueError``, ``nonfinite="refuse"``) or written as ``null`` (``"null"``)."""
    if nonfinite == "null":
        data = _strict(data)
    return json.dumps(data, indent=indent, allow_nan=False)


def write_json(path: str | os.PathLike, data) -> None:
    """``data`` as indented, strict JSON (NaN and infinities as ``null``)."""
    write_text_atomic(path, strict_dumps(data, nonfinite="null", indent=1) + "\n")


def read_json_object(path: Path, context: str = "", missing: str = "") -> dict:
    """The JSON object in ``path``. Otherwise a ``ValueError`` that starts with
    ``context`` (``"--resume: "``) and names the file: missing (``missing`` says what that
    means), unreadable, not JSON, or JSON but not an object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{context}{path}: no such file{missing}.") from None
    except (OSError, ValueError) as e:  # bad JSON or bad UTF-8 are ValueErrors
        raise ValueError(f"{context}{path} cannot be read ({e}).") from None
    if not isinstance(data, dict):
        raise ValueError(f"{context}{path} cannot be read (it is not a JSON object).")
    return data
