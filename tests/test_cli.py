"""The ``netdyn fit`` command: help, tiny runs on the embedded data, errors, the results
folder (no silent overwrite, atomic files, settings kept for --resume), Ctrl-C and resume.

Full runs are few and tiny (one module-wide run reused by the read-only checks); every
error case stops before any simulation."""

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import netdyn as nd
from netdyn._cli import _fit_command, main

ROOT = Path(__file__).resolve().parents[1]

# A very short simulation: a 1.44 s burn-in, then 2 realisations of 2.88 s with BOLD every
# 144 ms (20 samples each); held-out: one realisation of 4.32 s.
TINY = ["fit", "--duration", "2880", "--tr", "144", "--burn-in", "1440", "--realisations", "2",
        "--heldout-duration", "4320", "--heldout-realisations", "1", "--grid", "3"]
OUTPUTS = ("params.json", "history.csv", "history.json", "fc_simulated.csv", "fc_heldout.csv",
           "fit.png", "settings.json", "scan.json")


def _fail(argv, capsys) -> str:
    """Run ``argv``, expecting a one-line error with exit status 2; the line."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished 2-step fit, with what it printed and every ``os.replace`` it made."""
    out = tmp_path_factory.mktemp("cli") / "fit"
    replaced = []
    real_replace = os.replace

    def spy(src, dst):
        replaced.append((Path(src), Path(dst)))
        real_replace(src, dst)

    stdout, stderr = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(stderr):
        mp.setattr(os, "replace", spy)
        assert main([*TINY, "--steps", "2", "--out", str(out)]) == 0
    return out, replaced, stdout.getvalue(), stderr.getvalue()


def test_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["fit", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--dataset", "--weights", "--lengths", "--fc", "--model", "--fit",
                   "--steps", "--lr", "--duration", "--remat", "--out", "--seed",
                   "--resume", "--overwrite"):
        assert option in text


def test_help_timing_is_the_measured_one(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert not re.search(r"\d\s*(min|s) per step", text)  # e.g. a stale "5-9 s per step"
    # The one timing claimed is the wall clock measured by the fit benchmark.
    measured = re.search(r"Wall clock of the whole command: \*\*(\d+) s\*\*",
                         (ROOT / "benchmarks" / "fit.md").read_text())
    assert f"{measured.group(1)} s for the whole command" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "0"], "--steps must be >= 1"),
        (["--fit", "G,nope"], "unknown parameter"),
        (["--remat", "sometimes"], "--remat 'sometimes'"),
        (["--dataset", "nowhere"], "not an embedded dataset"),
        (["--lr", "-1"], "--lr must be positive"),
        (["--realisations", "0"], "--realisations must be >= 1"),
        (["--grid", "-1"], "--grid must be >= 0"),
        (["--burn-in", "-5"], "--burn-in must be a finite number of ms >= 0"),
        (["--checkpoint-every", "0"], "--checkpoint-every must be >= 1"),
        (["--speed", "0"], "--speed must be a finite number of mm/ms > 0"),
        (["--resume", "--overwrite"], "give one of them"),
    ],
)
def test_bad_arguments(args, message, capsys, tmp_path):
    assert message in _fail([*TINY, "--out", str(tmp_path), *args], capsys)


@pytest.mark.parametrize("args", [["--steps", "two"], ["--model", "lif"]])
def test_argparse_errors(args, capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        main([*TINY, "--out", str(tmp_path), *args])
    assert info.value.code == 2


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--tr", "700"], "--duration (2880 ms) must be a whole number of TRs --tr (700 ms)"),
        (["--dt", "0.7"], "--tr (144 ms) must be a whole number of time steps --dt"),
        (["--heldout-duration", "100"], "--heldout-duration (100 ms) must be a whole number"),
        (["--warmup", "5000", "--burn-in", "0"], "leaves fewer than 2 BOLD samples"),
        (["--warmup", "2500"], "--warmup (2500 ms) leaves no BOLD sample of the --burn-in"),
        (["--duration", "1e15", "--tr", "1000"], "--burn-in + --duration is 1e+15 steps"),
        (["--dt", "-1"], "--dt must be a finite number of ms > 0"),
    ],
)
def test_time_errors_name_the_flags(args, flag, capsys, tmp_path):
    err = _fail([*TINY, "--out", str(tmp_path / "fit"), *args], capsys)
    assert flag in err and "'signal'" not in err and "t1 - t0" not in err
    assert not (tmp_path / "fit").exists()  # nothing made before the options are checked


