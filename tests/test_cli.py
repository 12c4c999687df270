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
import signal
import zipfile
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from cli_helpers import OUTPUTS, TINY, Watch as _Watch, announced as _announced, fail as _fail

import netdyn as nd

ROOT = Path(__file__).resolve().parents[1]

# The module's fit (the `finished` fixture, and the runs that resume it or must match its
# settings): TINY in 2 steps of one realisation each, without the gradient check at the
# start (the fits of tests/test_cli_fits.py check it, with either engine). One
# realisation halves each of the error bars' gradients and Hessian-vector products.
FIT = [*TINY, "--steps", "2", "--realisations", "1", "--no-gradient-check"]


# The module fit costs about 80 s (mostly compilation): the tests that read it are marked
# slow, run by `pytest -m slow` (CI runs them after the default suite).
@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished 2-step fit, with what it printed and every ``os.replace`` it made (with
    the parameters' error bars over 2 noise keys and two held-out noise sets)."""
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
        assert nd.cli.main([*FIT, "--out", str(out), "--uncertainty", "auto",
                            "--heldout-sets", "2", "--uncertainty-keys", "2"]) == 0
    return out, replaced, stdout.getvalue(), stderr.getvalue()


def test_help(capsys):
    with pytest.raises(SystemExit) as info:
        nd.cli.main(["fit", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--dataset", "--weights", "--lengths", "--fc", "--model", "--fit",
                   "--steps", "--lr", "--duration", "--remat", "--out", "--seed",
                   "--resume", "--overwrite"):
        assert option in text


def test_help_timing_is_the_measured_one(capsys):
    with pytest.raises(SystemExit):
        nd.cli.main(["fit", "--help"])
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
        # Checked by the library as the plan is built, said with the option that gave it.
        (["--realisations", "0"], "--realisations: FcLoss realisations must be a whole "
         "number >= 1, got 0"),
        (["--heldout-realisations", "0"], "--heldout-realisations: FcLoss realisations must "
         "be a whole number >= 1, got 0"),
        (["--speed", "nan"], "--speed: speed must be positive, got nan"),
        (["--grid", "-1"], "--grid must be 0 (no scan) or >= 3"),
        (["--grid", "2"], "--grid must be 0 (no scan) or >= 3"),
        (["--bisect", "-1"], "--bisect must be >= 0"),
        (["--fcd-weight", "nan"], "--fcd-weight must be a finite number >= 0"),
        (["--fcd-window", "1"], "--fcd-window must be >= 2"),
        (["--burn-in", "-5"], "--burn-in must be a finite number of ms >= 0"),
        (["--checkpoint-every", "0"], "--checkpoint-every must be >= 1"),
        (["--heldout-sets", "0"], "--heldout-sets must be >= 1"),
        (["--uncertainty-keys", "1"], "--uncertainty-keys must be >= 2"),
        (["--speed", "0"], "--speed: speed must be positive, got 0.0"),
        (["--resume", "--overwrite"], "give one of them"),
        (["--fit", "G,I_o:regional"], "the suffixes are ':global' and ':maps'"),
        (["--fit", "G:maps"], "only parameters of the dynamics and input-gain vary"),
        (["--fit", "G,input-gain:global"], "input-gain is per region"),
        (["--fit", "G,I_o:maps", "--maps", "in-strength,in-strength"], "names in-strength twice"),
        (["--fit", "G,I_o:maps", "--maps", ","], "--maps ',': give at least one map"),
        (["--fit", " , "], "--fit ' , ': no parameter named (e.g. 'G')"),  # nd.presets.select
        (["--fit", "G,I_o:maps", "--maps", "nowhere.txt"], "--maps nowhere.txt: cannot read"),
        (["--model", "rww-ei-fic", "--engine", "linear", "--fit", "G,sigma"],
         "cancels in the analytic FC"),
        (["--model", "rww-ei-fic", "--engine", "linear", "--fit", "G", "--fcd-weight", "1"],
         "--fcd-weight with --engine"),
        (["--engine", "linear"], "--engine linear with --model rww: the analytic FC does not "
         "describe this model"),
        (["--model", "hopf", "--engine", "linear"], "use --engine simulation"),
    ],
)
def test_bad_arguments(args, message, capsys, tmp_path):
    assert message in _fail([*TINY, "--out", str(tmp_path), *args], capsys)


