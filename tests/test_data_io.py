"""Connectome files in and out: damaged files (one test per case, each an error naming the
file), tab-separated / BIDS-style connectomes, and TVB zips written then read back."""

import io
import zipfile
from pathlib import Path

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


def _zip(path: Path, members: dict[str, bytes], compression=zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return path


# ------------------------------------------------------- damaged files (issue 12, item 8)


def test_empty_npz_names_the_file(tmp_path):
    # np.load raises a bare EOFError ("No data left in file") on an empty file.
    path = tmp_path / "empty.npz"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.npz: .*empty"):
        datasets.read_npz(path)


def test_truncated_npz_names_the_file(tmp_path):
    raw = _npz_bytes(weights=W, lengths=L)
    path = tmp_path / "cut.npz"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"cut\.npz: "):
        datasets.read_npz(path)


def test_corrupt_compressed_npz_member_names_file_and_array(tmp_path):
    # Scrambled deflate data: zlib.error, not a ValueError, from the lazy member read.
    raw = bytearray(_npz_bytes(weights=W, lengths=L))
    start = _data_offset(bytes(raw), "weights.npy")
    for i in range(start + 2, start + 22):
        raw[i] ^= 0xFF
    path = tmp_path / "scrambled.npz"
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"scrambled\.npz: cannot read array 'weights'"):
        datasets.read_npz(path)


def test_npz_member_with_bad_checksum_names_file_and_array(tmp_path):
    # One flipped bit in stored (uncompressed) data: zipfile.BadZipFile (bad CRC-32).
    raw = bytearray(_npz_bytes(compressed=False, weights=W))
    raw[_data_offset(bytes(raw), "weights.npy") + 130] ^= 0x01
    path = tmp_path / "bitflip.npz"
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"bitflip\.npz: cannot read array 'weights'.*CRC"):
        datasets.read_npz(path)


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
    path = tmp_path / "latin1.csv"
    path.write_bytes("# poids, r\xe9gion\n0,1\n1,0\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.csv: .*UTF-8.*byte 0xe9"):
        datasets.read_csv_matrix(path)


def test_non_utf8_labels_file_names_the_file(tmp_path):
    np.savetxt(tmp_path / "w.csv", W, delimiter=",")
    path = tmp_path / "labels.txt"
    path.write_bytes("caf\xe9\nb\nc\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"labels\.txt: .*UTF-8"):
        datasets.read_connectome_csv(tmp_path / "w.csv", labels=path)


def test_binary_file_given_as_csv_names_the_file(tmp_path):
    # A common slip: an .npy passed to the text reader.
    path = tmp_path / "weights.csv"
    path.write_bytes(_npy_bytes(W))
    with pytest.raises(ValueError, match=r"weights\.csv: "):
        datasets.read_csv_matrix(path)


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
    path = tmp_path / "conn.zip"
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"conn\.zip:weights\.txt: cannot read"):
        datasets.read_tvb_zip(path)


def test_empty_tvb_zip_file(tmp_path):
    path = tmp_path / "nothing.zip"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"nothing\.zip: cannot open as a zip"):
        datasets.read_tvb_zip(path)


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
