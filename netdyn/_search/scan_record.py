"""A scan for the start of a fit as a record (``scan.json`` of ``netdyn fit``): written
by ``scan_record``, read back, every field checked, by ``read_scan_record``."""

import math
import os
from pathlib import Path

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
