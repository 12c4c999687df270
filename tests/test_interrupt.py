"""Ctrl-C and a full disk during ``netdyn fit``: the result is a resumable checkpoint with
every completed step, or a clean one-line message; never a traceback, a lost step or a
part of the results.

Signals are real: ``os.kill`` of this process (or of a ``netdyn fit`` subprocess), from a
thread at random moments. The fits are tiny (4 regions, 6 steps of 2.2 s of BOLD), run
in this process after one warm-up run, so that a run takes well under a second.
"""

import builtins
import contextlib
import errno
import hashlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import netdyn as nd

STEPS = 6


@pytest.fixture(autouse=True)
def _python_sigint_handler():
    """As at a terminal: Python's own SIGINT handler, also when the test run was started
    with SIGINT ignored (a background job of a non-interactive shell ignores it, and a
    process that ignores Ctrl-C is rightly left alone by netdyn's deferral). Subprocesses
    then start with the default disposition too."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)



def _argv(folder: Path, out: Path, *extra: str, every: int = 100) -> list[str]:
    return ["fit", "--weights", str(folder / "w.csv"), "--lengths", str(folder / "l.csv"),
            "--fc", str(folder / "fc.csv"), "--G", "0.2", "--grid", "0",
            "--no-gradient-check", "--duration", "2160", "--burn-in", "720",
            "--realisations", "1", "--heldout-duration", "2160", "--heldout-realisations",
            "1", "--steps", str(STEPS), "--no-plot", "--remat", "none",
            "--checkpoint-every", str(every), "--out", str(out), *extra]


def _run(argv, err: io.StringIO | None = None) -> tuple[int, str]:
    """``nd.cli.main(argv)``: its exit status and stderr (a ``SystemExit`` gives its code),
    written to ``err`` (default: a new ``io.StringIO``)."""
    err = io.StringIO() if err is None else err
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            rc = nd.cli.main(argv)
        except SystemExit as e:
            rc = e.code
        except KeyboardInterrupt:
            pytest.fail("KeyboardInterrupt escaped netdyn fit")
    return rc, err.getvalue()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The data files, and a finished fit (after a warm-up run that compiles), with the
    seconds it took."""
    folder = tmp_path_factory.mktemp("interrupt")
    rng = np.random.default_rng(0)
    w = rng.uniform(0.1, 1.0, (4, 4))
    np.fill_diagonal(w, 0.0)
    lengths = rng.uniform(10.0, 50.0, (4, 4))
    lengths = (lengths + lengths.T) / 2
    np.fill_diagonal(lengths, 0.0)
    fc = np.full((4, 4), 0.3)
    np.fill_diagonal(fc, 1.0)
    for name, a in (("w", w), ("l", lengths), ("fc", fc)):
        np.savetxt(folder / f"{name}.csv", a, delimiter=",")
    assert _run(_argv(folder, folder / "warm-up"))[0] == 0
    start = time.perf_counter()
    assert _run(_argv(folder, folder / "finished"))[0] == 0
    return folder, folder / "finished", time.perf_counter() - start


def _rows(out: Path) -> list[list[str]]:
    """``history.csv`` of ``out`` without its wall_time column."""
    lines = [line.split(",") for line in (out / "history.csv").read_text().splitlines()]
    at = lines[0].index("wall_time")
    return [row[:at] + row[at + 1:] for row in lines]


# --- The deferral itself -------------------------------------------------------------


def _ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)


def test_ctrl_c_waits_for_the_next_check():
    with nd.defer_interrupts() as stop:
        _ctrl_c()
        _ctrl_c()  # a double press: one request
        time.sleep(0.01)  # (the handler runs; nothing is raised)
        with pytest.raises(KeyboardInterrupt):
            stop.check()
        stop.check()  # acted on: nothing left


