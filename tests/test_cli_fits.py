"""``netdyn fit`` end to end on other models, engines and options (the default model on
its analytic FC, Hopf, maps, own BOLD files, the FCD term, divergence, scans without a
crossing): each a tiny fit of its own, apart from tests/test_cli.py so that the two files
run side by side."""

import json
import re
import sys

import equinox as eqx
import jax
import numpy as np
import pytest
from cli_helpers import TINY, fail as _fail

import netdyn as nd

# The Hopf fits, whose results are not compared with the data: G alone, one realisation of
# 3.6 s after a 0.72 s burn-in, held out likewise (the same compiled fit step for both).
HOPF = [*TINY, "--model", "hopf", "--fit", "G", "--realisations", "1", "--duration", "3600",
        "--burn-in", "720", "--heldout-duration", "3600"]


@pytest.mark.slow
def test_divergence_names_flags(tmp_path, capsys):
    # Hopf nodes have no bound: one Adam step of a huge --lr takes G (log-scaled) far past
    # the coupling the nodes can bear, and the next step's simulation diverges, its burn-in
    # first (a non-finite loss, not a runtime error).
    out = tmp_path / "fit"
    assert nd.cli.main([*HOPF, "--out", str(out), "--grid", "0", "--lr", "50", "--quiet",
                        "--no-gradient-check"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "at step 2 of 12" in err and "--lr" in err and "--overwrite" in err
    for api in ("on_nonfinite", "resume=True", "Checkpoint", "FitDivergedError", "Traceback"):
        assert api not in err
    assert json.loads((out / "history.json").read_text())["step"] == [1, 2]


@pytest.mark.slow
def test_hopf_in_the_units_given_without_matplotlib(tmp_path, monkeypatch, capsys):
    # Importing matplotlib.figure fails as if matplotlib were not installed.
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = tmp_path / "fit"
    # With the gradient check at the start (on the simulated loss; the test_cli.py fit
    # skips it).
    assert nd.cli.main([*HOPF, "--G", "0.7", "--sigma", "0.01", "--steps", "1", "--out",
                        str(out), "--quiet"]) == 0
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert (out / "params.json").is_file() and not (out / "fit.png").exists()
    report = json.loads((out / "params.json").read_text())
    # --G is per second: 0.7 /s is G = 0.0007 /ms in the network.
    assert report["initial"]["coupling.G"] == pytest.approx(0.7, rel=1e-12)
    assert report["settings"]["G"] == 0.7 and report["settings"]["sigma"] == 0.01
    assert report["units"] == {"coupling.G": 1e-3}
    history = json.loads((out / "history.json").read_text())
    assert history["params"]["coupling.G"][0] == pytest.approx(0.7, rel=1e-12)


@pytest.mark.slow
def test_linear_engine_fits_regional_parameters_along_maps_and_scores_by_simulation(
        tmp_path, capsys):
    # --engine linear: the fit's loss is the analytic FC (deterministic: the same value for
    # every key), G alone by default; the training and held-out figures are simulated.
    planned = nd.cli.plan(["fit", "--model", "rww-ei-fic", "--engine", "linear"])
    assert isinstance(planned.loss, nd.LinearFcLoss) and not planned.loss.stochastic
    assert isinstance(planned.simulated_loss, nd.FcLoss) and planned.options.fit == "G"
    assert nd.cli.plan(["fit", "--model", "rww"]).options.fit == "G,sigma"  # simulation's
    # One fit (one compiled program) for both: the two-population model with FIC on the
    # analytic FC, its I_o varying along the in-strength and a map from a file (with a
    # header naming it), and per-region input gains; the map coefficients start at 0 (the
    # homogeneous model) and are fitted; the report names each map's coefficient.
    rng = np.random.default_rng(0)
    path = tmp_path / "myelin.csv"
    path.write_text("T1w/T2w\n" + ",\n".join(f"{v:.6f}" for v in rng.random(80)))
    out = tmp_path / "fit"
    # 9 values of G over [G0 / 3, 3 G0]: the analytic FC exists below G ~ 0.56 only. No
    # gradient check (the Hopf fit runs the command's; tests/test_linear_fc.py checks the
    # analytic FC's gradient); a short held-out simulation (0.72 s burn-in, 3.6 s).
    assert nd.cli.main([*TINY, "--model", "rww-ei-fic", "--engine", "linear", "--fit",
                        "G,I_o:maps,input-gain", "--maps", f"in-strength,{path}", "--steps",
                        "2", "--grid", "9", "--no-plot", "--no-gradient-check", "--burn-in",
                        "720", "--heldout-duration", "3600", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "params.json").read_text())
    assert report["engine"] == "linear" and list(report["parameters"]) == [
        "coupling.G", "dynamics.I_o.coefficients", "graph.weights.log_gain.deviations"]
    assert not (out / "fit.png").exists()  # --no-plot
    assert report["maps"] == {"names": ["in-strength", "T1w/T2w"], "parameters": ["I_o"]}
    coefficients = report["parameters"]["dynamics.I_o.coefficients"]
    assert len(coefficients) == 2 and report["initial"]["dynamics.I_o.coefficients"] == [0, 0]
    # input-gain: 80 mean-free log-gains of each region's input, from 0.
    gains = np.asarray(report["parameters"]["graph.weights.log_gain.deviations"])
    assert gains.shape == (80,) and np.any(gains != 0)
    assert re.search(r"dynamics.I_o.coefficients = [+-][\d.e-]+ in-strength, [+-][\d.e-]+ "
                     r"T1w/T2w", printed), printed
    # The analytic loss of the best step is the fit's; the FC written as the fit's is the
    # analytic FC of the fitted model, and the reported metrics are its own.
    assert report["fit_loss"] <= report["initial_loss"] + 1e-12
    fitted, planned = nd.cli.load_fitted(out)
    assert float(fitted.coupling.G) == report["parameters"]["coupling.G"]
    analytic = np.asarray(nd.linear_fc(nd.resolve_parameters(fitted), planned.loss.monitor).fc)
    np.testing.assert_allclose(np.loadtxt(out / "fc_simulated.csv", delimiter=","), analytic,
                               rtol=1e-8, atol=1e-10)
    iu = np.triu_indices(80, k=1)
    r = np.corrcoef(analytic[iu], np.asarray(planned.loss.target)[iu])[0, 1]
    np.testing.assert_allclose([report["fc_r"], report["fit_fc_r"]], r, rtol=1e-7)
    # The held-out check simulates: its FC is another matrix.
    assert not np.allclose(np.loadtxt(out / "fc_heldout.csv", delimiter=","), analytic)
    assert "the analytic FC of the network linearised" in printed
    assert re.search(r"analytic loss [\d.]+ -> [\d.]+, FC r [\d.]+ -> [\d.]+ \(best",
                     printed), printed


@pytest.mark.slow
def test_no_level_crossing_is_no_fit(tmp_path, capsys):
    # 1.44 s after the common initial state every region still relaxes alike: the FC is
    # saturated at every G, so no G reaches the data's mean FC. No fit is reported.
    out = tmp_path / "fit"
    argv = ["fit", "--model", "rww", "--duration", "2880", "--tr", "144", "--burn-in", "1440",
            "--realisations", "1", "--grid", "3", "--bisect", "2", "--out", str(out), "--quiet"]
    assert nd.cli.main(argv) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no usable fit" in err and "--G" in err
    scan = json.loads((out / "scan.json").read_text())
    assert scan["start"] is None and scan["bracket"] is None and scan["at_peak"] is False
    assert min(scan["grid"]["mean_fc"]) > scan["target_mean_fc"]
    assert "it stays within [0.9" in err
    assert not (out / "params.json").exists()


@pytest.mark.slow
def test_diverged_scan_points_are_named_and_skipped(tmp_path, capsys):
    # Hopf nodes (no bound) on the connectome's weights x 3000: the two stronger of three
    # scanned couplings diverge (NaN FC). The scan names them and keeps them out of the
    # choice of the start; the one finite point is above the data's mean FC: no crossing.
    data = nd.datasets.load("hcp")
    files = {name: tmp_path / f"{name}.csv" for name in ("weights", "lengths", "fc")}
    for name, x in (("weights", 3000 * np.asarray(data.weights)),
                    ("lengths", np.asarray(data.lengths)), ("fc", np.asarray(data.fc))):
        np.savetxt(files[name], x, delimiter=",")
    out = tmp_path / "fit"
    argv = ["fit", "--model", "hopf", "--duration", "2880", "--tr", "144", "--burn-in", "1440",
            "--realisations", "1", "--grid", "3", "--bisect", "0", "--out", str(out),
            "--quiet", *(f"--{name}={path}" for name, path in files.items())]
    assert nd.cli.main(argv) == 3
    err = capsys.readouterr().err
    scan = json.loads((out / "scan.json").read_text())
    grid = scan["grid"]
    assert grid["mean_fc"][0] > scan["target_mean_fc"] and grid["mean_fc"][1:] == [None, None]
    assert (f"diverged (NaN or infinite FC) at G = {grid['G'][1]:.4g}, {grid['G'][2]:.4g}: "
            "2 of 3 scanned points skipped") in err
    assert "no usable fit" in err


def _split_seen(argv) -> tuple:
    """The data and TR ``netdyn fit argv`` would fit, without simulating."""
    planned = nd.cli.plan(argv)
    return planned.data, planned.options.tr


def test_own_bold_files_and_their_tr(tmp_path, capsys):
    data = nd.datasets.load("hcp")
    bold = np.asarray(data.bold)[:, :300]
    files = []
    for i, run in enumerate(bold[:3]):
        path = tmp_path / f"sub-01_task-rest_run-{i + 1}_timeseries.tsv"
        header = "\t".join(data.labels)
        np.savetxt(path, run, delimiter="\t", header=header, comments="")
        path.with_suffix(".json").write_text(json.dumps({"RepetitionTime": 2.0}))
        files.append(str(path))
    argv = ["fit", "--bold", *files, "--duration", "20000", "--heldout-duration", "20000",
            "--burn-in", "20000", "--out", str(tmp_path / "fit"), "--train-subjects", "1,3"]
    fit_data, tr = _split_seen(argv)
    assert tr == 2000.0  # from the sidecars' RepetitionTime (s)
    assert fit_data.train_subjects == (1, 3) and fit_data.test_subjects == (2,)
    expected = np.mean([np.corrcoef(bold[i].T) for i in (0, 2)], axis=0)
    np.testing.assert_allclose(fit_data.target, expected, rtol=1e-10)
    np.testing.assert_array_equal(fit_data.test[0], bold[1])
    # Runs over other regions than the connectome's: one line naming the file.
    np.save(tmp_path / "short.npy", bold[:2, :, :79])
    err = _fail(["fit", "--bold", str(tmp_path / "short.npy"), "--out", str(tmp_path / "x")],
                capsys)
    assert "short.npy" in err and "79 regions" in err and "80" in err


def test_fcd_term_from_the_training_runs(tmp_path, capsys):
    # The FCD target is the training runs' FCD values, pooled, with the window in TRs.
    argv = [*TINY, "--out", str(tmp_path / "fit"), "--fcd-weight", "0.5", "--fcd-window", "5",
            "--fcd-step", "2", "--train-subjects", "2,3"]
    loss_fn = nd.cli.plan(argv).loss
    assert loss_fn.fcd_window == (5, 2) and loss_fn.fcd_weight == 0.5
    assert loss_fn.fcd_metric == "ks"
    bold = np.asarray(nd.datasets.load("hcp").bold)

    def values(x):
        wins = [np.corrcoef(x[s:s + 5].T) for s in range(0, x.shape[0] - 4, 2)]
        pairs = np.array([w[np.triu_indices(80, k=1)] for w in wins])
        c = np.corrcoef(pairs)
        return c[np.triu_indices(c.shape[0], k=1)]

    expected = np.concatenate([values(bold[1]), values(bold[2])])
    np.testing.assert_allclose(np.asarray(loss_fn.fcd_target), expected, rtol=1e-9, atol=1e-12)
    # The default window (83 TRs at 720 ms) does not fit in the 10 TRs of each run.
    err = _fail([*TINY, "--out", str(tmp_path / "other"), "--fcd-weight", "1"], capsys)
    assert "--fcd-window" in err and "83 TRs" in err and "--duration" in err


def test_a_given_fc_leaves_the_datasets_subjects_unused(tmp_path):
    # The HCP subjects are not the runs of another FC: with --fc alone they are neither
    # scored against nor left out for error bars; runs given with --bold, or subjects named,
    # are used.
    path = tmp_path / "fc.csv"
    np.savetxt(path, np.eye(80), delimiter=",")
    data, _ = _split_seen(["fit", "--fc", str(path)])
    assert data.train is None and data.test is None
    np.testing.assert_array_equal(data.target, np.eye(80))
    bold = tmp_path / "runs.npy"
    np.save(bold, np.asarray(nd.datasets.load("hcp").bold)[:3, :100])
    data, _ = _split_seen(["fit", "--fc", str(path), "--bold", str(bold)])
    assert (data.train_subjects, data.test_subjects) == ((1, 2), (3,))  # split as usual
    np.testing.assert_array_equal(data.target, np.eye(80))
    data, _ = _split_seen(["fit", "--fc", str(path), "--test-subjects", "5,6,7"])
    assert len(data.train) == 4 and len(data.test) == 3


def test_chain_burn_in_needs_the_simulation_engine_and_a_length(capsys):
    assert "--chain-burn-in" in _fail([*TINY, "--engine", "linear", "--chain-burn-in", "720"],
                                      capsys)
    assert "--chain-burn-in" in _fail([*TINY, "--chain-burn-in", "-1"], capsys)


@pytest.mark.slow
def test_chain_burn_in_fits_along_persistent_chains_and_resumes(tmp_path, capsys):
    # Hopf, G alone, 2 steps along chains (720 ms from each chain after the 720 ms burn-in
    # once): the first step's loss is nd.Chained's own continue_from at the start.
    argv = [*HOPF, "--grid", "0", "--G", "0.7", "--steps", "2", "--no-gradient-check",
            "--chain-burn-in", "720", "--seed", "3"]
    out = tmp_path / "fit"
    assert nd.cli.main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "continuing the previous step's runs after 0.72 s" in printed
    assert "kept: step 2, the second half's only of 2" in printed
    history = json.loads((out / "history.json").read_text())
    plan = nd.cli.plan([*argv, "--out", str(out)])
    chained = nd.Chained(plan.loss, burn_in=720.0)
    key = jax.random.key(3)
    carry = eqx.filter_jit(chained.start)(plan.network, key)
    first = eqx.filter_jit(lambda c, n, k, s: c.continue_from(n, k, s)[0])(
        chained, plan.network, key, carry)
    assert history["loss"][0] == pytest.approx(float(first), rel=1e-10)
    # Each step saw new noise: the fit keeps the mean of the second half of its steps
    # (here step 2 alone), not the step of the lowest loss.
    result = json.loads((out / "params.json").read_text())
    assert result["averaged_steps"] == [2, 2] and result["best_step"] is None
    assert result["parameters"]["coupling.G"] == pytest.approx(
        history["params"]["coupling.G"][1], rel=1e-12)
    # Resumed once finished: the chains restored from the checkpoint with the fit's state,
    # its history kept.
    assert nd.cli.main([*argv, "--out", str(out), "--resume", "--quiet"]) == 0
    assert json.loads((out / "history.json").read_text())["loss"] == history["loss"]