def _not_utf8(path: Path) -> Path:
    path.write_bytes("0,1\n1,0\n# r\xe9gion\n".encode("latin-1"))
    return path


def _bad_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("weights.npy", b"\x93NUMPY garbage")
    return path


@pytest.mark.parametrize(
    "flag, make",
    [
        ("--dataset", lambda p: p / "missing.npz"),
        ("--dataset", lambda p: (p / "empty.npz", (p / "empty.npz").write_bytes(b""))[0]),
        ("--dataset", lambda p: (p / "junk.npz", (p / "junk.npz").write_bytes(b"PK\x03\x04x"))[0]),
        ("--dataset", lambda p: _bad_zip(p / "bad.npz")),
        ("--fc", lambda p: p / "missing.csv"),
        ("--fc", lambda p: _not_utf8(p / "latin1.csv")),
        ("--fc", lambda p: (p / "fc.npy", (p / "fc.npy").write_bytes(b"\x93NUMPY\x01"))[0]),
    ],
)
def test_bad_files_are_one_line_naming_the_file(flag, make, capsys, tmp_path):
    path = make(tmp_path)
    err = _fail([*TINY, "--out", str(tmp_path / "fit"), flag, str(path)], capsys)
    assert flag in err and str(path) in err


def test_bad_fc_shape(capsys, tmp_path):
    np.savetxt(tmp_path / "fc.csv", np.eye(4), delimiter=",")
    err = _fail([*TINY, "--out", str(tmp_path), "--fc", str(tmp_path / "fc.csv")], capsys)
    assert "shape (4, 4)" in err


