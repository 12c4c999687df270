"""Regional BOLD time series from files (`nd.datasets.read_bold`): the files fMRIPrep /
XCP-D, nilearn users and spreadsheets write, read back exactly; then one test per bad
input, each an error naming the file (and the region where there is one)."""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from netdyn import datasets

LABELS = ("LH_Vis_1", "LH_Vis_2", "RH_Default_1")
RNG = np.random.default_rng(0)
RUN1 = RNG.standard_normal((20, 3))  # [time, regions]
RUN2 = RNG.standard_normal((15, 3))


def _tsv(path: Path, data: np.ndarray, labels=LABELS, tr_s: float | None = 0.72) -> Path:
    """A `*_timeseries.tsv` as fMRIPrep / XCP-D write it (tabs, header, `n/a`), with its
    JSON sidecar."""
    lines = ["\t".join(labels)] if labels is not None else []
    lines += ["\t".join("n/a" if np.isnan(v) else repr(float(v)) for v in row) for row in data]
    path.write_text("\n".join(lines) + "\n")
    if tr_s is not None:
        path.with_suffix(".json").write_text(json.dumps({"RepetitionTime": tr_s}))
    return path


def _m(path: Path, *rest: str) -> str:
    """A `match=` pattern: the file name, then each of ``rest`` (literal), in order."""
    return ".*".join(re.escape(s) for s in (path.name, *rest))


# -------------------------------------------------------------------- files read back


def test_fmriprep_tsv_runs_with_sidecars(tmp_path):
    f1 = _tsv(tmp_path / "sub-01_task-rest_run-1_timeseries.tsv", RUN1)
    f2 = _tsv(tmp_path / "sub-01_task-rest_run-2_timeseries.tsv", RUN2)
    runs = datasets.read_bold([f1, str(f2)], n_regions=3)
    assert isinstance(runs, datasets.BoldRuns)
    assert len(runs.runs) == 2
    np.testing.assert_array_equal(runs.runs[0], RUN1)
    np.testing.assert_array_equal(runs.runs[1], RUN2)
    for run in runs.runs:
        assert run.dtype == np.float64 and not run.flags.writeable
    assert runs.tr == 720.0
    assert runs.labels == LABELS
    assert runs.files == (str(f1), str(f2))
    # The tr argument agreeing with the sidecars; one path instead of a list.
    one = datasets.read_bold(f1, tr=720.0)
    assert one.tr == 720.0 and len(one.runs) == 1 and one.files == (str(f1),)


def test_savetxt_without_header_or_sidecar(tmp_path):
    path = tmp_path / "run.txt"
    np.savetxt(path, RUN1, delimiter="\t")  # nilearn users: masker output, no header
    runs = datasets.read_bold(path)
    np.testing.assert_array_equal(runs.runs[0], RUN1)
    assert runs.labels is None and runs.tr is None
    np.savetxt(path, RUN1)  # default: space-separated
    np.testing.assert_array_equal(datasets.read_bold(path, tr=2000).runs[0], RUN1)
    assert datasets.read_bold(path, tr=2000).tr == 2000.0


def test_spreadsheet_csv_with_bom_and_crlf(tmp_path):
    path = tmp_path / "bold.csv"
    lines = [",".join(LABELS)] + [",".join(repr(float(v)) for v in row) for row in RUN1]
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    runs = datasets.read_bold(path, tr=800.0)
    np.testing.assert_array_equal(runs.runs[0], RUN1)
    assert runs.labels == LABELS and runs.tr == 800.0


def test_npy_one_run_and_several(tmp_path):
    two_d, three_d = tmp_path / "run.npy", tmp_path / "runs.npy"
    np.save(two_d, RUN1)
    stacked = np.stack([RUN1, RUN1[::-1] * 2.0]).astype(np.float32)
    np.save(three_d, stacked)
    runs = datasets.read_bold([two_d, three_d], tr=720.0, n_regions=3)
    assert len(runs.runs) == 3 and runs.files == (str(two_d), str(three_d))
    np.testing.assert_array_equal(runs.runs[0], RUN1)
    np.testing.assert_array_equal(runs.runs[1], stacked[0].astype(np.float64))
    np.testing.assert_array_equal(runs.runs[2], stacked[1].astype(np.float64))
    assert all(r.dtype == np.float64 and not r.flags.writeable for r in runs.runs)
    assert runs.labels is None


# ---------------------------------------------------------------- bad paths, bad files


def test_empty_paths():
    with pytest.raises(ValueError, match="no files"):
        datasets.read_bold([])


