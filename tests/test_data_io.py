"""Connectome files in and out: damaged files (one test per case, each an error naming the
file), tab-separated / BIDS-style connectomes, and TVB zips written then read back."""

import io
import zipfile
from pathlib import Path

import equinox as eqx
import numpy as np
import pytest

from netdyn import datasets

W = np.array([[0.0, 1.5, 0.0], [0.25, 0.0, 2.0], [3.0, 0.0, 0.0]])  # [target, source]
L = np.array([[0.0, 10.0, 20.0], [10.0, 0.0, 30.5], [20.0, 30.5, 0.0]])
LABELS = ("rA", "rB", "lC")
CENTRES = np.array([[1.0, 2.0, 3.0], [-4.0, 5.5, 6.0], [7.0, -8.0, 9.25]])


def _npz_bytes(compressed: bool = True, **arrays) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _data_offset(raw: bytes, member: str) -> int:
    """Offset of ``member``'s stored bytes in the zip ``raw`` (after its local header)."""
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        info = zf.getinfo(member)
    name_len = int.from_bytes(raw[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(raw[info.header_offset + 28 : info.header_offset + 30], "little")
    return info.header_offset + 30 + name_len + extra_len


def _npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def _assert_refused(reader, path: Path, raw: bytes, match: str):
    """``reader`` stops with a ValueError matching ``match`` on a file ``path`` of ``raw``."""
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=match):
        reader(path)


def _zip(path: Path, members: dict[str, bytes], compression=zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return path


# ------------------------------------------------------- damaged files (issue 12, item 8)


def test_empty_npz_names_the_file(tmp_path):
    # np.load raises a bare EOFError ("No data left in file") on an empty file.
    _assert_refused(datasets.read_npz, tmp_path / "empty.npz", b"", r"empty\.npz: .*empty")


def test_truncated_npz_names_the_file(tmp_path):
    raw = _npz_bytes(weights=W, lengths=L)
    _assert_refused(datasets.read_npz, tmp_path / "cut.npz", raw[: len(raw) // 2], r"cut\.npz: ")


def test_corrupt_compressed_npz_member_names_file_and_array(tmp_path):
    # Scrambled deflate data: zlib.error, not a ValueError, from the lazy member read.
    raw = bytearray(_npz_bytes(weights=W, lengths=L))
    start = _data_offset(bytes(raw), "weights.npy")
    for i in range(start + 2, start + 22):
        raw[i] ^= 0xFF
    _assert_refused(datasets.read_npz, tmp_path / "scrambled.npz", raw,
                    r"scrambled\.npz: cannot read array 'weights'")


def test_npz_member_with_bad_checksum_names_file_and_array(tmp_path):
    # One flipped bit in stored (uncompressed) data: zipfile.BadZipFile (bad CRC-32).
    raw = bytearray(_npz_bytes(compressed=False, weights=W))
    raw[_data_offset(bytes(raw), "weights.npy") + 130] ^= 0x01
    _assert_refused(datasets.read_npz, tmp_path / "bitflip.npz", raw,
                    r"bitflip\.npz: cannot read array 'weights'.*CRC")


def test_npz_member_with_truncated_array_data(tmp_path):
    # A valid zip whose .npy member stops in the middle of the array data.
    npy = _npy_bytes(W)
    path = _zip(tmp_path / "short.npz", {"weights.npy": npy[: len(npy) - 20]})
    with pytest.raises(ValueError, match=r"short\.npz: cannot read array 'weights'"):
        datasets.read_npz(path)


def test_npz_member_that_is_not_an_npy_array(tmp_path):
    # NumPy returns a non-.npy member as raw bytes; say so instead of "not numeric".
    path = _zip(tmp_path / "raw.npz", {"weights.npy": b"", "lengths.npy": _npy_bytes(L)})
    with pytest.raises(ValueError, match=r"raw\.npz: array 'weights' is not a \.npy array"):
        datasets.read_npz(path)


def test_non_utf8_csv_matrix_names_the_file(tmp_path):
    raw = "# poids, r\xe9gion\n0,1\n1,0\n".encode("latin-1")
    _assert_refused(datasets.read_csv_matrix, tmp_path / "latin1.csv", raw,
                    r"latin1\.csv: .*UTF-8.*byte 0xe9")


def test_non_utf8_labels_file_names_the_file(tmp_path):
    np.savetxt(tmp_path / "w.csv", W, delimiter=",")
    path = tmp_path / "labels.txt"
    path.write_bytes("caf\xe9\nb\nc\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"labels\.txt: .*UTF-8"):
        datasets.read_connectome_csv(tmp_path / "w.csv", labels=path)


def test_binary_file_given_as_csv_names_the_file(tmp_path):
    # A common slip: an .npy passed to the text reader.
    _assert_refused(datasets.read_csv_matrix, tmp_path / "weights.csv", _npy_bytes(W),
                    r"weights\.csv: ")


def test_tvb_zip_with_corrupt_compressed_member(tmp_path):
    members = {
        "weights.txt": "\n".join(" ".join(map(str, r)) for r in W).encode(),
        "tract_lengths.txt": "\n".join(" ".join(map(str, r)) for r in L).encode(),
        "centres.txt": "".join(f"{a} 0 0 0\n" for a in LABELS).encode(),
    }
    raw = bytearray(_zip(tmp_path / "ok.zip", members, zipfile.ZIP_DEFLATED).read_bytes())
    start = _data_offset(bytes(raw), "weights.txt")
    for i in range(start, start + 12):
        raw[i] ^= 0xFF
    _assert_refused(datasets.read_tvb_zip, tmp_path / "conn.zip", raw,
                    r"conn\.zip:weights\.txt: cannot read")


def test_empty_tvb_zip_file(tmp_path):
    _assert_refused(datasets.read_tvb_zip, tmp_path / "nothing.zip", b"",
                    r"nothing\.zip: cannot open as a zip")


def test_directory_given_as_file(tmp_path):
    for reader in (datasets.read_npz, datasets.read_csv_matrix, datasets.read_tvb_zip):
        with pytest.raises(ValueError, match=str(tmp_path.name)):
            reader(tmp_path)


@pytest.mark.parametrize(
    "weights, match",
    [
        (np.zeros(3), r"square matrix, got shape \(3,\)"),
        (np.zeros((2, 2, 2)), r"square matrix, got shape \(2, 2, 2\)"),
        (np.zeros((0, 0)), r"no regions"),
    ],
)
def test_npz_wrong_shapes(tmp_path, weights, match):
    np.savez(tmp_path / "shape.npz", weights=weights)
    with pytest.raises(ValueError, match=r"shape\.npz\['weights'\].*" + match):
        datasets.read_npz(tmp_path / "shape.npz")


def test_npz_labels_of_wrong_shape(tmp_path):
    np.savez(tmp_path / "lab.npz", weights=W, labels=np.array([LABELS, LABELS]))
    with pytest.raises(ValueError, match=r"lab\.npz\['labels'\].*1-D.*\(2, 3\)"):
        datasets.read_npz(tmp_path / "lab.npz")


# ------------------------------------------------------- tab-separated / BIDS connectomes


def _tsv(matrix, header=None, row_labels=None, corner=True, sep="\t") -> str:
    lines = []
    if header is not None:
        lines.append(sep.join(([""] if corner and row_labels is not None else []) + list(header)))
    for i, row in enumerate(matrix):
        fields = [repr(float(v)) for v in row]
        lines.append(sep.join(([row_labels[i]] if row_labels is not None else []) + fields))
    return "\n".join(lines) + "\n"


def _nodes(labels=LABELS, centres=CENTRES, name_column="name") -> str:
    rows = [f"index\t{name_column}\tx\ty\tz\tcolor"]
    rows += [f"{i + 1}\t{lab}\t{x}\t{y}\t{z}\t#ff0000"
             for i, (lab, (x, y, z)) in enumerate(zip(labels, centres))]
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize(
    "header, row_labels, corner",
    [(None, None, True), (LABELS, None, True), (None, LABELS, True), (LABELS, LABELS, True),
     (LABELS, LABELS, False)],
    ids=["plain", "header", "row-labels", "both", "both-no-corner"],
)
def test_read_tsv_connectome_layouts(tmp_path, header, row_labels, corner):
    (tmp_path / "w.tsv").write_text(_tsv(W, header, row_labels, corner))
    d = datasets.read_tsv_connectome(tmp_path / "w.tsv")
    np.testing.assert_array_equal(d.weights, W)  # [target, source], not transposed
    want = LABELS if (header or row_labels) else ("0", "1", "2")
    assert d.labels == want and d.name == "w" and d.lengths is None


def test_read_tsv_connectome_with_lengths_and_nodes(tmp_path):
    (tmp_path / "sub-01_meas-weights_relmat.dense.tsv").write_text(_tsv(W, LABELS, LABELS))
    (tmp_path / "sub-01_meas-lengths_relmat.dense.tsv").write_text(_tsv(L, LABELS))
    (tmp_path / "sub-01_nodes.tsv").write_text(_nodes())
    d = datasets.read_tsv_connectome(
        tmp_path / "sub-01_meas-weights_relmat.dense.tsv",
        tmp_path / "sub-01_meas-lengths_relmat.dense.tsv",
        tmp_path / "sub-01_nodes.tsv",
        name="sub-01",
    )
    assert d.name == "sub-01" and d.labels == LABELS
    np.testing.assert_array_equal(d.weights, W)
    np.testing.assert_array_equal(d.lengths, L)
    np.testing.assert_array_equal(d.centres, CENTRES)
    # Labels from the nodes file alone, comma-separated matrices, "label" column.
    (tmp_path / "w.csv").write_text(_tsv(W, sep=","))
    (tmp_path / "n.tsv").write_text(_nodes(name_column="Label"))
    d = datasets.read_tsv_connectome(tmp_path / "w.csv", nodes=tmp_path / "n.tsv")
    assert d.labels == LABELS


@pytest.mark.parametrize(
    "files, match",
    [
        ({"w": _tsv(W, LABELS, ("rA", "lC", "rB"))}, r"w\.tsv: row labels and column labels"),
        ({"w": _tsv(W, LABELS[:2])}, r"w\.tsv: the header row has 2 labels for a 3 x 3"),
        ({"w": _tsv(W[:2], LABELS)}, r"w\.tsv: weights must be a square matrix.*\(2, 3\)"),
        ({"w": "a\tb\n1\tx\n2\t3\n"}, r"w\.tsv: weights has a non-numeric entry 'x' in data row 1"),
        ({"w": "1\t2\t3\n4\t5\n"}, r"w\.tsv: weights has ragged rows"),
        ({"w": _tsv(-W)}, r"w\.tsv: weights contains .* negative"),
        ({"w": "# only a comment\n"}, r"w\.tsv: weights is empty"),
        ({"w": "\t".join(LABELS) + "\n"}, r"w\.tsv: weights has a header row but no data"),
        ({"w": _tsv(W, LABELS), "l": _tsv(L, ("rA", "rB", "XX"))},
         r"l\.tsv: region labels disagree with .*w\.tsv: region 2 is 'XX' here and 'lC'"),
        ({"w": _tsv(W), "l": _tsv(L[:2, :2])}, r"l\.tsv: lengths has shape \(2, 2\)"),
        ({"w": _tsv(W), "n": _nodes(LABELS[:2], CENTRES[:2])}, r"n\.tsv: 2 rows for 3 nodes"),
        ({"w": _tsv(W), "n": "index\tcolour\n1\tred\n"}, r"n\.tsv: the nodes table needs"),
        ({"w": _tsv(W, LABELS), "n": _nodes(("rA", "rB", "rC"))},
         r"n\.tsv: region labels disagree .* region 2 is 'rC' here and 'lC'"),
        ({"w": _tsv(W), "n": "name\tx\ty\tz\na\t1\t2\n"}, r"n\.tsv: nodes row 1 has 3 fields"),
    ],
)
def test_read_tsv_connectome_errors(tmp_path, files, match):
    paths = {}
    for key, content in files.items():
        paths[key] = tmp_path / f"{key}.tsv"
        paths[key].write_text(content)
    with pytest.raises(ValueError, match=match):
        datasets.read_tsv_connectome(paths["w"], paths.get("l"), paths.get("n"))


# ----------------------------------------------------------------- TVB zip, written


def _full_dataset(labels=LABELS):
    rng = np.random.default_rng(0)
    w = rng.uniform(size=(3, 3)) * (1 - np.eye(3)) / 3.0  # values with no short decimal form
    return datasets.Dataset(
        w, L * np.pi, labels, name="conn", centres=CENTRES / 7.0,
        cortical=np.array([True, False, True]), hemispheres=np.array([False, True, True]),
        areas=np.array([1.0 / 3, 2.5, 9.0]),
    )


def test_write_tvb_zip_round_trips(tmp_path):
    d = _full_dataset()
    path = datasets.write_tvb_zip(d, tmp_path / "conn.zip")
    assert path == tmp_path / "conn.zip"
    back = datasets.read_tvb_zip(path)
    assert back.labels == d.labels and back.name == "conn"
    for what in ("weights", "lengths", "centres", "areas", "cortical", "hemispheres"):
        np.testing.assert_array_equal(getattr(back, what), getattr(d, what), err_msg=what)
    # The members are what TVB's reader parses: whitespace-separated text.
    with zipfile.ZipFile(path) as zf:
        assert set(zf.namelist()) == {"weights.txt", "tract_lengths.txt", "centres.txt",
                                      "areas.txt", "cortical.txt", "hemispheres.txt"}
        np.testing.assert_array_equal(np.loadtxt(io.BytesIO(zf.read("weights.txt"))), d.weights)
        first = zf.read("centres.txt").decode().splitlines()[0].split()
        assert first[0] == "rA" and float(first[3]) == CENTRES[0, 2] / 7.0
        assert zf.read("hemispheres.txt").decode() == "0\n1\n1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["conn.zip"]  # no temporary file left


def test_write_tvb_zip_minimal_and_embedded(tmp_path):
    hcp = datasets.load("hcp")
    back = datasets.read_tvb_zip(datasets.write_tvb_zip(hcp, tmp_path / "hcp.zip"))
    assert back.labels == hcp.labels
    np.testing.assert_array_equal(back.weights, hcp.weights)
    np.testing.assert_array_equal(back.lengths, hcp.lengths)
    np.testing.assert_array_equal(back.centres, np.zeros((80, 3)))  # placeholders
    assert back.areas is None and back.cortical is None


def test_write_tvb_zip_errors(tmp_path):
    d = _full_dataset()
    datasets.write_tvb_zip(d, tmp_path / "a.zip")
    with pytest.raises(ValueError, match=r"a\.zip: exists; pass overwrite=True"):
        datasets.write_tvb_zip(d, tmp_path / "a.zip")
    datasets.write_tvb_zip(d, tmp_path / "a.zip", overwrite=True)
    with pytest.raises(ValueError, match="has no tract lengths"):
        datasets.write_tvb_zip(datasets.Dataset(W), tmp_path / "b.zip")
    with pytest.raises(ValueError, match=r"label 1 \('r B'\) is empty or contains whitespace"):
        datasets.write_tvb_zip(_full_dataset(("rA", "r B", "lC")), tmp_path / "c.zip")
    with pytest.raises(ValueError, match="is a folder"):
        datasets.write_tvb_zip(d, tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        datasets.write_tvb_zip(d, tmp_path / "nowhere" / "d.zip")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zip"]


# ------------------------------------------- complex values, odd headers, BOM (issue 26)


def _npy_with_header(header: bytes) -> bytes:
    """A version 1.0 ``.npy`` file whose header dictionary is ``header`` and no data."""
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header


# A header cut in the middle of a string: NumPy's parser raises tokenize.TokenError.
GARBAGE = _npy_with_header(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, \"\"\"3), }")
# 10^6 x 10^6 float64: 8 TB claimed by a 128-byte file (np.load: a raw MemoryError).
HUGE = _npy_with_header(b"{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }")


@pytest.mark.parametrize(
    "raw, match",
    [(GARBAGE, r"g\.npy: cannot read as a \.npy array \(damaged header: TokenError"),
     (HUGE, r"g\.npy: cannot read .*claims shape \(1000000, 1000000\).*128 bytes")],
    ids=["garbage-header", "8TB-header"],
)
def test_projection_npy_with_bad_header_names_the_file(tmp_path, raw, match):
    _assert_refused(datasets.read_projection_matrix, tmp_path / "g.npy", raw, match)


@pytest.mark.parametrize("raw", [GARBAGE, HUGE], ids=["garbage-header", "8TB-header"])
def test_npz_member_with_bad_header_names_file_and_array(tmp_path, raw):
    path = _zip(tmp_path / "bad.npz", {"weights.npy": raw})
    with pytest.raises(ValueError, match=r"bad\.npz: cannot read array 'weights' \((damaged|the)"):
        datasets.read_npz(path)
    with pytest.raises(ValueError, match=r"bad\.npz: cannot read array 'weights'"):
        datasets.read_projection_matrix(path)


def test_npy_members_still_read_exactly(tmp_path):
    # The reader that checks headers first gives NumPy's values: C and Fortran order,
    # big-endian, integers, and compressed members.
    g = np.arange(12.0).reshape(3, 4) / 7.0
    for name, a in [("c", g), ("f", np.asfortranarray(g)), ("be", g.astype(">f8")),
                    ("int", np.arange(6).reshape(2, 3))]:
        np.save(tmp_path / f"{name}.npy", a)
        np.testing.assert_array_equal(datasets.read_projection_matrix(tmp_path / f"{name}.npy"), a)
    np.savez_compressed(tmp_path / "z.npz", weights=W, lengths=L)
    d = datasets.read_npz(tmp_path / "z.npz")
    np.testing.assert_array_equal(d.weights, W)
    np.testing.assert_array_equal(d.lengths, L)


def test_complex_arrays_are_refused_not_cast(tmp_path):
    np.savez(tmp_path / "c.npz", weights=W * (1 + 1j))
    with pytest.raises(ValueError, match=r"c\.npz\['weights'\]: weights must be real.*complex"):
        datasets.read_npz(tmp_path / "c.npz")
    np.savez(tmp_path / "cl.npz", weights=W, lengths=L + 0j)
    with pytest.raises(ValueError, match=r"cl\.npz\['lengths'\]: lengths must be real"):
        datasets.read_npz(tmp_path / "cl.npz")
    np.save(tmp_path / "g.npy", np.ones((2, 3)) * 1j)
    with pytest.raises(ValueError, match=r"g\.npy: the projection matrix must be real"):
        datasets.read_projection_matrix(tmp_path / "g.npy")


BOM = "\ufeff"  # what Excel and LibreOffice put first in a "CSV UTF-8" file


def test_files_with_a_byte_order_mark_read_correctly(tmp_path):
    (tmp_path / "w.tsv").write_text(BOM + _tsv(W, LABELS), encoding="utf-8")  # no corner
    d = datasets.read_tsv_connectome(tmp_path / "w.tsv")
    assert d.labels == LABELS  # the first label is "rA", not "\ufeffrA"
    np.testing.assert_array_equal(d.weights, W)
    (tmp_path / "p.tsv").write_text(BOM + _tsv(W), encoding="utf-8")
    (tmp_path / "n.tsv").write_text(BOM + _nodes(), encoding="utf-8")
    d = datasets.read_tsv_connectome(tmp_path / "p.tsv", nodes=tmp_path / "n.tsv")
    assert d.labels == LABELS
    np.testing.assert_array_equal(d.centres, CENTRES)
    (tmp_path / "w.csv").write_text(BOM + _tsv(W, sep=","), encoding="utf-8")
    (tmp_path / "labels.txt").write_text(BOM + "\n".join(LABELS) + "\n", encoding="utf-8")
    np.testing.assert_array_equal(datasets.read_csv_matrix(tmp_path / "w.csv"), W)
    d = datasets.read_connectome_csv(tmp_path / "w.csv", labels=tmp_path / "labels.txt")
    assert d.labels == LABELS
    np.testing.assert_array_equal(datasets.read_projection_matrix(tmp_path / "w.csv"), W)
    members = {"weights.txt": BOM + _tsv(W, sep=" "), "tract_lengths.txt": _tsv(L, sep=" "),
               "centres.txt": BOM + "".join(f"{lab} 0 0 0\n" for lab in LABELS)}
    d = datasets.read_tvb_zip(_zip(tmp_path / "bom.zip", {k: v.encode() for k, v in
                                                          members.items()}))
    assert d.labels == LABELS
    np.testing.assert_array_equal(d.weights, W)


def test_write_tvb_zip_checks_what_the_reader_checks(tmp_path):
    # eqx.tree_at skips Dataset's checks: the writer runs them again, so it never writes a
    # file that read_tvb_zip refuses.
    d = _full_dataset()
    cases = [
        (lambda x: x.weights, np.where(np.eye(3) > 0, np.nan, d.weights), r"weights .*3 NaN"),
        (lambda x: x.lengths, -d.lengths, r"lengths .*6 negative"),
        (lambda x: x.weights, d.weights * (1 + 1j), r"weights must be real"),
        (lambda x: x.centres, np.full((3, 3), np.inf), r"centres .*infinite"),
    ]
    for where, value, match in cases:
        bad = eqx.tree_at(where, d, value)
        with pytest.raises(ValueError, match=r"write_tvb_zip: not writing .*x\.zip: .*" + match):
            datasets.write_tvb_zip(bad, tmp_path / "x.zip")
    assert list(tmp_path.iterdir()) == []
