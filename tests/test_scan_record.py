"""``nd.scan_record`` and ``nd.read_scan_record``: a start scan written as JSON in the
parameter's units, and read back with every field checked; ``nd.scan_skipped_text`` and
``nd.scan_no_crossing_text``: the record in words."""

import json
import math
import re

import numpy as np
import pytest

import netdyn as nd
from netdyn._persistence.strict_json import write_json


def _found():
    search = nd.LevelSearch(values=np.array([2e-4, 4e-4, 3e-4]),
                            results={"loss": np.array([0.5, np.nan, 0.2]),
                                     "mean_fc": np.array([0.1, np.nan, 0.3])},
                            stage=("scan", "scan", "bisect"), bracket=(2e-4, 4e-4))
    return nd.StartScan(start=3e-4, bracket=(2e-4, 4e-4), level=0.3, search=search)


def test_scan_record_round_trip_in_the_parameters_units(tmp_path):
    record = nd.scan_record(_found(), scale=1e-3)  # network values in ms, recorded per s
    assert record["start"] == pytest.approx(0.3) and record["at_peak"] is False
    np.testing.assert_allclose(record["bracket"], [0.2, 0.4])
    np.testing.assert_allclose(record["grid"]["G"], [0.2, 0.4, 0.3])
    assert record["grid"]["stage"] == ["scan", "scan", "bisect"]
    write_json(tmp_path / "scan.json", record)
    assert json.loads((tmp_path / "scan.json").read_text())["grid"]["loss"][1] is None
    back = nd.read_scan_record(tmp_path / "scan.json")
    assert math.isnan(back["grid"]["loss"][1]) and back["grid"]["mean_fc"][2] == 0.3
    none = nd.scan_record(nd.StartScan(None, None, 0.3, _found().search))
    assert none["start"] is None and none["bracket"] is None


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.update(start="x"), "start must be null or a number"),
    (lambda r: r.update(bracket=[1.0]), "bracket must be null or two numbers"),
    (lambda r: r["grid"]["loss"].pop(), "grid.loss must be a list of numbers (or null), one"),
    (lambda r: r["grid"].update(stage=[1, 2, 3]), "grid.stage must be a list of text"),
])
def test_read_scan_record_names_the_bad_field(tmp_path, edit, message):
    record = nd.scan_record(_found())
    edit(record)
    write_json(tmp_path / "scan.json", record)
    with pytest.raises(ValueError, match=f"^resume: .*scan.json: {re.escape(message)}"):
        nd.read_scan_record(tmp_path / "scan.json", "resume: ")


def test_scan_in_words():
    record = nd.scan_record(_found(), scale=1e-3)
    assert nd.scan_skipped_text(record) == (
        "the simulation diverged (NaN or infinite FC) at G = 0.4: 1 of 3 scanned points skipped")
    assert nd.scan_skipped_text(record, analytic=True).startswith(
        "the network has no stable fixed point (no analytic FC) at G = 0.4: 1 of 3")
    record["grid"]["loss"][1] = record["grid"]["mean_fc"][1] = 0.2
    assert nd.scan_skipped_text(record) is None  # every point finite
    # No start: the span of the mean FC said beside the level it missed.
    assert nd.scan_no_crossing_text(record) == (
        "no G in [0.2, 0.4] brings the simulated mean FC to the data's 0.300 (it stays within "
        "[0.100, 0.300])")
    record["grid"]["mean_fc"] = [math.nan] * 3
    assert nd.scan_no_crossing_text(record).endswith("(every simulation diverged)")