def test_tiny_run(finished):
    out, _, _, _ = finished
    for name in (*OUTPUTS, "checkpoint.eqx"):
        assert (out / name).is_file()
    assert (out / "fit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    report = json.loads((out / "params.json").read_text())
    assert report["steps"] == 2 and report["parameters"]["coupling.G"] > 0.0
    # The fit starts from the best of the 3-point scan over [0.05, 0.45].
    scan = report["grid"]
    np.testing.assert_allclose(scan["G"], [0.05, 0.25, 0.45])
    assert report["initial"]["coupling.G"] == scan["G"][int(np.argmin(scan["loss"]))]
    # The reported FC r is that of the written simulated FC against the embedded FC.
    simulated = np.loadtxt(out / "fc_simulated.csv", delimiter=",")
    target = np.asarray(nd.datasets.load("hcp").fc)
    iu = np.triu_indices(target.shape[0], k=1)
    r = np.corrcoef(simulated[iu], target[iu])[0, 1]
    level = simulated[iu].mean() - target[iu].mean()
    np.testing.assert_allclose(report["fc_r"], r, rtol=1e-8)
    np.testing.assert_allclose(report["mean_fc"], simulated[iu].mean(), rtol=1e-8)
    np.testing.assert_allclose(report["loss"], 1.0 - r + abs(level), rtol=1e-8)
    # Held-out: the written held-out FC, from noise the fit did not see.
    heldout = np.loadtxt(out / "fc_heldout.csv", delimiter=",")
    assert not np.allclose(heldout, simulated)
    np.testing.assert_allclose(report["heldout"]["fc_r"],
                               np.corrcoef(heldout[iu], target[iu])[0, 1], rtol=1e-8)
    np.testing.assert_allclose(report["heldout"]["saturation"], np.mean(heldout[iu] > 0.9))

    lines = (out / "history.csv").read_text().splitlines()
    assert lines[0] == ("step,loss,grad_norm,wall_time,skipped,fc_r,mean_fc,rmse,saturation,"
                        "coupling.G,noise.sigma")
    assert len(lines) == 3
    history = json.loads((out / "history.json").read_text())
    assert history["params"]["coupling.G"][0] == report["initial"]["coupling.G"]


def test_outputs_are_written_atomically(finished):
    out, replaced, _, _ = finished
    # Every output reached its name by os.replace of a temporary file in its own folder.
    by_target = {dst.name: src for src, dst in replaced if dst.parent == out}
    for name in OUTPUTS:
        assert name in by_target, name
        assert by_target[name].parent == out and by_target[name].name != name
    assert not [p.name for p in out.iterdir() if ".tmp" in p.name]


def test_progress_summary_and_params_count_steps_alike(finished):
    out, _, stdout, stderr = finished
    # The progress line counts 1..2; so do history.csv, params.json and the summary.
    assert re.findall(r"step (\d)/2", stderr) == ["1", "2"]
    report = json.loads((out / "params.json").read_text())
    history = json.loads((out / "history.json").read_text())
    assert history["step"] == [1, 2]
    best = history["step"][int(np.argmin(history["loss"]))]
    assert report["best_step"] == best
    assert f"best: step {best} of 2" in stdout


def test_params_records_the_values_used(finished):
    out, _, _, _ = finished
    report = json.loads((out / "params.json").read_text())
    used = report["settings"]
    assert used["G"] == report["initial"]["coupling.G"]  # the scan's start, not null
    assert used["sigma"] == 0.00283
    np.testing.assert_allclose(report["initial"]["noise.sigma"], 0.00283, rtol=1e-12)


def test_existing_results_are_not_overwritten(finished, capsys):
    out, _, _, _ = finished
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    err = _fail([*TINY, "--steps", "2", "--out", str(out)], capsys)
    assert "already holds the results" in err and "--overwrite" in err and "--resume" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_overwrite_removes_the_earlier_results(finished, tmp_path, monkeypatch):
    out = tmp_path / "fit"
    shutil.copytree(finished[0], out)
    seen = []
    # Stop where the simulation would start: what does the new run find in --out?
    monkeypatch.setattr(_fit_command, "_run", lambda *a: seen.extend(os.listdir(out)) or 0)
    assert main([*TINY, "--steps", "3", "--out", str(out), "--overwrite"]) == 0
    assert seen == ["settings.json"]
    assert json.loads((out / "settings.json").read_text())["settings"]["steps"] == 3


@pytest.mark.parametrize("case", ["out is a file", "checkpoint is a folder", "out unwritable"])
def test_bad_out_is_one_line_before_any_simulation(case, tmp_path, capsys, monkeypatch):
    out = tmp_path / "fit"
    if case == "out is a file":
        out.write_text("not a folder")
    elif case == "checkpoint is a folder":
        (out / "checkpoint.eqx").mkdir(parents=True)
    else:
        (tmp_path / "file").write_text("")
        out = tmp_path / "file" / "fit"  # a folder that cannot be made
    def no_simulation(*args):
        raise AssertionError("the simulation started before --out was checked")

    monkeypatch.setattr(_fit_command, "_run", no_simulation)
    err = _fail([*TINY, "--out", str(out)], capsys)
    assert "--out" in err and str(out) in err


def test_resume_needs_a_checkpoint(tmp_path, capsys):
    err = _fail([*TINY, "--out", str(tmp_path), "--resume"], capsys)
    assert "--resume: there is no checkpoint" in err


@pytest.mark.parametrize(
    "args, flag",
    [(["--lr", "0.02"], "--lr"), (["--steps", "3"], "--steps"),
     (["--duration", "4320"], "--duration"), (["--fit", "G"], "--fit"),
     (["--sigma", "0.003"], "--sigma"), (["--seed", "1"], "--seed")],
)
def test_resume_refuses_changed_settings(finished, args, flag, capsys):
    out = finished[0]
    err = _fail([*TINY, "--steps", "2", "--out", str(out), "--resume", *args], capsys)
    assert f"--resume: {flag} is" in err


def test_interrupt_then_resume(finished, tmp_path, monkeypatch, capsys):
    out = tmp_path / "fit"
    real_fit = _fit_command.fit

    def fit_interrupted_after_one_step(*args, **kwargs):
        def callback(row):
            if row["step"] == 0:
                raise KeyboardInterrupt
        return real_fit(*args, **kwargs, callback=callback)

    monkeypatch.setattr(_fit_command, "fit", fit_interrupted_after_one_step)
    argv = [*TINY, "--steps", "2", "--out", str(out), "--quiet"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"1 of 2 steps are saved in {out / 'checkpoint.eqx'}" in err
    command = err.split("Continue with: ")[1].strip()
    assert command == shlex.join(["netdyn", *argv, "--resume"])

    monkeypatch.setattr(_fit_command, "fit", real_fit)
    assert main(shlex.split(command)[1:]) == 0
    assert "1 of 2 steps done, continuing at step 2." in capsys.readouterr().out
    # The interrupted and resumed fit is the uninterrupted one.
    resumed = json.loads((out / "history.json").read_text())
    whole = json.loads((finished[0] / "history.json").read_text())
    for h in (resumed, whole):
        h.pop("wall_time")
    assert resumed == whole
    for name in ("parameters", "loss", "heldout", "grid"):
        assert json.loads((out / "params.json").read_text())[name] == \
            json.loads((finished[0] / "params.json").read_text())[name]


def test_divergence_names_flags(tmp_path, monkeypatch, capsys):
    def diverging_fit(model, loss_fn, optimizer, *, where, **kwargs):
        history = nd.FitHistory(
            step=np.arange(2), loss=np.array([0.9, np.nan]), grad_norm=np.array([1.0, np.nan]),
            wall_time=np.ones(2), skipped=np.array([False, True]),
            params={"coupling.G": np.array([0.2, 9.0])}, metrics={"fc_r": np.zeros(2)})
        raise nd.FitDivergedError("fit stopped (library message)", model, history, 1)

    monkeypatch.setattr(_fit_command, "fit", diverging_fit)
    out = tmp_path / "fit"
    assert main([*TINY, "--out", str(out), "--grid", "0", "--fit", "G", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "at step 2 of 12" in err and "--lr" in err and "--overwrite" in err
    for api in ("on_nonfinite", "resume=True", "FitDivergedError", "library message"):
        assert api not in err
    assert json.loads((out / "history.json").read_text())["step"] == [1, 2]


def test_hopf_in_the_units_given_without_matplotlib(tmp_path, monkeypatch, capsys):
    # Importing matplotlib.figure fails as if matplotlib were not installed.
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = tmp_path / "fit"
    assert main([*TINY, "--model", "hopf", "--G", "0.7", "--sigma", "0.01", "--fit", "G",
                 "--steps", "1", "--realisations", "1", "--out", str(out), "--quiet"]) == 0
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert (out / "params.json").is_file() and not (out / "fit.png").exists()
    report = json.loads((out / "params.json").read_text())
    # --G is per second: 0.7 /s is G = 0.0007 /ms in the network.
    assert report["initial"]["coupling.G"] == pytest.approx(0.7, rel=1e-12)
    assert report["settings"]["G"] == 0.7 and report["settings"]["sigma"] == 0.01
    assert report["units"] == {"coupling.G": 1e-3}
    history = json.loads((out / "history.json").read_text())
    assert history["params"]["coupling.G"][0] == pytest.approx(0.7, rel=1e-12)