@pytest.mark.parametrize("args", [["--steps", "two"], ["--model", "lif"]])
def test_argparse_errors(args, capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        nd.cli.main([*TINY, "--out", str(tmp_path), *args])
    assert info.value.code == 2


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--tr", "700"], "--duration (7200 ms) must be a whole number of TRs --tr (700 ms)"),
        (["--dt", "0.7"], "--tr (720 ms) must be a whole number of time steps --dt"),
        (["--heldout-duration", "100"], "--heldout-duration (100 ms) must be a whole number"),
        (["--warmup", "7000", "--burn-in", "0"], "leaves fewer than 2 BOLD samples"),
        (["--warmup", "7500"], "--warmup (7500 ms) leaves no BOLD sample of the --burn-in"),
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


def _npy_header(path: Path, shape: bytes) -> Path:
    """A version 1.0 ``.npy`` file of float64 with the header's end ``shape`` and no data."""
    header = b"{'descr': '<f8', 'fortran_order': False, " + shape
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
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
        # A header cut inside a string (tokenize.TokenError), one that claims 8 TB
        # (MemoryError), a complex matrix (its real part was kept): issue 26.
        ("--fc", lambda p: _npy_header(p / "fc.npy", b"'shape': (3, \"\"\"3), }")),
        ("--fc", lambda p: _npy_header(p / "fc.npy", b"'shape': (1000000, 1000000), }")),
        ("--fc", lambda p: (p / "fc.npy", np.save(p / "fc.npy", np.eye(3) * 1j))[0]),
        # The library's readers name the file; the command adds the option (no reading
        # error of its own to catch).
        ("--bold", lambda p: p / "missing.tsv"),
        ("--bold", lambda p: _not_utf8(p / "latin1.tsv")),
        ("--weights", lambda p: (p / "w.csv", (p / "w.csv").write_text("0,-1\n1,0\n"))[0]),
    ],
)
def test_bad_files_are_one_line_naming_the_file(flag, make, capsys, tmp_path):
    path = make(tmp_path)
    lengths = ["--lengths", str(path)] if flag == "--weights" else []
    err = _fail([*TINY, "--out", str(tmp_path / "fit"), flag, str(path), *lengths], capsys)
    assert flag in err and str(path) in err


def test_bad_fc_shape(capsys, tmp_path):
    np.savetxt(tmp_path / "fc.csv", np.eye(4), delimiter=",")
    err = _fail([*TINY, "--out", str(tmp_path), "--fc", str(tmp_path / "fc.csv")], capsys)
    assert "shape (4, 4)" in err


