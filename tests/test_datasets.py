"""Embedded datasets and file readers (netdyn.datasets)."""

import bz2
import zipfile
from pathlib import Path

import numpy as np
import pytest

import netdyn as nd
from netdyn import datasets

# A directed 3-node graph: row i holds the inputs to target i.
W = np.array([[0.0, 1.5, 0.0], [0.25, 0.0, 2.0], [3.0, 0.0, 0.0]])
L = np.array([[0.0, 10.0, 20.0], [10.0, 0.0, 30.5], [20.0, 30.5, 0.0]])
LABELS = ["rA", "rB", "lC"]
CENTRES = np.array([[1.0, 2.0, 3.0], [-4.0, 5.5, 6.0], [7.0, -8.0, 9.25]])


def _txt(m: np.ndarray) -> str:
    return "\n".join(" ".join(repr(float(v)) for v in row) for row in np.atleast_2d(m)) + "\n"


def _centres_txt(labels=LABELS, centres=CENTRES) -> str:
    return "".join(f"{lab} {x} {y} {z}\n" for lab, (x, y, z) in zip(labels, centres))


def _write_zip(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return path


def _tvb_members(**override) -> dict[str, str | bytes]:
    members = {
        "weights.txt": _txt(W),
        "tract_lengths.txt": _txt(L),
        "centres.txt": _centres_txt(),
        "cortical.txt": "1\n1\n0\n",
        "hemispheres.txt": "1\n1\n0\n",
        "areas.txt": "10.5\n20\n30\n",
        "info.txt": 'weights_unit = "au"\n',
    }
    members.update(override)
    return {k: v for k, v in members.items() if v is not None}


def _fisher_mean(fcs: np.ndarray) -> np.ndarray:
    n = fcs.shape[-1]
    off = ~np.eye(n, dtype=bool)
    out = np.eye(n)
    out[off] = np.tanh(np.arctanh(fcs[:, off]).mean(axis=0))
    return out


# ---------------------------------------------------------------------------- embedded


def test_available_and_namespace():
    assert "hcp" in datasets.available()
    assert nd.datasets.load is datasets.load
    assert all(isinstance(name, str) for name in datasets.available())


def test_unknown_dataset_lists_available():
    with pytest.raises(ValueError, match="Unknown dataset 'nope'.*hcp"):
        datasets.load("nope")


@pytest.mark.parametrize("name", datasets.available())
def test_embedded_dataset_invariants(name):
    data = datasets.load(name)
    n = data.n_nodes
    assert data.name == name
    assert data.weights.shape == data.lengths.shape == data.fc.shape == (n, n)
    assert len(data.labels) == n and len(set(data.labels)) == n
    for a in (data.weights, data.lengths, data.fc):
        assert a.dtype == np.float64 and np.all(np.isfinite(a))
        assert not a.flags.writeable
    assert np.all(data.weights >= 0) and np.all(data.lengths >= 0)
    np.testing.assert_array_equal(np.diag(data.weights), 0.0)
    np.testing.assert_array_equal(np.diag(data.fc), 1.0)
    assert np.all(np.abs(data.fc) <= 1.0)
    np.testing.assert_allclose(data.fc, data.fc.T, atol=1e-12)
    assert data.citation


def test_hcp_contents():
    data = datasets.load("hcp")
    assert data.n_nodes == 80
    np.testing.assert_array_equal(data.weights, data.weights.T)
    np.testing.assert_array_equal(data.lengths, data.lengths.T)
    assert data.weights.max() == 1.0
    off = ~np.eye(80, dtype=bool)
    assert np.all(data.weights[off] > 0) and np.all(data.lengths[off] > 0)
    assert 100.0 < data.lengths[off].mean() < 200.0 and data.lengths.max() < 300.0  # mm
    # AAL2 order alternates hemispheres: even = left, odd = right.
    assert all(lab.endswith("_L") for lab in data.labels[0::2])
    assert all(lab.endswith("_R") for lab in data.labels[1::2])
    assert data.labels[:2] == ("Precentral_L", "Precentral_R")
    assert data.bold.shape == (7, 1200, 80) and data.tr == 720.0
    assert np.all(np.isfinite(data.bold)) and not data.bold.flags.writeable
    assert "Human Connectome Project" in data.citation


def test_hcp_fc_is_fisher_mean_of_bold_correlations():
    # Independent recomputation with np.corrcoef from the shipped (quantised) BOLD.
    data = datasets.load("hcp")
    fcs = np.stack([np.corrcoef(b.T) for b in data.bold])
    np.testing.assert_allclose(_fisher_mean(fcs), data.fc, atol=1e-5)
    # ... and not the plain mean, which differs visibly on this data.
    assert np.abs(fcs.mean(axis=0) - data.fc).max() > 1e-2


def test_hcp_builds_a_delay_graph():
    data = datasets.load("hcp")
    graph = nd.DelayGraph.from_lengths(data.weights, data.lengths, speed=4.0)
    assert graph.max_delay == pytest.approx(data.lengths.max() / 4.0)
    np.testing.assert_array_equal(np.asarray(graph.weights), data.weights)


def test_dataset_is_frozen_and_checked():
    data = datasets.load("hcp")
    with pytest.raises(ValueError):
        data.weights[0, 1] = 5.0
    with pytest.raises(AttributeError):
        data.name = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="bold needs a positive tr"):
        datasets.Dataset(W, bold=np.zeros((1, 4, 3)))
    with pytest.raises(ValueError, match="weights contains 3 NaN"):
        datasets.Dataset(np.where(np.eye(3, dtype=bool), np.nan, W))
    with pytest.raises(ValueError, match="weights contains 1 negative"):
        datasets.Dataset(-np.eye(3) * np.array([0.0, 1.0, 0.0]))
    user = np.array(W)
    d = datasets.Dataset(user)
    user[0, 1] = 99.0  # the dataset holds a copy
    assert d.weights[0, 1] == 1.5 and d.labels == ("0", "1", "2")