def test_missing_file(tmp_path):
    path = tmp_path / "nope_timeseries.tsv"
    with pytest.raises(ValueError, match=_m(path, "cannot read")):
        datasets.read_bold(path)


def test_unknown_suffix(tmp_path):
    path = tmp_path / "bold.nii"
    path.write_bytes(b"\0" * 10)
    with pytest.raises(ValueError, match=_m(path, "unknown", "NiftiLabelsMasker")):
        datasets.read_bold(path)


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.tsv"
    path.write_bytes("r\xe9gion\tb\n1\t2\n".encode("latin-1"))
    with pytest.raises(ValueError, match=_m(path, "not UTF-8")):
        datasets.read_bold(path)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.tsv"
    path.write_text("")
    with pytest.raises(ValueError, match=_m(path, "empty")):
        datasets.read_bold(path)


def test_header_without_rows(tmp_path):
    path = tmp_path / "header.tsv"
    path.write_text("\t".join(LABELS) + "\n")
    with pytest.raises(ValueError, match=_m(path, "no data rows")):
        datasets.read_bold(path)


def test_ragged_rows(tmp_path):
    path = _tsv(tmp_path / "ragged.tsv", RUN1)
    lines = path.read_text().splitlines()
    lines[5] += "\t1.0"
    path.write_text("\n".join(lines))
    with pytest.raises(ValueError, match=_m(path, "ragged", "data row 5 has 4 fields")):
        datasets.read_bold(path)


def test_non_numeric_entry(tmp_path):
    path = _tsv(tmp_path / "text.tsv", RUN1)
    path.write_text(path.read_text().replace(repr(float(RUN1[2, 1])), "abc"))
    with pytest.raises(ValueError, match=_m(path, "'abc'", "data row 3, column 2", "LH_Vis_2")):
        datasets.read_bold(path)


def test_pandas_index_column(tmp_path):
    path = tmp_path / "indexed.csv"
    rows = [",".join(("",) + LABELS)]
    rows += [",".join([str(i)] + [repr(float(v)) for v in r]) for i, r in enumerate(RUN1)]
    path.write_text("\n".join(rows))
    with pytest.raises(ValueError, match=_m(path, "header field 1 is empty", "index=False")):
        datasets.read_bold(path)


# ----------------------------------------------------------------------- bad time series


def test_region_with_missing_values_named_by_label(tmp_path):
    data = RUN1.copy()
    data[[1, 4, 7], 1] = np.nan  # XCP-D writes n/a where a region has too little coverage
    path = _tsv(tmp_path / "sub-01_timeseries.tsv", data)
    assert "n/a" in path.read_text()
    with pytest.raises(ValueError, match=_m(path, "'LH_Vis_2' (column 2)", "3 missing", "FC")):
        datasets.read_bold(path)


def test_region_with_infinite_values_named_by_column(tmp_path):
    data = RUN1.copy()
    data[0, 2] = np.inf
    path = tmp_path / "inf.npy"
    np.save(path, data)
    with pytest.raises(ValueError, match=_m(path, "column 3", "1 infinite")):
        datasets.read_bold(path)


def test_constant_region(tmp_path):
    data = RUN1.copy()
    data[:, 0] = 5.0
    path = _tsv(tmp_path / "flat.tsv", data)
    with pytest.raises(ValueError, match=_m(path, "'LH_Vis_1'", "constant", "zero variance")):
        datasets.read_bold(path)


def test_too_few_time_points(tmp_path):
    path = _tsv(tmp_path / "short.tsv", RUN1[:6])
    with pytest.raises(ValueError, match=_m(path, "has 6 time point", "FC needs more")):
        datasets.read_bold(path)


def test_regions_differ_between_runs(tmp_path):
    f1 = _tsv(tmp_path / "run-1.tsv", RUN1)
    f2 = _tsv(tmp_path / "run-2.tsv", RUN2[:, :2], labels=LABELS[:2])
    with pytest.raises(ValueError, match=_m(f2, "has 2 regions", "run-1.tsv has 3")):
        datasets.read_bold([f1, f2])
    f3 = _tsv(tmp_path / "run-3.tsv", RUN2, labels=("LH_Vis_1", "LH_Vis_2", "RH_Default_2"))
    with pytest.raises(ValueError, match=_m(f3, "labels differ", "column 3", "RH_Default_2")):
        datasets.read_bold([f1, f3])


def test_n_regions_differs(tmp_path):
    path = _tsv(tmp_path / "atlas.tsv", RUN1)
    with pytest.raises(ValueError, match=_m(path, "has 3 regions, but the connectome has 80")):
        datasets.read_bold(path, n_regions=80)