@pytest.mark.slow
def test_tiny_run(finished):
    out, _, _, _ = finished
    for name in (*OUTPUTS, "checkpoint.eqx"):
        assert (out / name).is_file()
    assert (out / "fit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    report = json.loads((out / "params.json").read_text())
    assert report["steps"] == 2 and report["parameters"]["coupling.G"] > 0.0
    # The scan: 3 points over [0.05, 0.45], then 3 bisections of a pair between which the
    # mean FC crosses that of the training runs; the fit starts at the lowest loss.
    scan = report["grid"]
    np.testing.assert_allclose(scan["G"][:3], [0.05, 0.25, 0.45])
    assert scan["stage"][:3] == ["scan"] * 3 and scan["stage"][-3:] == ["bisect"] * 3
    lo, hi = report["scan"]["bracket"]
    assert abs(hi - lo) <= 0.4 / 2**3 + 1e-12  # at most the whole scan, halved 3 times
    level = report["scan"]["target_mean_fc"]
    at = {g: m for g, m in zip(scan["G"], scan["mean_fc"])}
    assert (at[lo] - level) * (at[hi] - level) <= 0
    assert report["initial"]["coupling.G"] == pytest.approx(
        scan["G"][int(np.argmin(scan["loss"]))], rel=1e-12)
    # The fitted FC is that of runs 1-4 (the mean of each run's FC), computed here by NumPy.
    bold = np.asarray(nd.datasets.load("hcp").bold)
    target = np.mean([np.corrcoef(run.T) for run in bold[:4]], axis=0)
    test = np.mean([np.corrcoef(run.T) for run in bold[4:]], axis=0)
    iu = np.triu_indices(target.shape[0], k=1)
    assert level == pytest.approx(target[iu].mean(), rel=1e-12)
    # The reported FC r is that of the written simulated FC against the training runs' FC.
    simulated = np.loadtxt(out / "fc_simulated.csv", delimiter=",")
    r = np.corrcoef(simulated[iu], target[iu])[0, 1]
    level = simulated[iu].mean() - target[iu].mean()
    np.testing.assert_allclose(report["fc_r"], r, rtol=1e-8)
    np.testing.assert_allclose(report["mean_fc"], simulated[iu].mean(), rtol=1e-8)
    # The default loss: 1 - r + Huber(level gap) of width 0.05.
    huber = level**2 / 0.1 if abs(level) <= 0.05 else abs(level) - 0.025
    np.testing.assert_allclose(report["loss"], 1.0 - r + huber, rtol=1e-8)
    # Held-out: the written held-out FC (the first of the held-out noise sets), from noise
    # the fit did not see.
    heldout = np.loadtxt(out / "fc_heldout.csv", delimiter=",")
    assert not np.allclose(heldout, simulated)
    np.testing.assert_allclose(report["heldout_each"][0]["fc_r"],
                               np.corrcoef(heldout[iu], target[iu])[0, 1], rtol=1e-8)
    np.testing.assert_allclose(report["heldout_each"][0]["saturation"],
                               np.mean(heldout[iu] > 0.9))
    # Scored on runs 5-7, which the fit never saw, with the noise ceiling of the split.
    runs = report["runs"]
    assert runs["train_subjects"] == [1, 2, 3, 4] and runs["test_subjects"] == [5, 6, 7]
    np.testing.assert_allclose(report["runs_each"][0]["test"]["fc_r"],
                               np.corrcoef(heldout[iu], test[iu])[0, 1], rtol=1e-6)
    np.testing.assert_allclose(runs["test"]["fc_r"], np.mean(
        [e["test"]["fc_r"] for e in report["runs_each"]]), rtol=1e-12)
    np.testing.assert_allclose(runs["test"]["ceiling"],
                               np.corrcoef(target[iu], test[iu])[0, 1], rtol=1e-10)
    np.testing.assert_allclose(runs["test"]["empirical_mean_fc"], test[iu].mean(), rtol=1e-10)
    assert runs["fcd_window"] is None  # 10 samples per run: shorter than the 83-TR window
    assert runs["fcd_skipped"] == "runs of 10 TRs hold fewer than 3 FCD windows of 83 TRs"
    # What makes the result doubtful is said, from the held-out FC (mean over the sets).
    saturated = np.mean([e["saturation"] for e in report["heldout_each"]]) > 0.05
    assert any("saturated" in c for c in report["cautions"]) == saturated
    off = abs(np.mean([e["mean_fc"] for e in report["heldout_each"]]) - target[iu].mean()) > 0.1
    assert any("mean FC" in c and "from the fitted" in c for c in report["cautions"]) == off

    lines = (out / "history.csv").read_text().splitlines()
    assert lines[0] == ("step,loss,grad_norm,wall_time,skipped,fc_r,mean_fc,rmse,saturation,"
                        "coupling.G,noise.sigma")
    assert len(lines) == 3
    history = json.loads((out / "history.json").read_text())
    assert history["params"]["coupling.G"][0] == report["initial"]["coupling.G"]


@pytest.mark.slow
def test_error_bars_of_the_heldout_check_and_the_parameters(finished):
    out, _, stdout, _ = finished
    params = json.loads((out / "params.json").read_text())
    each = params["heldout_each"]
    assert params["heldout_sets"] == len(each) == 2
    for k in ("fc_r", "mean_fc", "saturation"):
        values = [e[k] for e in each]
        assert params["heldout"][k] == pytest.approx(np.mean(values), rel=1e-12)
        assert params["heldout_sd"][k] == pytest.approx(np.std(values, ddof=1), rel=1e-9,
                                                        abs=1e-15)
    assert each[0]["fc_r"] != each[1]["fc_r"]  # independent noise
    u = params["uncertainty"]
    assert u["names"] == ["coupling.G", "noise.sigma"] and u["noise_keys"] == 2
    assert u["runs_left_out"] == [1, 2, 3, 4] and len(u["hessian_eigenvalues"]) == 2
    assert u["values"] == pytest.approx([params["parameters"]["coupling.G"],
                                         params["parameters"]["noise.sigma"]], rel=1e-12)
    assert np.array(u["hessian"]).shape == (2, 2)
    if u["valid"]:
        assert all(lo < v < hi for lo, v, hi, ok in zip(u["lower"], u["values"], u["upper"],
                                                        u["constrained"]) if ok)
        assert "% intervals (noise over 2 keys" in stdout
        if u["constrained"][0]:  # G's profile over 1.5 times its interval on each side
            p = u["profile"]
            assert p["G"][2] == pytest.approx(u["values"][0], rel=1e-12)
            assert p["G"][0] < u["lower"][0] < p["G"][1] < p["G"][3] < u["upper"][0] < p["G"][4]
            assert p["loss"][2] == pytest.approx(p["quadratic"][2], rel=1e-9)
            assert "profile of G" in stdout
    else:  # two steps from the start need not reach a minimum: said, not hidden
        assert u["lower"] == [None, None] and "no parameter intervals: not at a minimum" in stdout
        assert u["profile"] is None
    assert "mean ± sd over 2 sets" in stdout


@pytest.mark.slow
def test_long_check_along_each_fitted_value(finished):
    # A simulated fit looks at the loss at the held-out length at 0.8x and 1.25x each
    # fitted global value without an interval (and at 0.5x / 2x on a side flat there), each
    # held-out set with its own noise (whose loss at the fit is that set's): a point is
    # lower (higher) where every set is and the mean change exceeds t(95 %) standard errors;
    # "lower at" the lowest such point, else bounded where points are higher, else flat.
    out, _, stdout, _ = finished
    params = json.loads((out / "params.json").read_text())
    check = params["long_check"]
    losses = [e["loss"] for e in params["heldout_each"]]
    assert check["loss_at_fit"] == pytest.approx(np.mean(losses), rel=1e-12)
    # Only the values the error bars gave no interval (all, when they found no minimum).
    u = params["uncertainty"]
    free = [n for n, ok in zip(u["names"], u["constrained"]) if not (u["valid"] and ok)]
    assert list(check["parameters"]) == free and free
    for name, p in check["parameters"].items():
        fitted = params["parameters"][name]
        assert p["values"] == pytest.approx([0.8 * fitted, 1.25 * fitted], rel=1e-12)
        rise = np.array(p["rise_each"])
        assert rise.shape == (2, 2) and p["rise"] == pytest.approx(rise.mean(axis=1))
        assert rise[0, 0] != rise[1, 0] and rise[0, 0] != rise[0, 1]  # simulated each
        # A side flat at 0.8x (1.25x) looked at 0.5x (2x) too.
        rises = [*rise, *np.reshape(p["outer_rise_each"], (-1, 2))]
        se = [r.std(ddof=1) / np.sqrt(2) for r in rises]
        t = scipy.stats.t.ppf(0.975, 1)  # two sets: a two-sided 95 % t test
        sides = ["lower" if np.all(r < 0) and r.mean() < -t * e else
                 "higher" if np.all(r > 0) and r.mean() > t * e else "flat"
                 for r, e in zip(rises, se)]
        # On a profile (not G), a higher point whose mean FC is more than 0.5 % off the
        # fit's (G could not restore it) does not bound.
        level = params["heldout"]["mean_fc"]
        means = [*p["mean_fc"], *p["outer_mean_fc"]]
        sides = ["higher off the level" if s == "higher" and name != "coupling.G"
                 and abs(m - level) > 0.005 * level else s for s, m in zip(sides, means)]
        assert p["outer_factors"] == [o for o, side in zip((0.5, 2.0), sides) if side == "flat"]
        assert p["outer_values"] == pytest.approx([f * fitted for f in p["outer_factors"]])
        assert p["sides"] == sides
        factors = [0.8, 1.25, *p["outer_factors"]]
        lower = [(r.mean(), f) for r, f, side in zip(rises, factors, sides) if side == "lower"]
        below = [f for f, side in zip(factors, sides) if side == "higher" and f < 1]
        above = [f for f, side in zip(factors, sides) if side == "higher" and f > 1]
        expected = (f"lower at {min(lower)[1]:g}x" if lower else
                    "minimum" if below and above else "bounded above" if above else
                    "bounded below" if below else "flat")
        assert p["verdict"] == expected
        assert p["bounds"] == [pytest.approx(max(below) * fitted) if below else None,
                               pytest.approx(min(above) * fitted) if above else None]
        # A value other than G is looked at along its profile: G moved back onto the fit's
        # FC level at each point (by at most 5 %); G itself along a slice.
        G = params["parameters"]["coupling.G"]
        if name == "coupling.G":
            assert p["G"] is None and p["outer_G"] is None
        else:
            assert len(p["G"]) == 2 and len(p["outer_G"]) == len(p["outer_factors"])
            assert all(abs(g / G - 1) <= 0.05 + 1e-12 for g in p["G"] + p["outer_G"])
            assert f"(G re-levelled to {p['G'][0]:.4g} / {p['G'][1]:.4g})" in stdout
    assert "loss at the held-out length at 0.8x and 1.25x each fitted value" in stdout
    off = any(p["verdict"].startswith("lower") for p in check["parameters"].values())
    assert any("missed its minimum" in c for c in params["cautions"]) == off


@pytest.mark.slow
def test_outputs_are_written_atomically(finished):
    out, replaced, _, _ = finished
    # Every output reached its name by os.replace of a temporary file in its own folder.
    by_target = {dst.name: src for src, dst in replaced if dst.parent == out}
    for name in OUTPUTS:
        assert name in by_target, name
        assert by_target[name].parent == out and by_target[name].name != name
    assert not [p.name for p in out.iterdir() if ".tmp" in p.name]


@pytest.mark.slow
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
    assert stdout.count("netdyn fit: caution:") == len(report["cautions"])


@pytest.mark.slow
def test_params_records_the_values_used(finished):
    out, _, _, _ = finished
    report = json.loads((out / "params.json").read_text())
    used = report["settings"]
    assert used["G"] == pytest.approx(report["initial"]["coupling.G"], rel=1e-12)  # not null
    assert used["sigma"] == 0.00283
    np.testing.assert_allclose(report["initial"]["noise.sigma"], 0.00283, rtol=1e-12)


@pytest.mark.slow
def test_existing_results_are_not_overwritten(finished, capsys):
    out, _, _, _ = finished
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    err = _fail([*FIT, "--out", str(out)], capsys)
    assert "already holds the results" in err and "--overwrite" in err and "--resume" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.slow
def test_overwrite_removes_the_earlier_results(finished, tmp_path):
    out = tmp_path / "fit"
    shutil.copytree(finished[0], out)
    seen = []

    def stop_here():  # what does the new run find in --out when it starts simulating?
        seen.extend(os.listdir(out))
        raise KeyboardInterrupt

    with contextlib.redirect_stdout(_Watch(_announced(out), stop_here)):
        assert nd.cli.main([*TINY, "--steps", "3", "--out", str(out), "--overwrite"]) == 130
    assert seen == ["settings.json"]
    assert json.loads((out / "settings.json").read_text())["settings"]["steps"] == 3


@pytest.mark.parametrize("case", ["out is a file", "checkpoint is a folder", "out unwritable"])
def test_bad_out_is_one_line_before_any_simulation(case, tmp_path, capsys):
    out = tmp_path / "fit"
    if case == "out is a file":
        out.write_text("not a folder")
    elif case == "checkpoint is a folder":
        (out / "checkpoint.eqx").mkdir(parents=True)
    else:
        (tmp_path / "file").write_text("")
        out = tmp_path / "file" / "fit"  # a folder that cannot be made
    def no_simulation():
        raise AssertionError("the simulation started before --out was checked")

    with contextlib.redirect_stdout(_Watch(_announced(out), no_simulation)):
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
@pytest.mark.slow
def test_resume_refuses_changed_settings(finished, args, flag, capsys):
    out = finished[0]
    err = _fail([*FIT, "--out", str(out), "--resume", *args], capsys)
    assert f"--resume: {flag} is" in err


@pytest.mark.slow
def test_resume_reads_the_old_option_names(finished, tmp_path, capsys):
    # settings.json of a fit made before --train-runs/--test-runs were renamed: the
    # subjects match, so the only difference named is the one made (--lr).
    out = tmp_path / "old"
    shutil.copytree(finished[0], out)
    saved = json.loads((out / "settings.json").read_text())
    renamed = {"train_subjects": "train_runs", "test_subjects": "test_runs"}
    saved["settings"] = {renamed.get(k, k): v for k, v in saved["settings"].items()}
    assert "train_runs" in saved["settings"] and "test_runs" in saved["settings"]
    (out / "settings.json").write_text(json.dumps(saved))
    err = _fail([*FIT, "--out", str(out), "--resume", "--lr", "0.02"], capsys)
    assert "--resume: --lr is" in err


@pytest.mark.slow
def test_interrupt_then_resume(finished, tmp_path, capsys):
    out = tmp_path / "fit"
    # Ctrl-C as the progress line of step 1 is printed.
    argv = [*FIT, "--out", str(out)]
    ctrl_c = _Watch("step 1/2", lambda: os.kill(os.getpid(), signal.SIGINT))
    # Python's own SIGINT handler, as at a terminal, also when the tests run with SIGINT
    # ignored (a background job of a non-interactive shell): netdyn leaves that alone.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with contextlib.redirect_stderr(ctrl_c):
            assert nd.cli.main(argv) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    err = ctrl_c.getvalue()
    # The interruption is one line (after any caution of the gradient check).
    assert "Traceback" not in err
    err = err.splitlines()[-1]
    assert f"1 of 2 steps are saved in {out / 'checkpoint.eqx'}" in err
    command = err.split("Continue with: ")[1].strip()
    assert command == shlex.join(["netdyn", *argv, "--resume"])

    assert nd.cli.main(shlex.split(command)[1:]) == 0
    assert "1 of 2 steps done, continuing at step 2." in capsys.readouterr().out
    # The interrupted and resumed fit is the uninterrupted one.
    resumed = json.loads((out / "history.json").read_text())
    whole = json.loads((finished[0] / "history.json").read_text())
    for h in (resumed, whole):
        h.pop("wall_time")
    assert resumed == whole
    mine = json.loads((out / "params.json").read_text())
    theirs = json.loads((finished[0] / "params.json").read_text())
    for name in ("parameters", "loss", "grid"):
        assert mine[name] == theirs[name]
    # One held-out set here, two there: the first sets are the same simulation.
    assert mine["heldout"] == mine["heldout_each"][0] == theirs["heldout_each"][0]


@pytest.mark.parametrize("content, message", [
    ("1 2 3", "3 values for 80 regions"),
    ("myelin\n" + "\n".join(["0.5"] * 80), "constant"),
    ("\n".join(["1"] * 79 + ["x"]), "'x' is not a number"),
])
def test_bad_map_files_name_the_file(content, message, capsys, tmp_path):
    path = tmp_path / "map.txt"
    path.write_text(content)
    err = _fail([*TINY, "--out", str(tmp_path / "fit"), "--fit", "G,I_o:maps", "--maps",
                 f"fc-gradient,{path}"], capsys)
    assert f"--maps {path}" in err and message in err


def test_defaults_follow_the_model_the_engine_and_quick():
    # No options: rww-ei-fic, fitted on its analytic FC (G alone: sigma cancels there),
    # 2 held-out sets of 4 x 288 s, error bars when few values are fitted.
    o = nd.cli.plan(["fit"]).options
    assert (o.model, o.engine, o.fit) == ("rww-ei-fic", "linear", "G")
    assert (o.heldout_sets, o.heldout_realisations, o.heldout_duration) == (2, 4, 288_000.0)
    assert (o.grid, o.bisect, o.steps, o.uncertainty) == (17, 8, 12, "auto")
    assert (o.realisations, o.uncertainty_keys, o.no_gradient_check) == (4, 4, False)
    # What the analytic FC cannot give asks for the simulation: sigma, an FCD term, a
    # model it does not describe.
    for extra in (["--fit", "G,sigma"], ["--fcd-weight", "0.5", "--fcd-window", "20"],
                  ["--model", "rww"]):
        assert nd.cli.plan(["fit", *extra]).options.engine == "simulation", extra
    assert nd.cli.plan(["fit", "--model", "rww"]).options.fit == "G,sigma"
    # --quick: one short held-out set and no error bars; with the simulation engine also a
    # coarser scan and fewer, shorter steps; options given keep their values.
    q = nd.cli.plan(["fit", "--quick"]).options
    assert (q.engine, q.heldout_sets, q.heldout_duration, q.uncertainty) == (
        "linear", 1, 72_000.0, "off")
    assert (q.grid, q.bisect, q.steps, q.no_gradient_check) == (9, 4, 12, True)
    assert nd.cli.plan(["fit"]).options.no_gradient_check is False
    q = nd.cli.plan(["fit", "--quick", "--model", "rww", "--steps", "5"]).options
    assert (q.grid, q.bisect, q.steps, q.duration, q.realisations) == (9, 4, 5, 14_400.0, 2)
    assert nd.cli.plan(["fit", "--quick", "--heldout-sets", "3"]).options.heldout_sets == 3
    # A short --duration shortens the held-out sets in proportion (288 / 43.2), rounded up
    # to whole TRs: 7.2 s -> 48 s -> 67 TRs of 720 ms.
    assert nd.cli.plan(["fit", "--duration", "7200"]).options.heldout_duration == 67 * 720.0
    assert nd.cli.plan(["fit", "--duration", "7200", "--heldout-duration", "7200"]
                       ).options.heldout_duration == 7200.0
    assert nd.cli.plan(["fit", "--duration", "86400"]).options.heldout_duration == 288_000.0


def test_load_fitted_names_a_folder_without_a_fit(tmp_path):
    with pytest.raises(ValueError, match="model.eqx does not exist"):
        nd.cli.load_fitted(tmp_path)


def _selected(*options: str):
    """``netdyn fit OPTIONS`` up to the selection, without simulating: ``(args, where,
    network, maps)`` on the embedded data (maps from ``--maps`` when a ':maps' is fitted)."""
    planned = nd.cli.plan(["fit", *options])
    return planned.options, planned.where, planned.network, planned.maps


def test_input_gain_along_maps_is_the_scaled_connectome():
    # No simulation: the selection's network, resolved, has W_ij exp(sum_k c_k M_ki) (the
    # default --maps: in-strength, fc-gradient).
    _, where, net, maps = _selected("--model", "rww-ei-fic", "--fit", "G,input-gain:maps",
                                    "--G", "0.4")
    c = np.array([0.3, -0.1])
    moved = eqx.tree_at(where, net, (net.coupling.G, jnp.asarray(c)))
    expected = np.exp(c @ maps.values)[:, None] * np.asarray(nd.datasets.load("hcp").weights)
    np.testing.assert_allclose(nd.resolve_parameters(moved).graph.weights, expected, rtol=1e-13)
    assert where.mapped == ("input-gain",)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--train-subjects", "1-4", "--test-subjects", "4-7"],
         "subject 4 is also a training subject"),
        (["--train-subjects", "0-2"], "subject 0 does not exist (the data have subjects 1-7)"),
        (["--test-subjects", "8"], "subject 8 does not exist"),
        (["--train-subjects", "one"], "expected subject numbers such as 1-4"),
        (["--train-subjects", "1,1"], "a subject named twice"),
        (["--train-subjects", "none"], "leaves nothing to fit"),
        # The old names stay, as aliases.
        (["--train-runs", "1-4", "--test-runs", "4-7"], "subject 4 is also a training subject"),
    ],
)
def test_bad_run_splits(args, message, capsys, tmp_path):
    err = _fail([*TINY, "--out", str(tmp_path / "fit"), *args], capsys)
    assert message in err
    assert not (tmp_path / "fit").exists()