def test_dataset_refuses_complex_arrays():
    # NumPy's cast to float64 would keep only the real part (zeros for an imaginary array).
    bold = np.random.default_rng(0).normal(size=(1, 20, 3))
    cases = [
        ({"weights": W * 1j}, "weights"),
        ({"weights": W, "lengths": W + 0j}, "lengths"),
        ({"weights": W, "fc": np.eye(3) * (1 + 1j)}, "fc"),
        ({"weights": W, "bold": bold * 1j, "tr": 720.0}, "bold"),
        ({"weights": W, "centres": np.zeros((3, 3), complex)}, "centres"),
        ({"weights": W, "areas": np.array([1 + 1j, 2, 3])}, "areas"),
    ]
    for kwargs, what in cases:
        with pytest.raises(ValueError, match=rf"Dataset 'x': {what} must be real.*complex"):
            datasets.Dataset(**kwargs, name="x")


# ------------------------------------------------------------------------- TVB zip


def test_read_tvb_zip(tmp_path):
    path = _write_zip(tmp_path / "conn.zip", _tvb_members())
    d = datasets.read_tvb_zip(path)
    assert d.name == "conn" and d.fc is None and d.bold is None
    np.testing.assert_array_equal(d.weights, W)  # not transposed: [target, source]
    assert d.weights[1, 2] == 2.0
    np.testing.assert_array_equal(d.lengths, L)
    assert d.labels == tuple(LABELS)
    np.testing.assert_array_equal(d.centres, CENTRES)
    np.testing.assert_array_equal(d.cortical, [True, True, False])
    np.testing.assert_array_equal(d.hemispheres, [True, True, False])
    np.testing.assert_array_equal(d.areas, [10.5, 20.0, 30.0])


def test_read_tvb_zip_subfolder_bz2_and_optional(tmp_path):
    members = {
        "conn/weights.txt.bz2": bz2.compress(_txt(W).encode()),
        "conn/tract_lengths.txt": _txt(L),
        # TVB's "centers" spelling, an extra trailing column and leading blanks.
        "conn/centers.txt": "".join(
            f"  {lab} {x} {y} {z} None\n" for lab, (x, y, z) in zip(LABELS, CENTRES)
        ),
        "__MACOSX/conn/._weights.txt": b"\x00\x01junk",
        "conn/info.txt": "a", "other/info.txt": "b",  # duplicates of an unused member
    }
    d = datasets.read_tvb_zip(_write_zip(tmp_path / "c.zip", members), name="mine")
    assert d.name == "mine"
    np.testing.assert_array_equal(d.weights, W)
    np.testing.assert_array_equal(d.centres, CENTRES)
    assert d.labels == tuple(LABELS)
    assert d.cortical is None and d.hemispheres is None and d.areas is None


