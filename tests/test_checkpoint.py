"""Fit checkpoints under faults: corrupt or hand-edited files, failed and killed writes,
unwritable paths, and fits whose parameters stop being finite.

Checkpoints are rewritten here by hand, from the documented layout (magic line,
``sha256 <hex>`` line, one JSON line, the leaves), with ``hashlib`` for the digest.
"""

import hashlib
import json
import os
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import netdyn as nd
from netdyn._persistence.atomic import all_or_none, write_text_atomic


class Toy(eqx.Module):
    x: jax.Array
    y: float


C, D = np.array([1.0, -2.0, 0.5]), 4.0
SGD = optax.sgd(0.1)


def _quadratic(m, key):
    return jnp.sum((m.x - C) ** 2) + (m.y - D) ** 2


def _where_xy(m):
    return m.x, m.y


def _toy(y=0.5):
    return Toy(x=jnp.zeros(3), y=y)


def _fit(path, steps=3, resume=False, every=10, **kw):
    return nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=steps,
                  checkpoint=nd.Checkpoint(path, every=every, resume=resume), **kw)


def _split(data: bytes) -> tuple[bytes, bytes | None, dict, bytes]:
    """``(magic line, digest line or None, header, leaves)`` of a checkpoint file."""
    magic, rest = data.split(b"\n", 1)
    digest = None
    if rest.startswith(b"sha256 "):
        digest, rest = rest.split(b"\n", 1)
    header, leaves = rest.split(b"\n", 1)
    return magic, digest, json.loads(header), leaves


def _rewrite(path, edit) -> None:
    """Apply ``edit`` to the JSON header, with a correct digest (a careful hand edit)."""
    magic, digest, meta, leaves = _split(path.read_bytes())
    edit(meta)
    payload = json.dumps(meta).encode() + b"\n" + leaves
    lines = [magic]
    if digest is not None:
        lines.append(b"sha256 " + hashlib.sha256(payload).hexdigest().encode())
    path.write_bytes(b"\n".join(lines) + b"\n" + payload)


def _temps(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


def test_file_carries_the_sha256_of_its_contents(tmp_path):
    path = tmp_path / "c.eqx"
    _fit(path)
    data = path.read_bytes()
    magic, digest, rest = data.split(b"\n", 2)
    assert magic == b"netdyn-fit-checkpoint 2"
    assert digest == b"sha256 " + hashlib.sha256(rest).hexdigest().encode()
    assert json.loads(rest.split(b"\n", 1)[0])["step"] == 3


def test_flipped_byte_is_refused_as_corrupt(tmp_path):
    path = tmp_path / "c.eqx"
    _fit(path)
    clean = path.read_bytes()
    # One flipped bit in the unconstrained value of y the fit continues from (after three
    # steps of y <- y - 0.2 (y - 4) from 0.5): without a checksum, the fit resumes
    # "successfully" from another y.
    y3 = 0.5
    for _ in range(3):
        y3 -= 0.2 * (y3 - D)
    at = clean.find(np.float64(y3).tobytes())
    assert at > 0
    data = bytearray(clean)
    data[at + 5] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"c\.eqx is corrupt.*checksum"):
        _fit(path, steps=5, resume=True)
    # Wherever the flipped bit lies, the file is refused, naming it.
    for i in range(len(clean)):
        bad = bytearray(clean)
        bad[i] ^= 0x01
        path.write_bytes(bytes(bad))
        with pytest.raises(ValueError, match=r"c\.eqx is corrupt"):
            nd.saved_steps(path)


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("step", -1, "step must be an integer >= 0, got -1"),
        ("step", 2.5, "step must be an integer >= 0, got 2.5"),
        ("step", 99, r"out of range.*step=99"),
        ("good_step", 3 + 1, r"out of range.*good_step=4"),
        ("step", 2, r"history.loss has shape \(3,\), but step=2"),
    ],
)
def test_hand_edited_step_is_refused(tmp_path, field, value, match):
    path = tmp_path / "c.eqx"
    _fit(path)
    _rewrite(path, lambda meta: meta.update({field: value}))
    with pytest.raises(ValueError, match=match):
        _fit(path, steps=5, resume=True)


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("step", "x", "step must be an integer >= 0, got 'x'"),
        ("steps", None, "steps must be an integer >= 0, got None"),
        ("names", 5, "names must be a list of names, got 5"),
        ("shapes", [[3]], r"shapes must be a list of shapes \(lists of whole numbers >= 0\), "
                          r"one per name, got \[\[3\]\]"),
        ("transforms", "Identity", "transforms must be a list of text, one per name"),
        ("n_starts", 0, "n_starts must be null or an integer >= 1, got 0"),
        ("key", "k", "key must be null or a list of integers >= 0, got 'k'"),
        ("redraw", "no", "redraw must be true or false, got 'no'"),
        ("history", [], "history must be a JSON object"),
    ],
)
def test_every_header_field_is_checked(tmp_path, field, value, match):
    # A forged header (valid checksum): what it says is checked before it is used, also
    # when only the step counts are read (netdyn fit's messages), naming file and field.
    path = tmp_path / "c.eqx"
    _fit(path)
    _rewrite(path, lambda meta: meta.update({field: value}))
    where = re.escape(f"checkpoint {path}: ")
    with pytest.raises(ValueError, match=where + match):
        nd.saved_steps(path)
    with pytest.raises(ValueError, match=where + match):
        _fit(path, steps=5, resume=True)


