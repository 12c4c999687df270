"""A scan for the start of a fit as a record (``scan.json`` of ``netdyn fit``): written
by ``scan_record``, read back, every field checked, by ``read_scan_record``, and said in
words (``scan_skipped_text``, ``scan_no_crossing_text``)."""

import math
import os
from pathlib import Path

import numpy as np

from .._persistence.strict_json import read_json_object
from .scan_start import StartScan


def scan_record(found: StartScan, scale: float = 1.0) -> dict:
    """``found`` as a JSON-ready record, its values divided by ``scale`` (the parameter's
    units: a network value = the value recorded times ``scale``): ``{"start", "bracket",
    "at_peak", "target_mean_fc", "grid": {"G", "loss", "mean_fc", "stage"}}``, ``start``
    and ``bracket`` ``None`` when the scan found none. NaN losses and mean FCs (diverged
    points) are written as ``null`` by the library's JSON writer."""
    grid = found.search
    return {"start": None if found.start is None else found.start / scale,
            "bracket": None if found.bracket is None else [b / scale for b in found.bracket],
            "at_peak": found.at_peak, "target_mean_fc": found.level,
            "grid": {"G": (grid.values / scale).tolist(),
                     "loss": grid.results["loss"].tolist(),
                     "mean_fc": grid.results["mean_fc"].tolist(),
                     "stage": list(grid.stage)}}


def _number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _scan_rules(scan: dict) -> dict:
    """``{field: (whether the record's field is valid, what a valid one is)}``."""
    grid = scan.get("grid")
    grid = grid if isinstance(grid, dict) else {}
    g = grid.get("G")
    size = len(g) if isinstance(g, list) else -1
    bracket = scan.get("bracket")

    def values(v, ok) -> bool:
        return isinstance(v, list) and len(v) == size and all(map(ok, v))

    return {
        "start": (scan.get("start") is None or _number(scan.get("start")), "null or a number"),
        "bracket": (bracket is None or (isinstance(bracket, list) and len(bracket) == 2
                                        and all(map(_number, bracket))),
                    "null or two numbers"),
        "target_mean_fc": (_number(scan.get("target_mean_fc")), "a number"),
        "grid.G": (values(g, _number), "a list of numbers"),
        "grid.loss": (values(grid.get("loss"), lambda v: v is None or _number(v)),
                      "a list of numbers (or null), one per G"),
        "grid.mean_fc": (values(grid.get("mean_fc"), lambda v: v is None or _number(v)),
                         "a list of numbers (or null), one per G"),
        "grid.stage": (values(grid.get("stage"), lambda v: isinstance(v, str)),
                       "a list of text, one per G"),
    }


def read_scan_record(path: str | os.PathLike, context: str = "") -> dict:
    """The record of ``scan_record`` in the JSON file ``path``, every field checked
    (``ValueError`` starting with ``context``, naming the file and the field); ``null``
    losses and mean FCs as NaN."""
    scan = read_json_object(Path(path), context)
    for field, (ok, what) in _scan_rules(scan).items():
        if not ok:
            raise ValueError(f"{context}{path}: {field} must be {what}.")
    for k in ("loss", "mean_fc"):
        scan["grid"][k] = [math.nan if v is None else v for v in scan["grid"][k]]
    return scan


def scan_skipped_text(scan: dict, analytic: bool = False) -> str | None:
    """The scanned values of G whose loss or mean FC is not finite, which the choice of
    the start skipped, in words: ``"the simulation diverged (NaN or infinite FC) at G =
    1.2, 1.35: 2 of 17 scanned points skipped"`` (``analytic``: ``"the network has no
    stable fixed point (no analytic FC)"``); ``None`` when every point is finite.
    ``scan`` is a record of ``scan_record`` (or ``read_scan_record``)."""
    g = np.asarray(scan["grid"]["G"], dtype=float)
    ok = np.isfinite(np.asarray(scan["grid"]["mean_fc"], dtype=float)) & np.isfinite(
        np.asarray(scan["grid"]["loss"], dtype=float))
    if ok.all():
        return None
    what = ("the network has no stable fixed point (no analytic FC)" if analytic
            else "the simulation diverged (NaN or infinite FC)")
    bad = ", ".join(f"{v:.4g}" for v in g[~ok])
    return f"{what} at G = {bad}: {int((~ok).sum())} of {g.size} scanned points skipped"


def scan_no_crossing_text(scan: dict) -> str:
    """Why a scan (a record of ``scan_record`` without a start) found no start, in words:
    ``"no G in [0.05, 0.45] brings the simulated mean FC to the data's 0.307 (it stays
    within [0.01, 0.2])"``, or ``"(every simulation diverged)"``."""
    g, m = np.asarray(scan["grid"]["G"]), np.asarray(scan["grid"]["mean_fc"], dtype=float)
    ok = np.isfinite(m)
    span = (f"it stays within [{m[ok].min():.3f}, {m[ok].max():.3f}]" if ok.any()
            else "every simulation diverged")
    return (f"no G in [{g.min():.3g}, {g.max():.3g}] brings the simulated mean FC to the "
            f"data's {scan['target_mean_fc']:.3f} ({span})")