@pytest.mark.parametrize(
    "override, match",
    [
        ({"weights.txt": None}, "no 'weights' member"),
        ({"tract_lengths.txt": None}, "no 'tract_lengths' member"),
        ({"centres.txt": None}, "no 'centres' member"),
        ({"weights.txt": _txt(W[:2])}, r"weights\.txt.*square matrix, got shape \(2, 3\)"),
        ({"weights.txt": "1 2 3\n4 5\n6 7 8\n"}, r"weights\.txt.*ragged"),
        ({"weights.txt": "1 2 x\n4 5 6\n7 8 9\n"}, r"weights\.txt.*non-numeric"),
        ({"weights.txt": _txt(np.where(np.eye(3) > 0, np.nan, W))}, r"weights\.txt.*NaN"),
        ({"weights.txt": _txt(W - np.eye(3))}, r"weights\.txt.*negative"),
        ({"tract_lengths.txt": _txt(-L)}, r"tract_lengths\.txt.*negative"),
        ({"tract_lengths.txt": _txt(np.zeros((2, 2)))}, r"tract_lengths.*\(2, 2\).*\(3, 3\)"),
        ({"tract_lengths.txt": _txt(np.full((3, 3), np.inf))}, r"tract_lengths.*infinite"),
        ({"centres.txt": _centres_txt(LABELS[:2], CENTRES[:2])}, r"centres\.txt.*2 labels"),
        ({"centres.txt": "rA 1 2\n"}, r"centres\.txt.*line 1 is not 'label x y z'"),
        ({"areas.txt": "1\n2\n"}, r"areas\.txt.*2 areas values for 3 nodes"),
        ({"sub/weights.txt": _txt(W)}, "two or more members for 'weights'"),
        ({"weights.txt": None, "weights.txt.bz2": b"not bz2"}, r"weights\.txt\.bz2: cannot read"),
    ],
)
def test_read_tvb_zip_errors(tmp_path, override, match):
    path = _write_zip(tmp_path / "bad.zip", _tvb_members(**override))
    with pytest.raises(ValueError, match=match):
        datasets.read_tvb_zip(path)


def test_read_tvb_zip_not_a_zip(tmp_path):
    path = tmp_path / "x.zip"
    path.write_text("not a zip")
    with pytest.raises(ValueError, match="x.zip.*zip"):
        datasets.read_tvb_zip(path)
    with pytest.raises(ValueError, match="missing.zip"):
        datasets.read_tvb_zip(tmp_path / "missing.zip")


def test_read_tvb_data_default_connectivity():
    tvb_data = pytest.importorskip("tvb_data")
    path = Path(tvb_data.__file__).parent / "connectivity" / "connectivity_76.zip"
    d = datasets.read_tvb_zip(path)
    assert d.n_nodes == 76 and len(d.labels) == 76 and d.centres.shape == (76, 3)
    with zipfile.ZipFile(path) as zf:  # independent parse of the raw member
        with zf.open("weights.txt") as f:
            np.testing.assert_array_equal(d.weights, np.loadtxt(f))
        with zf.open("centres.txt") as f:
            first = f.readline().decode().split()
    assert d.labels[0] == first[0]
    np.testing.assert_array_equal(d.centres[0], [float(v) for v in first[1:4]])


# ------------------------------------------------------------------------------ npz


def test_read_npz_defaults_and_custom_keys(tmp_path):
    fc = np.corrcoef(np.random.default_rng(0).normal(size=(3, 50)))
    np.savez(tmp_path / "a.npz", weights=W, lengths=L, labels=np.array(LABELS), fc=fc)
    d = datasets.read_npz(tmp_path / "a.npz")
    assert d.name == "a" and d.labels == tuple(LABELS)
    np.testing.assert_array_equal(d.weights, W)
    np.testing.assert_array_equal(d.lengths, L)
    np.testing.assert_array_equal(d.fc, fc)

    np.savez(tmp_path / "b.npz", SC=W, region_labels=np.array(LABELS))
    d = datasets.read_npz(tmp_path / "b.npz", weights="SC", labels="region_labels")
    np.testing.assert_array_equal(d.weights, W)
    assert d.lengths is None and d.fc is None and d.labels == tuple(LABELS)
    d = datasets.read_npz(tmp_path / "a.npz", fc=None, lengths=None)
    assert d.fc is None and d.lengths is None