def test_ctrl_c_again_after_the_grace_stops_at_once(monkeypatch):
    # The clock that times the presses, moved on by hand: the grace is 2 s.
    now = [time.monotonic()]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    with nd.defer_interrupts() as stop:
        _ctrl_c()
        now[0] += 1.9
        _ctrl_c()  # within the grace: the same request, nothing raised
        time.sleep(0.01)
        stop.dismiss()
    with nd.defer_interrupts(), pytest.raises(KeyboardInterrupt):
        _ctrl_c()
        now[0] += 2.1
        _ctrl_c()  # the first not yet acted on: this one raises here
        time.sleep(0.01)


def test_request_not_acted_on_is_passed_on_at_the_end():
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with nd.defer_interrupts() as outer:
            with nd.defer_interrupts() as inner:  # nested: the same requests
                assert inner is outer
                _ctrl_c()
            time.sleep(0.01)
        pytest.fail("not reached: the request is raised when the block ends")
    assert signal.getsignal(signal.SIGINT) is before
    with nd.defer_interrupts() as stop:
        _ctrl_c()
        time.sleep(0.01)
        stop.dismiss()  # dropped: nothing raised


# --- Ctrl-C during a fit -------------------------------------------------------------


class Toy(eqx.Module):
    x: jax.Array


def _toy_fit(path, callback):
    return nd.fit(Toy(jnp.zeros(3)), lambda m, key: jnp.sum((m.x - 1.0) ** 2),
                  optax.sgd(0.1), where=lambda m: m.x, steps=5,
                  checkpoint=nd.Checkpoint(path, every=100), callback=callback)


def test_second_ctrl_c_during_the_save_keeps_the_step(tmp_path, monkeypatch):
    # Ctrl-C at step 2, and again while the fit saves it: the checkpoint holds 2 steps.
    # (Raised at once, the first stopped the fit and the second broke the save: with no
    # earlier checkpoint, nothing was kept.)
    path = tmp_path / "c.eqx"
    real_fsync = os.fsync

    def fsync(fd):
        _ctrl_c()
        real_fsync(fd)

    def callback(row):
        if row["step"] == 1:
            monkeypatch.setattr(os, "fsync", fsync)
            _ctrl_c()

    with pytest.raises(KeyboardInterrupt):
        _toy_fit(path, callback)
    assert nd.saved_steps(path) == (2, 5)  # (its header checked: history rows 0 and 1)


def _double_ctrl_c(delay: float) -> threading.Thread:
    """A thread that sends this process two SIGINTs 1 ms apart after ``delay`` s."""
    def send():
        time.sleep(delay)
        _ctrl_c()
        time.sleep(0.001)
        _ctrl_c()

    return threading.Thread(target=send)


def _trial(argv, delay: float) -> tuple[int, str]:
    """``nd.cli.main(argv)`` with a double Ctrl-C after ``delay`` s: its exit status and stderr.
    This test's own SIGINT handler, which ``main`` replaces while it runs and puts back,
    drops those that come once it has returned (as its process would exit)."""
    late = []
    previous = signal.signal(signal.SIGINT, lambda *a: late.append(1))
    try:
        sender = _double_ctrl_c(delay)
        sender.start()
        rc, err = _run(argv)
        sender.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    return rc, err


def _check_outcome(out: Path, rc: int, err: str) -> int | None:
    """Assert that a run interrupted at any moment ended cleanly; the steps saved."""
    assert "Traceback" not in err and "Exception ignored" not in err, err
    shown = [int(k) for k in re.findall(rf"step +(\d+)/{STEPS}", err)]
    checkpoint = out / "checkpoint.eqx"
    saved = nd.saved_steps(checkpoint)[0] if checkpoint.exists() else None  # valid header
    if rc == 0:
        assert saved == STEPS and (out / "params.json").is_file(), err
        return saved
    assert rc == 130, err
    last = err.strip().splitlines()[-1]
    if "nothing to resume" in last:
        assert saved in (None, 0) and not shown, err  # no step had been shown
    else:
        match = re.search(rf"interrupted; (\d+) of {STEPS} steps are saved in (\S+)\. "
                          "Continue with: ", last)
        assert match and Path(match[2]) == checkpoint, err
        # Every step shown on the progress line is in the checkpoint.
        assert int(match[1]) == saved >= max(shown, default=0) >= saved - 1, err
    return saved