def test_heterogeneous_hopf_bifurcation_parameter_along_maps():
    # The second model family: Hopf nodes whose bifurcation parameter a varies along maps,
    # a_i = a (1 + sum_k c_k M_ki); no simulation.
    _, where, net, maps = _selected("--model", "hopf", "--fit", "G,a:maps", "--maps",
                                    "in-strength")
    moved = eqx.tree_at(where, net, (net.coupling.G, jnp.asarray([0.5])))
    a = np.asarray(nd.resolve_parameters(moved).dynamics.a)
    np.testing.assert_allclose(a, -0.02e-3 * (1 + 0.5 * maps.values[0]), rtol=1e-12)


def test_global_parameters_step_slower_beside_regional_ones():
    # With per-region input gains, G and sigma step at a fraction of --lr; alone, or with
    # only global parameters, everything steps at --lr (the default fit unchanged).
    options = ["--model", "rww-ei-fic", "--redraw"]  # --redraw: plain Adam, no backtracking
    regional = nd.cli.plan(["fit", *options, "--fit", "G,sigma,input-gain"])
    slow = regional.step_scales[0]
    assert regional.step_scales == (slow, slow, 1.0) and 0 < slow < 1
    for fit in ("G,sigma", "input-gain"):
        assert nd.cli.plan(["fit", *options, "--fit", fit]).step_scales is None, fit
    # The optimizer applies them: Adam's first step on equal gradients, G's against a gain's.
    params = regional.where(regional.network)
    grads = tuple(jnp.ones_like(x) for x in params)
    with jax.numpy_dtype_promotion("standard"):  # optax's bias correction: float ** int32
        updates, _ = regional.optimizer.update(grads, regional.optimizer.init(params), params)
    np.testing.assert_allclose(float(updates[0]) / np.asarray(updates[2]), slow, rtol=1e-12)