@pytest.mark.parametrize(
    "arrays, kwargs, match",
    [
        ({"lengths": L}, {}, r"no array 'weights' \(weights\); keys are \['lengths'\]"),
        ({"weights": W}, {"lengths": "tract"}, r"no array 'tract' \(lengths\)"),
        ({"weights": W[:2]}, {}, r"\['weights'\].*square matrix"),
        ({"weights": np.where(np.eye(3) > 0, np.nan, W)}, {}, r"\['weights'\].*NaN"),
        ({"weights": -W}, {}, r"\['weights'\].*negative"),
        ({"weights": W, "lengths": -L}, {}, r"\['lengths'\].*negative"),
        ({"weights": W, "lengths": L[:2, :2]}, {}, r"\['lengths'\].*\(2, 2\).*\(3, 3\)"),
        ({"weights": W, "fc": np.eye(4)}, {}, r"\['fc'\].*\(4, 4\)"),
        ({"weights": W, "labels": np.array(LABELS[:2])}, {}, r"\['labels'\].*2 labels"),
        ({"weights": np.array(["a", "b"])}, {}, r"\['weights'\].*not a numeric array"),
        ({"weights": np.array([W, None], dtype=object)}, {}, r"cannot read array 'weights'"),
    ],
)
def test_read_npz_errors(tmp_path, arrays, kwargs, match):
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=match):
        datasets.read_npz(tmp_path / "bad.npz", **kwargs)


def test_read_npz_missing_and_not_npz(tmp_path):
    with pytest.raises(ValueError, match="nothere.npz"):
        datasets.read_npz(tmp_path / "nothere.npz")
    np.save(tmp_path / "single.npy", W)
    with pytest.raises(ValueError, match="single.npy.*single .npy array"):
        datasets.read_npz(tmp_path / "single.npy")


# ------------------------------------------------------------------------------ csv


def test_read_csv_matrix_formats(tmp_path):
    rows = "".join(",".join(map(str, r)) + ",\n" for r in W)  # trailing delimiter
    (tmp_path / "c.csv").write_text("# weights\n" + rows)
    (tmp_path / "s.txt").write_text(_txt(W))
    (tmp_path / "t.tsv").write_text("".join("\t".join(map(str, r)) + "\n" for r in W))
    for name in ("c.csv", "s.txt", "t.tsv"):
        np.testing.assert_array_equal(datasets.read_csv_matrix(tmp_path / name), W)
    (tmp_path / "semi.txt").write_text("".join(";".join(map(str, r)) + "\n" for r in W))
    np.testing.assert_array_equal(
        datasets.read_csv_matrix(tmp_path / "semi.txt", delimiter=";"), W
    )
    (tmp_path / "fc.csv").write_text("1,-0.5\n-0.5,1\n")  # negative values are allowed here
    np.testing.assert_array_equal(
        datasets.read_csv_matrix(tmp_path / "fc.csv"), [[1, -0.5], [-0.5, 1]]
    )


@pytest.mark.parametrize(
    "content, match",
    [
        ("", "empty"),
        ("1,2,3\n4,5,6\n", r"square matrix, got shape \(2, 3\)"),
        ("1,2\n3\n", "ragged"),
        ("1,a\n3,4\n", "non-numeric entry on data line 1"),
        ("1,nan\n3,4\n", "NaN"),
    ],
)
def test_read_csv_matrix_errors(tmp_path, content, match):
    (tmp_path / "m.csv").write_text(content)
    with pytest.raises(ValueError, match=r"m\.csv.*" + match):
        datasets.read_csv_matrix(tmp_path / "m.csv")


def test_read_csv_matrix_missing_file(tmp_path):
    with pytest.raises(ValueError, match="absent.csv.*cannot read"):
        datasets.read_csv_matrix(tmp_path / "absent.csv")