# ------------------------------------------------------------------------ bad .npy files


def _npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("name", "raw", "match"),
    [
        ("empty.npy", b"", "empty"),
        ("magic.npy", b"not a numpy file at all", "damaged header"),
        ("header.npy", _npy_bytes(RUN1).replace(b"(20, 3)", b"(20, 3x"), "damaged header"),
        ("truncated.npy", _npy_bytes(RUN1)[:-40], "truncated or damaged"),
        (
            "absurd.npy",
            _npy_bytes(RUN1).replace(b"(20, 3)", b"(9999999999, 3)"),
            "truncated or damaged",
        ),
        ("complex.npy", _npy_bytes(RUN1.astype(np.complex128)), "real numbers"),
        ("text.npy", _npy_bytes(np.array([["a", "b"]] * 12)), "real numbers"),
        ("one_d.npy", _npy_bytes(RUN1[:, 0]), r"\[time, regions\]"),
        ("four_d.npy", _npy_bytes(RUN1.reshape(1, 1, 20, 3)), r"\[runs, time, regions\]"),
    ],
)
def test_bad_npy(tmp_path, name, raw, match):
    path = tmp_path / name
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=re.escape(name) + ".*" + match):
        datasets.read_bold(path)


def test_bad_run_in_3d_npy_is_named(tmp_path):
    stacked = np.stack([RUN1, RUN1.copy()])
    stacked[1, :, 2] = 0.0
    path = tmp_path / "runs.npy"
    np.save(path, stacked)
    with pytest.raises(ValueError, match=_m(path, "(run 2 of 2)", "column 3", "constant")):
        datasets.read_bold(path)


# ---------------------------------------------------------------------- TR and sidecars


@pytest.mark.parametrize("tr", [0.0, -720.0, float("nan"), float("inf")])
def test_bad_tr_argument(tmp_path, tr):
    path = _tsv(tmp_path / "run.tsv", RUN1, tr_s=None)
    with pytest.raises(ValueError, match="tr must be a positive finite number of ms"):
        datasets.read_bold(path, tr=tr)


def test_tr_disagrees_with_sidecar(tmp_path):
    path = _tsv(tmp_path / "sub-01_timeseries.tsv", RUN1)
    with pytest.raises(ValueError, match=_m(path.with_suffix(".json"), "0.72 s", "tr=2000.0")):
        datasets.read_bold(path, tr=2000.0)


def test_runs_with_different_trs(tmp_path):
    f1 = _tsv(tmp_path / "run-1.tsv", RUN1, tr_s=0.72)
    f2 = _tsv(tmp_path / "run-2.tsv", RUN2, tr_s=2.0)
    with pytest.raises(ValueError, match=_m(f2, "2000.0 ms", "720.0 ms", "one TR")):
        datasets.read_bold([f1, f2])
    f3 = _tsv(tmp_path / "run-3.tsv", RUN2, tr_s=None)  # one sidecar missing
    with pytest.raises(ValueError, match=_m(f3, "no JSON sidecar", "tr=")):
        datasets.read_bold([f1, f3])
    assert datasets.read_bold([f1, f3], tr=720.0).tr == 720.0


def test_sidecar_not_json(tmp_path):
    path = _tsv(tmp_path / "run.tsv", RUN1)
    path.with_suffix(".json").write_text('{"RepetitionTime": 0.72,')
    with pytest.raises(ValueError, match=_m(path.with_suffix(".json"), "not valid JSON")):
        datasets.read_bold(path, tr=720.0)


@pytest.mark.parametrize("value", ["0.72", -0.72, 0, None, True, [0.72]])
def test_sidecar_bad_repetition_time(tmp_path, value):
    path = _tsv(tmp_path / "run.tsv", RUN1)
    path.with_suffix(".json").write_text(json.dumps({"RepetitionTime": value}))
    with pytest.raises(ValueError, match=_m(path.with_suffix(".json"), "RepetitionTime")):
        datasets.read_bold(path)


def test_sidecar_without_repetition_time(tmp_path):
    path = _tsv(tmp_path / "run.tsv", RUN1)
    path.with_suffix(".json").write_text(json.dumps({"Sources": ["bold.nii.gz"]}))
    with pytest.raises(ValueError, match=_m(path.with_suffix(".json"), "no 'RepetitionTime'")):
        datasets.read_bold(path)
    assert datasets.read_bold(path, tr=720.0).tr == 720.0  # fine when tr is given
