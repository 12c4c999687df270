"""The ``netdyn fit`` command: help, a tiny run on the embedded data, errors, resume."""

import json
import sys

import numpy as np
import pytest

import netdyn as nd
from netdyn._cli import main

# A very short simulation: a 1.44 s burn-in, then 2 realisations of 2.88 s with BOLD every
# 144 ms (20 samples each); held-out: one realisation of 4.32 s.
TINY = ["fit", "--duration", "2880", "--tr", "144", "--burn-in", "1440", "--realisations", "2",
        "--heldout-duration", "4320", "--heldout-realisations", "1", "--grid", "3", "--quiet"]


def test_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["fit", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--dataset", "--weights", "--lengths", "--fc", "--model", "--fit",
                   "--steps", "--lr", "--duration", "--remat", "--out", "--seed",
                   "--resume"):
        assert option in text


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
        (["--steps", "two"], "invalid int value"),
        (["--model", "lif"], "invalid choice"),
    ],
)
def test_bad_arguments(args, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        main([*TINY, "--out", str(tmp_path), *args])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_fc_file(capsys, tmp_path):
    np.savetxt(tmp_path / "fc.csv", np.eye(4), delimiter=",")
    with pytest.raises(SystemExit) as info:
        main([*TINY, "--out", str(tmp_path), "--fc", str(tmp_path / "fc.csv")])
    assert info.value.code == 2
    assert "shape (4, 4)" in capsys.readouterr().err


def test_tiny_run_and_resume(tmp_path):
    out = tmp_path / "fit"
    assert main([*TINY, "--steps", "2", "--out", str(out)]) == 0
    for name in ("params.json", "history.csv", "history.json", "fc_simulated.csv",
                 "fc_heldout.csv", "checkpoint.eqx"):
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
    target = nd.datasets.load("hcp").fc
    iu = np.triu_indices(target.shape[0], k=1)
    r = np.corrcoef(simulated[iu], np.asarray(target)[iu])[0, 1]
    level = simulated[iu].mean() - np.asarray(target)[iu].mean()
    np.testing.assert_allclose(report["fc_r"], r, rtol=1e-8)
    np.testing.assert_allclose(report["mean_fc"], simulated[iu].mean(), rtol=1e-8)
    np.testing.assert_allclose(report["loss"], 1.0 - r + abs(level), rtol=1e-8)
    # Held-out: the written held-out FC, from noise the fit did not see.
    heldout = np.loadtxt(out / "fc_heldout.csv", delimiter=",")
    assert not np.allclose(heldout, simulated)
    np.testing.assert_allclose(report["heldout"]["fc_r"],
                               np.corrcoef(heldout[iu], np.asarray(target)[iu])[0, 1],
                               rtol=1e-8)
    np.testing.assert_allclose(report["heldout"]["saturation"], np.mean(heldout[iu] > 0.9))

    lines = (out / "history.csv").read_text().splitlines()
    assert lines[0] == ("step,loss,grad_norm,wall_time,skipped,fc_r,mean_fc,rmse,saturation,"
                        "coupling.G,noise.sigma")
    assert len(lines) == 3
    first = json.loads((out / "history.json").read_text())
    assert first["step"] == [0, 1]
    assert first["params"]["coupling.G"][0] == report["initial"]["coupling.G"]

    # --resume continues the same fit to 3 steps.
    assert main([*TINY, "--steps", "3", "--out", str(out), "--resume", "--no-plot"]) == 0
    second = json.loads((out / "history.json").read_text())
    assert second["step"] == [0, 1, 2]
    for column in ("loss", "grad_norm"):
        assert second[column][:2] == first[column]
    assert second["params"]["coupling.G"][:2] == first["params"]["coupling.G"]
    assert json.loads((out / "params.json").read_text())["steps"] == 3


def test_without_matplotlib(tmp_path, monkeypatch, capsys):
    # Importing matplotlib.figure fails as if matplotlib were not installed.
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = tmp_path / "fit"
    assert main([*TINY, "--steps", "1", "--out", str(out)]) == 0
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert (out / "params.json").is_file() and (out / "history.csv").is_file()
    assert not (out / "fit.png").exists()