def test_read_connectome_csv(tmp_path):
    np.savetxt(tmp_path / "w.csv", W, delimiter=",")
    np.savetxt(tmp_path / "l.csv", L, delimiter=",")
    (tmp_path / "labels.txt").write_text("\n".join(LABELS) + "\n")
    d = datasets.read_connectome_csv(
        tmp_path / "w.csv", tmp_path / "l.csv", tmp_path / "labels.txt"
    )
    assert d.name == "w" and d.labels == tuple(LABELS)
    np.testing.assert_array_equal(d.weights, W)
    np.testing.assert_array_equal(d.lengths, L)
    d = datasets.read_connectome_csv(str(tmp_path / "w.csv"), labels=("x", "y", "z"), name="n")
    assert d.name == "n" and d.lengths is None and d.labels == ("x", "y", "z")
    assert datasets.read_connectome_csv(tmp_path / "w.csv").labels == ("0", "1", "2")


def test_read_connectome_csv_errors(tmp_path):
    np.savetxt(tmp_path / "w.csv", W, delimiter=",")
    np.savetxt(tmp_path / "neg.csv", -W, delimiter=",")
    np.savetxt(tmp_path / "l2.csv", L[:2, :2], delimiter=",")
    np.savetxt(tmp_path / "lneg.csv", -L, delimiter=",")
    (tmp_path / "two.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match=r"neg\.csv.*weights contains .* negative"):
        datasets.read_connectome_csv(tmp_path / "neg.csv")
    with pytest.raises(ValueError, match=r"l2\.csv.*\(2, 2\).*\(3, 3\)"):
        datasets.read_connectome_csv(tmp_path / "w.csv", tmp_path / "l2.csv")
    with pytest.raises(ValueError, match=r"lneg\.csv.*lengths contains .* negative"):
        datasets.read_connectome_csv(tmp_path / "w.csv", tmp_path / "lneg.csv")
    with pytest.raises(ValueError, match=r"two\.txt: 2 labels for 3 nodes"):
        datasets.read_connectome_csv(tmp_path / "w.csv", labels=tmp_path / "two.txt")
    with pytest.raises(ValueError, match="2 labels for 3 nodes"):
        datasets.read_connectome_csv(tmp_path / "w.csv", labels=["a", "b"])
    with pytest.raises(ValueError, match="nolabels.txt.*cannot read labels"):
        datasets.read_connectome_csv(tmp_path / "w.csv", labels=tmp_path / "nolabels.txt")


# ----------------------------------------------------------- normalise and subset


def _full_dataset() -> datasets.Dataset:
    """The directed 3-node connectome with every optional field, and 3 subjects' BOLD."""
    bold = np.random.default_rng(3).normal(size=(3, 40, 3))
    bold[:, :, 1] += 0.8 * bold[:, :, 0]  # correlated regions, so that FCs differ
    return datasets.Dataset(
        W, L, LABELS, name="toy", fc=np.eye(3), bold=bold, tr=720.0, centres=CENTRES,
        cortical=np.array([True, True, False]), hemispheres=np.array([True, True, False]),
        areas=np.array([10.5, 20.0, 30.0]), citation="cite me",
    )


def test_normalise_divides_the_weights_by_their_maximum():
    data = _full_dataset()
    out = datasets.normalise(data)
    # W's largest entry is 3.0, at [target 2, source 0]: the result is W / 3, written out.
    expected = np.array([[0.0, 0.5, 0.0], [0.25 / 3, 0.0, 2.0 / 3], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(out.weights, expected, rtol=1e-15)
    assert isinstance(out, datasets.Dataset) and not out.weights.flags.writeable
    np.testing.assert_array_equal(data.weights, W)  # the input is unchanged
    for field in ("lengths", "fc", "bold", "centres", "cortical", "hemispheres", "areas"):
        np.testing.assert_array_equal(getattr(out, field), getattr(data, field))
    assert (out.name, out.labels, out.tr, out.citation) == ("toy", tuple(LABELS), 720.0, "cite me")
    # Already normalised (the embedded data, max 1): unchanged.
    hcp = datasets.load("hcp")
    np.testing.assert_array_equal(datasets.normalise(hcp).weights, hcp.weights)


def test_normalise_errors(no_type_hook):
    with pytest.raises(ValueError, match=r"normalise: Dataset 'z' has only zero weights"):
        datasets.normalise(datasets.Dataset(np.zeros((2, 2)), name="z"))
    with pytest.raises(ValueError, match=r"normalise\(data\) must be a netdyn\.datasets\."
                       r"Dataset, got ndarray \(for an array w, normalise with w / w\.max\(\)\)"):
        datasets.normalise(W)


def test_subset_of_subjects_keeps_their_bold_and_their_group_fc():
    data = _full_dataset()
    part = datasets.subset(data, subjects=[2, 0])
    np.testing.assert_array_equal(part.bold, data.bold[[2, 0]])
    # fc: the mean of the kept subjects' correlation matrices (np.corrcoef, independently).
    expected = (np.corrcoef(data.bold[2].T) + np.corrcoef(data.bold[0].T)) / 2
    np.testing.assert_allclose(part.fc, expected, atol=1e-12)
    assert np.abs(part.fc - np.corrcoef(data.bold[1].T)).max() > 1e-2  # subject 1 left out
    # The connectome and the per-region fields are the group's, unchanged.
    np.testing.assert_array_equal(part.weights, W)
    np.testing.assert_array_equal(part.lengths, L)
    assert part.labels == tuple(LABELS) and part.tr == 720.0 and part.name == "toy"
    mask = datasets.subset(data, subjects=np.array([False, True, False]))
    np.testing.assert_array_equal(mask.bold, data.bold[1:2])


def test_subset_of_regions_follows_every_per_region_field():
    data = _full_dataset()
    # By label and by index, in a new order: lC (index 2) then rA (index 0).
    for regions in (["lC", "rA"], [2, 0], ["lC", 0], np.array([2, 0])):
        part = datasets.subset(data, regions=regions)
        # W[target, source] of the kept pairs: [lC <- lC, lC <- rA], [rA <- lC, rA <- rA].
        np.testing.assert_array_equal(part.weights, [[0.0, 3.0], [0.0, 0.0]])
        np.testing.assert_array_equal(part.lengths, [[0.0, 20.0], [20.0, 0.0]])
        np.testing.assert_array_equal(part.fc, np.eye(2))
        assert part.labels == ("lC", "rA")
        np.testing.assert_array_equal(part.centres, [CENTRES[2], CENTRES[0]])
        np.testing.assert_array_equal(part.cortical, [False, True])
        np.testing.assert_array_equal(part.hemispheres, [False, True])
        np.testing.assert_array_equal(part.areas, [30.0, 10.5])
        np.testing.assert_array_equal(part.bold, data.bold[:, :, [2, 0]])
    cortical = datasets.subset(data, regions=data.cortical)
    assert cortical.labels == ("rA", "rB")
    np.testing.assert_array_equal(cortical.weights, [[0.0, 1.5], [0.25, 0.0]])
    one = datasets.subset(data, regions="rB")  # one label
    assert one.labels == ("rB",) and one.weights.shape == (1, 1)


def test_subset_of_subjects_and_regions():
    data = _full_dataset()
    part = datasets.subset(data, subjects=[1], regions=["rB", "rA"])
    np.testing.assert_array_equal(part.bold, data.bold[1][:, [1, 0]][None])
    np.testing.assert_allclose(part.fc, np.corrcoef(data.bold[1][:, [1, 0]].T), atol=1e-12)
    np.testing.assert_array_equal(part.weights, [[0.0, 0.25], [1.5, 0.0]])


def test_subset_of_the_embedded_data():
    data = datasets.load("hcp")
    train = datasets.subset(data, subjects=[0, 1, 2, 3])
    assert train.bold.shape == (4, 1200, 80)
    np.testing.assert_allclose(
        train.fc, np.mean([np.corrcoef(b.T) for b in data.bold[:4]], axis=0), atol=1e-10)
    left = datasets.subset(data, regions=[lab for lab in data.labels if lab.endswith("_L")])
    assert left.n_nodes == 40 and left.labels[0] == "Precentral_L"
    np.testing.assert_array_equal(left.weights, data.weights[::2, ::2])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(subjects=[3]), r"subset\(subjects\): subject 3 does not exist; Dataset 'toy' "
         r"has 3 subjects, counted from 0 \(0-2\)\."),
        (dict(subjects=[-1]), r"subject -1 does not exist"),
        (dict(subjects=[]), r"subset\(subjects\) selects no subject: keep at least one\."),
        (dict(subjects=np.zeros(3, bool)), r"subset\(subjects\) selects no subject"),
        (dict(subjects=[0, 0]), r"subset\(subjects\): subject 0 is named twice\."),
        (dict(subjects=np.ones(2, bool)), r"subset\(subjects\): a boolean mask must have one "
         r"entry per subject \(Dataset 'toy' has 3\), got shape \(2,\)\."),
        (dict(subjects=["rA"]), r"subset\(subjects\) must be subject indices \(integers from "
         r"0\) or a boolean mask of 3, got 'rA'\."),
        (dict(regions=[3]), r"subset\(regions\): region 3 does not exist; Dataset 'toy' has 3 "
         r"regions, counted from 0 \(0-2\)\."),
        (dict(regions=["RB"]), r"subset\(regions\): Dataset 'toy' has no region labelled 'RB'; "
         r"did you mean 'rB'\? \(the labels are data\.labels\)\."),
        (dict(regions=["r"]), r"labelled 'r'; did you mean 'rA' or 'rB'\?"),
        (dict(regions=["xyz"]), r"no region labelled 'xyz' \(the labels are data\.labels\)\."),
        (dict(regions=["rA", 0]), r"subset\(regions\): region 0 is named twice\."),
        (dict(regions=[1.0]), r"subset\(regions\) must be region indices \(integers from 0\), "
         r"labels or a boolean mask of 3, got 1\.0\."),
        (dict(regions=[True]), r"got True"),
    ],
)
def test_subset_errors(kwargs, match, no_type_hook):
    with pytest.raises(ValueError, match=match):
        datasets.subset(_full_dataset(), **kwargs)