# A whole command per trial (about 25 s with its compilation): with -m slow, as CI runs.
@pytest.mark.slow
@pytest.mark.parametrize("trials", [10, 30])
def test_double_ctrl_c_at_random_moments(tiny, trials):
    """Two SIGINTs 1 ms apart at random moments of a fit (10 by default, 30 with ``-m
    slow``; each is a whole fit): a resumable checkpoint with every step done, or a clean
    message; one interrupted fit is resumed to the end."""
    folder, finished, seconds = tiny
    rng = random.Random(26)
    resumed = False
    for trial in range(trials):
        out = folder / f"trial{trial}"
        argv = _argv(folder, out)
        # (From 2 ms: the thread has started and main is running.)
        rc, err = _trial(argv, rng.uniform(0.002, 1.2 * seconds))
        saved = _check_outcome(out, rc, err)
        if rc == 130 and saved and saved < STEPS and not resumed:
            assert _run([*argv, "--resume"])[0] == 0
            assert _rows(out) == _rows(finished)  # the uninterrupted fit
            resumed = True
        shutil.rmtree(out)


# The ``netdyn`` console script.
NETDYN = [sys.executable, "-c", "import sys, netdyn; sys.exit(netdyn.cli.main())"]


def _process(argv, rng: random.Random | None, span: float, after_step_1: bool):
    """Run ``netdyn`` with ``argv``; unless ``rng`` is ``None``, send it two SIGINTs 1 ms
    apart at a random moment of the ``span`` s after its first line (``after_step_1``:
    after its first progress line). ``(exit status, stderr, seconds from the first line
    to step 1 and to the end)``."""
    with subprocess.Popen([*NETDYN, *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as p:
        lines = []

        def read():
            for line in p.stderr:
                lines.append(line)

        reader = threading.Thread(target=read)
        reader.start()
        p.stdout.readline()  # the fit has started (imports done)
        start, step_1 = time.monotonic(), None
        while p.poll() is None and (after_step_1 or rng is None) and step_1 is None:
            step_1 = time.monotonic() if any(" step 1/" in x for x in lines) else None
            time.sleep(0.001)
        if rng is not None:
            at = time.monotonic() + rng.uniform(0.0, span)
            while time.monotonic() < at and p.poll() is None:
                time.sleep(0.0005)
            with contextlib.suppress(ProcessLookupError):
                p.send_signal(signal.SIGINT)
                time.sleep(0.001)
                p.send_signal(signal.SIGINT)
        p.stdout.read()
        p.wait()
        end = time.monotonic()
        reader.join()
    return p.returncode, "".join(lines), ((step_1 or end) - start, end - start)


# 21 fresh processes, each compiling its fit (about 8 minutes): not in CI either.
@pytest.mark.slow
@pytest.mark.long
def test_double_ctrl_c_in_a_netdyn_process(tiny):
    """As above, on the ``netdyn`` command in its own process (that compiles its fit
    anew, and may be stopped as it exits): 20 trials, half of them from the first line
    on, half once the first step is shown."""
    folder, _, _ = tiny
    out = folder / "process"
    rc, err, (to_step_1, to_end) = _process(_argv(folder, out), None, 0.0, False)
    assert rc == 0 and "Traceback" not in err, err
    shutil.rmtree(out)
    rng = random.Random(2026)
    for trial in range(20):
        after_step_1 = trial % 2 == 1
        span = 1.2 * (to_end - to_step_1 if after_step_1 else to_end)
        rc, err, _ = _process(_argv(folder, out), rng, span, after_step_1)
        _check_outcome(out, rc, err)
        shutil.rmtree(out, ignore_errors=True)


# --- A full disk -----------------------------------------------------------------------


class _FullFile:
    """A file on a full disk: half of the first write lands, then ``ENOSPC`` (which, as
    from a real ``write``, names no file)."""

    def __init__(self, f):
        self.f = f

    def write(self, data):
        self.f.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


def _full_disk_for(monkeypatch, name: str, after: int = 0) -> None:
    """Files opened for writing whose name holds ``name`` (netdyn writes ``name`` to a
    temporary file, ``.NAME.tmpPID``, then renames it) are on a full disk once ``after`` of
    them have been opened."""
    count = [0]
    real_open = builtins.open

    def fake_open(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        if (isinstance(file, (str, os.PathLike)) and "w" in mode
                and name in Path(file).name):
            count[0] += 1
            if count[0] > after:
                return _FullFile(f)
        return f

    monkeypatch.setattr(builtins, "open", fake_open)


def _temps(out: Path) -> list[str]:
    return [p.name for p in out.iterdir() if ".tmp" in p.name]


def test_full_disk_writing_the_results(tiny, monkeypatch):
    folder, finished, _ = tiny
    out = folder / "full"
    argv = _argv(folder, out, "--quiet")
    _full_disk_for(monkeypatch, "history.json")
    rc, err = _run(argv)
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{out / 'history.json'}: No space left on device" in err
    assert f"{STEPS} of {STEPS} steps are saved in {out / 'checkpoint.eqx'}" in err
    command = err.split("continue with: ")[1].strip()
    assert command.endswith("--resume")
    # No part of the results, no temporary file: the settings and the whole checkpoint.
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint.eqx", "settings.json"]
    monkeypatch.undo()
    assert _run([*argv, "--resume"])[0] == 0
    assert _rows(out) == _rows(finished)


@pytest.mark.parametrize("name, after, saved", [
    ("checkpoint.eqx", 0, None),  # its first save: nothing to resume
    ("settings.json", 0, None),  # before the fit
])
def test_full_disk_names_the_file(tiny, monkeypatch, name, after, saved):
    folder, _, _ = tiny
    out = folder / f"full-{name}"
    _full_disk_for(monkeypatch, name, after)
    rc, err = _run(_argv(folder, out, "--quiet"))
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{out / name}: No space left on device" in err
    assert _temps(out) == [] and not (out / name).exists()
    shutil.rmtree(out)


def test_full_disk_at_a_later_checkpoint_keeps_the_earlier(tiny, monkeypatch):
    folder, _, _ = tiny
    out = folder / "full-later"
    # (Opened first by the check that it can be written, then by the save at step 2.)
    _full_disk_for(monkeypatch, "checkpoint.eqx", after=2)
    rc, err = _run(_argv(folder, out, "--quiet", every=2))
    assert rc == 2 and err.count("\n") == 1, err
    assert f"{out / 'checkpoint.eqx'}: No space left on device; 2 of {STEPS} steps are " \
           "saved" in err
    assert nd.saved_steps(out / "checkpoint.eqx") == (2, STEPS) and _temps(out) == []


# --- Files read back on --resume ---------------------------------------------------------


def _rewrite_header(path: Path, edit) -> None:
    """Edit a checkpoint's JSON header and give it a correct SHA-256 (a careful forgery)."""
    magic, _, rest = path.read_bytes().split(b"\n", 2)
    header, leaves = rest.split(b"\n", 1)
    meta = json.loads(header)
    edit(meta)
    payload = json.dumps(meta).encode() + b"\n" + leaves
    path.write_bytes(magic + b"\nsha256 " + hashlib.sha256(payload).hexdigest().encode()
                     + b"\n" + payload)


@pytest.mark.parametrize("field, value", [("step", "x"), ("steps", None)])
def test_forged_checkpoint_step_names_the_file(tiny, field, value):
    folder, finished, _ = tiny
    out = folder / "forged"
    shutil.copytree(finished, out)
    _rewrite_header(out / "checkpoint.eqx", lambda meta: meta.update({field: value}))
    rc, err = _run(_argv(folder, out, "--quiet", "--resume"))
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"checkpoint {out / 'checkpoint.eqx'}: {field} must be an integer >= 0, got " \
           f"{value!r}" in err
    shutil.rmtree(out)


def _scanning_G(folder: Path, finished: Path, out: Path, scan: dict) -> list[str]:
    """A copy of the fit ``finished`` in ``out`` as if it had scanned G (3 values, no --G)
    and written ``scan``: the command line that resumes it."""
    shutil.copytree(finished, out)
    saved = json.loads((out / "settings.json").read_text())
    saved["settings"].update(G=None, grid=3)
    (out / "settings.json").write_text(json.dumps(saved))
    (out / "scan.json").write_text(json.dumps(scan))
    argv = _argv(folder, out, "--quiet", "--resume")
    at = argv.index("--G")
    del argv[at : at + 2]
    argv[argv.index("--grid") + 1] = "3"
    return argv


def _scan() -> dict:
    return {"start": 0.2, "bracket": [0.1, 0.3], "target_mean_fc": 0.3,
            "grid": {"G": [0.1, 0.3], "loss": [1.0, None], "mean_fc": [0.2, 0.4],
                     "stage": ["scan", "scan"]}}


def test_scan_with_a_diverged_point_is_read_back(tiny):
    # (The tiny fits give --G: only a fit that scans G reads scan.json back on --resume.)
    # A null loss (a diverged point, NaN when written) is valid.
    folder, finished, _ = tiny
    out = folder / "scanned"
    rc, err = _run(_scanning_G(folder, finished, out, _scan()))
    assert rc == 0 and "Traceback" not in err, err
    assert json.loads((out / "params.json").read_text())["grid"] == _scan()["grid"]
    shutil.rmtree(out)


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.update(start="x"), "start must be null or a number"),
    (lambda s: s.update(bracket=[0.1]), "bracket must be null or two numbers"),
    (lambda s: s["grid"].update(loss=[1.0]), "grid.loss must be a list of numbers"),
    (lambda s: s.pop("grid"), "grid.G must be a list of numbers"),
])
def test_forged_scan_names_the_file(tiny, edit, message):
    folder, finished, _ = tiny
    out = folder / "forged-scan"
    scan = _scan()
    edit(scan)
    rc, err = _run(_scanning_G(folder, finished, out, scan))
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{out / 'scan.json'}: {message}" in err
    shutil.rmtree(out)


