"""The repetition time (TR) of BOLD runs: given in ms, or read from each run's JSON
sidecar (BIDS ``RepetitionTime``, seconds), and one TR for all runs."""

import json
import math
from pathlib import Path

import numpy as np

from ._files import read_text

_RTOL = 1e-6  # TRs that agree to this relative tolerance are the same


def check_tr(tr) -> float:
    """``tr`` (ms) as a float; ``ValueError`` unless a positive finite number."""
    if isinstance(tr, bool) or not isinstance(tr, int | float | np.integer | np.floating):
        raise ValueError(f"read_bold: tr must be a number of ms, got {tr!r}.")
    if not (math.isfinite(tr) and tr > 0):
        raise ValueError(f"read_bold: tr must be a positive finite number of ms, got {tr!r}.")
    return float(tr)


def sidecar_tr(path: Path, tr: float | None) -> float | None:
    """The TR in ms from the JSON sidecar of ``path``, checked against ``tr``; ``None``
    without a sidecar (or without ``RepetitionTime`` when ``tr`` is given)."""
    sidecar = path.with_suffix(".json")
    if not sidecar.is_file():
        return None
    text = read_text(sidecar, "JSON sidecar")
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{sidecar}: not valid JSON ({e}).") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{sidecar}: expected a JSON object, got {type(meta).__name__}.")
    if "RepetitionTime" not in meta:
        if tr is not None:
            return None
        raise ValueError(
            f"{sidecar}: no 'RepetitionTime' (seconds) for {path.name}; add it, or give tr= (ms)."
        )
    seconds = meta["RepetitionTime"]
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not (math.isfinite(seconds) and seconds > 0)
    ):
        raise ValueError(
            f"{sidecar}: RepetitionTime must be a positive number of seconds, got {seconds!r}."
        )
    ms = float(seconds) * 1000.0
    if tr is not None and not math.isclose(ms, tr, rel_tol=_RTOL):
        raise ValueError(
            f"{sidecar}: RepetitionTime {seconds} s = {ms} ms, but tr={tr} ms was given."
        )
    return ms


def run_tr(tr: float | None, sidecar_trs: list[tuple[Path, float | None]]) -> float | None:
    """The runs' one TR: ``tr`` if given, else their sidecars', which must all give the
    same one (``None`` when none does)."""
    if tr is not None:
        return tr
    found = [(p, ms) for p, ms in sidecar_trs if ms is not None]
    if not found:
        return None
    p0, ms0 = found[0]
    for p, ms in found[1:]:
        if not math.isclose(ms, ms0, rel_tol=_RTOL):
            raise ValueError(
                f"{p}: its sidecar gives TR {ms} ms, but {p0}'s gives {ms0} ms; all runs must "
                "share one TR."
            )
    if len(found) < len(sidecar_trs):
        p = next(p for p, ms in sidecar_trs if ms is None)
        raise ValueError(
            f"{p}: no JSON sidecar ({p.with_suffix('.json').name}) gives its TR, while "
            f"{p0}'s gives {ms0} ms; add one, or give tr= (ms) for all runs."
        )
    return ms0