def test_subset_needs_bold_for_subjects(no_type_hook):
    with pytest.raises(ValueError, match=r"subset\(subjects\): Dataset 'c' has no BOLD time "
                       r"series \(bold is None\), so no subjects to choose from"):
        datasets.subset(datasets.Dataset(W, name="c"), subjects=[0])
    with pytest.raises(ValueError, match=r"subset\(data\) must be a netdyn\.datasets\.Dataset"):
        datasets.subset(W, regions=[0])


def test_parse_subjects_reads_ranges_lists_all_and_none():
    assert datasets.parse_subjects("1-3,5", 6) == (1, 2, 3, 5)
    assert datasets.parse_subjects(" ALL ", 3) == (1, 2, 3)
    assert datasets.parse_subjects("none", 3) == ()
    for spec, message in (("0-2", "subject 0 does not exist (the data have subjects 1-3)"),
                          ("one", "expected subject numbers such as 1-4"),
                          ("2,2", "a subject named twice"), ("3-1", "no subject")):
        with pytest.raises(ValueError, match=f"^{spec!r}: ") as e:
            datasets.parse_subjects(spec, 3)
        assert message in str(e.value)


def test_read_matrix_reads_npy_and_text(tmp_path):
    m = np.array([[1.0, -0.5], [-0.5, 1.0]])
    np.save(tmp_path / "fc.npy", m)
    (tmp_path / "fc.csv").write_text("1,-0.5\n-0.5,1\n")
    np.testing.assert_array_equal(datasets.read_matrix(tmp_path / "fc.npy"), m)
    np.testing.assert_array_equal(datasets.read_matrix(str(tmp_path / "fc.csv")), m)
    np.save(tmp_path / "bad.npy", np.array([[1j]]))
    with pytest.raises(ValueError, match="must be real"):
        datasets.read_matrix(tmp_path / "bad.npy")


def test_from_spec_opens_an_embedded_dataset_a_npz_or_a_tvb_zip(tmp_path):
    hcp = datasets.load("hcp")
    np.testing.assert_array_equal(datasets.from_spec("hcp").weights, hcp.weights)
    np.savez(tmp_path / "c.npz", weights=hcp.weights, lengths=hcp.lengths)
    np.testing.assert_array_equal(datasets.from_spec(str(tmp_path / "c.npz")).lengths,
                                  hcp.lengths)
    datasets.write_tvb_zip(hcp, tmp_path / "c.zip")
    np.testing.assert_allclose(datasets.from_spec(str(tmp_path / "c.zip")).weights,
                               hcp.weights, rtol=1e-12)
    with pytest.raises(ValueError, match=r"^'nowhere': not an embedded dataset \(hcp\)"):
        datasets.from_spec("nowhere")