# --- --remat on --resume -------------------------------------------------------------


class _CtrlCOn(io.StringIO):
    """A stderr that sends this process Ctrl-C as ``text`` is first written to it."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def write(self, s):
        if self.text is not None and self.text in s:
            self.text = None
            _ctrl_c()
        return super().write(s)


def test_remat_may_change_on_resume_and_is_recorded(tiny):
    """Steps before the resume are kept as recorded; those after it are computed with the
    new --remat, equal in exact arithmetic and here to rounding; settings.json and
    params.json say at which step --remat changed."""
    folder, finished, _ = tiny
    out = folder / "remat"
    argv = _argv(folder, out)
    # Ctrl-C as the progress line shows step 2: the fit stops after it, saved.
    rc, err = _run(argv, _CtrlCOn(f" step 2/{STEPS} "))
    assert rc == 130 and nd.saved_steps(out / "checkpoint.eqx") == (2, STEPS), err
    changed = [a if a != "none" else "uniform:100" for a in argv]
    assert _run([*changed, "--resume"])[0] == 0
    record = [{"at_step": 2, "changed": {"remat": "uniform:100"}}]
    assert json.loads((out / "settings.json").read_text())["resumed"] == record
    assert json.loads((out / "params.json").read_text())["resumed"] == record
    rows, whole = _rows(out), _rows(finished)
    assert rows[:3] == whole[:3]  # the header and steps 1, 2: exactly as recorded
    np.testing.assert_allclose(np.array(rows[3:], float), np.array(whole[3:], float),
                               rtol=1e-12, atol=0)