@pytest.mark.parametrize(
    "drop, name",
    [
        (lambda m: m.pop("good_step"), "'good_step'"),
        (lambda m: m.pop("names"), "'names'"),
        (lambda m: m["history"].pop("loss"), "'history.loss'"),
    ],
)
def test_missing_field_is_named(tmp_path, drop, name):
    path = tmp_path / "c.eqx"
    _fit(path)
    _rewrite(path, drop)
    with pytest.raises(ValueError, match=f"has no field {name}"):
        _fit(path, steps=5, resume=True)


def test_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "c.eqx"
    _fit(path)
    before = path.read_bytes()

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _fit(path, steps=6, resume=True, every=1)
    monkeypatch.undo()
    assert _temps(tmp_path) == []
    # The previous checkpoint is intact.
    assert path.read_bytes() == before


def test_stale_temporary_files_are_removed_on_the_next_save(tmp_path):
    path = tmp_path / "c.eqx"
    # Left by a process killed mid-write (no process has this id: above Linux's pid_max).
    stale = tmp_path / ".c.eqx.tmp999999999"
    stale.write_bytes(b"partial")
    # Another file's temporary file, and one of a running process (ours' parent): kept.
    other = tmp_path / ".d.eqx.tmp999999999"
    other.write_bytes(b"partial")
    live = tmp_path / f".c.eqx.tmp{os.getppid()}"
    live.write_bytes(b"being written")
    _fit(path)
    assert not stale.exists()
    assert other.exists() and live.exists()


@pytest.mark.parametrize("make, match", [
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: None, "does not exist"),
])
def test_unwritable_checkpoint_fails_before_the_first_step(tmp_path, make, match):
    path = tmp_path / "c.eqx"
    make(path)
    if match == "does not exist":
        path = tmp_path / "missing" / "c.eqx"
    steps = []
    with pytest.raises(ValueError, match=f"checkpoint .*c.eqx.*{match}"):
        nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=3, checkpoint=path,
               callback=steps.append)
    assert steps == []


def test_resume_from_a_folder_is_a_clear_error(tmp_path):
    path = tmp_path / "c.eqx"
    path.mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        _fit(path, resume=True)


def test_nan_initial_parameter_is_refused():
    with pytest.raises(ValueError, match=r"initial value of y is not finite \(nan"):
        nd.fit(_toy(y=float("nan")), _quadratic, SGD, where=_where_xy, steps=2)
    with pytest.raises(ValueError, match=r"initial value of starts for x is not finite"):
        nd.fit_multistart(_toy(), _quadratic, SGD, where=lambda m: m.x,
                          starts=jnp.array([[0.0, 1.0, 2.0], [0.0, jnp.inf, 1.0]]), steps=2)


def _nan_at_count_2(count):
    # A learning rate that becomes NaN at the third update: finite loss and gradient, but
    # the update makes the parameter NaN.
    return jnp.where(count == 2, jnp.nan, 0.1)


def test_parameter_made_nan_by_the_update_stops_keeping_the_last_good(tmp_path):
    path = tmp_path / "c.eqx"
    with pytest.raises(nd.FitDivergedError, match="update gives non-finite parameters") as e:
        nd.fit(_toy(), _quadratic, optax.sgd(_nan_at_count_2), where=_where_xy, steps=6,
               checkpoint=path)
    # Reference: two steps of gradient descent, x <- x - 0.1 * 2 (x - c).
    x, y = np.zeros(3), 0.5
    for _ in range(2):
        x, y = x - 0.2 * (x - C), y - 0.2 * (y - D)
    assert e.value.step == 2
    np.testing.assert_allclose(e.value.model.x, x, rtol=1e-14)
    np.testing.assert_allclose(e.value.model.y, y, rtol=1e-14)
    assert np.all(np.isfinite(e.value.history.loss))
    assert e.value.history.skipped.tolist() == [False, False, True]
    assert nd.saved_steps(path)[0] == 2


def test_all_or_none_removes_the_group_written_so_far(tmp_path):
    (tmp_path / "other.txt").write_text("kept")
    with pytest.raises(OSError, match="disk full"):
        with all_or_none(tmp_path, ("a.txt", "b.txt")):
            write_text_atomic(tmp_path / "a.txt", "written")
            raise OSError("disk full")  # before b.txt
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt"]
    with all_or_none(tmp_path, ("a.txt",)):
        write_text_atomic(tmp_path / "a.txt", "written")
    assert (tmp_path / "a.txt").read_text() == "written"