@pytest.mark.slow
def test_summary_command_prints_what_the_fit_printed(finished, capsys):
    out, _, printed, _ = finished
    assert nd.cli.main(["summary", str(out)]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("netdyn fit: ") and shown in printed


@pytest.mark.slow
def test_summary_names_each_maps_coefficient_and_says_when_it_holds_zero(finished, tmp_path,
                                                                         capsys):
    run = tmp_path / "run"
    shutil.copytree(finished[0], run)
    params = json.loads((run / "params.json").read_text())
    params["uncertainty"] = {
        "valid": True, "level": 0.95, "noise_keys": 4, "runs_left_out": [1, 2], "seconds": 3,
        "names": ["coupling.G", "noise.sigma", "x.coefficients[0]", "x.coefficients[1]"],
        "values": [0.47, 1e-3, -0.001, 0.2], "lower": [0.4, None, -0.2, 0.1],
        "upper": [0.55, None, 0.2, 0.3], "constrained": [True, False, True, True],
        "sloppy": [], "profile": None,
        "unresolved": "not resolved by the fit's loss (4 x 43.2 s per evaluation)"}
    params["maps"] = {"names": ["in-strength", "fc-gradient"], "parameters": ["x"]}
    params["long_check"] = None  # what the long check adds: the test below
    (run / "params.json").write_text(json.dumps(params))
    assert nd.cli.main(["summary", str(run)]) == 0
    line = capsys.readouterr().out
    assert "x.coefficients[0] (in-strength) -0.001 [-0.2, 0.2] (holds 0" in line
    assert "x.coefficients[1] (fc-gradient) 0.2 [0.1, 0.3].\n" in line
    # A simulated loss's flat direction is not called a property of the data.
    assert ("noise.sigma 0.001 (not resolved by the fit's loss (4 x 43.2 s per evaluation): "
            "no interval)") in line


def test_a_value_flat_at_the_held_out_length_too_is_said_to_be_unconstrained():
    # The fit's short loss left sigma without an interval; the long check decides what the
    # summary says of it: flat there too -> both agree; a minimum there -> only unresolved.
    from netdyn._evaluation.interval_text import uncertainty_text

    u = {"valid": True, "level": 0.95, "noise_keys": 4, "runs_left_out": None, "seconds": 3,
         "names": ["coupling.G", "noise.sigma"], "values": [0.2216, 0.00283],
         "lower": [0.2209, None], "upper": [0.2223, None], "constrained": [True, False],
         "sloppy": [], "profile": None,
         "unresolved": "not resolved by the fit's loss (4 x 43.2 s per evaluation)"}

    def line(verdict):
        check = None if verdict is None else {"parameters": {"noise.sigma": {
            "verdict": verdict}}}
        return uncertainty_text(u, [], check)

    assert ("noise.sigma 0.00283 (not constrained by the FC here: flat along it at the "
            "fit's length and at the held-out length (the long check below): no interval)"
            ) in line("flat")
    for verdict in (None, "minimum", "lower at 0.8x"):
        assert ("noise.sigma 0.00283 (not resolved by the fit's loss (4 x 43.2 s per "
                "evaluation): no interval)") in line(verdict), verdict
    assert "coupling.G 0.2216 [0.2209, 0.2223]" in line("flat")
    # Where the long check looked further out: the range it is flat over, or its bounds.
    check = {"parameters": {"noise.sigma": {
        "verdict": "flat", "values": [0.0023, 0.0035], "outer_factors": [0.5, 2.0],
        "outer_values": [0.0014, 0.0057], "bounds": [None, None]}}}
    assert ("noise.sigma 0.00283 (not constrained by the FC here: flat along it at the "
            "fit's length and at the held-out length from 0.0014 to 0.0057 (the long check "
            "below): no interval)") in uncertainty_text(u, [], check)
    check["parameters"]["noise.sigma"].update(verdict="bounded above", bounds=[None, 0.0057])
    assert ("noise.sigma 0.00283 (not resolved by the fit's loss (4 x 43.2 s per "
            "evaluation); the held-out length bounds it: below 0.0057: no interval)"
            ) in uncertainty_text(u, [], check)


def test_summary_of_a_folder_without_a_finished_fit(tmp_path, capsys):
    (tmp_path / "params.json").write_text("{}")
    err = _fail(["summary", str(tmp_path)], capsys)
    assert "params.json: not a netdyn params.json" in err
    err = _fail(["summary", str(tmp_path / "nothing")], capsys)
    assert "nothing/params.json: no such file" in err
    (tmp_path / "params.json").write_text("[1, 2]")
    err = _fail(["summary", str(tmp_path)], capsys)
    assert "params.json cannot be read (it is not a JSON object)" in err
    (tmp_path / "params.json").write_text('{"loss": ')
    err = _fail(["summary", str(tmp_path)], capsys)
    assert "params.json cannot be read (Expecting value" in err
