"""Scores on empirical runs (group FC, noise ceiling, KS, ``score_runs``) against NumPy and
SciPy, and the smooth level term of ``FcLoss`` against its formula."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import netdyn as nd


def _runs(seed=0, n_runs=3, time=120, nodes=6):
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(nodes, nodes))
    return [rng.normal(size=(time + 10 * r, nodes)) @ mix for r in range(n_runs)]


def _triu(m):
    return m[np.triu_indices(m.shape[0], k=1)]


def test_runs_fc_is_the_mean_of_each_runs_corrcoef():
    runs = _runs()
    expected = np.mean([np.corrcoef(r.T) for r in runs], axis=0)
    np.testing.assert_allclose(nd.runs_fc(runs), expected, rtol=1e-12, atol=1e-14)
    # A [runs, time, nodes] array and one [time, nodes] run read the same way.
    same = np.stack([r[:120] for r in runs])
    np.testing.assert_allclose(nd.runs_fc(same), np.mean(
        [np.corrcoef(r.T) for r in same], axis=0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(nd.runs_fc(runs[0]), np.corrcoef(runs[0].T), atol=1e-14)


def test_noise_ceiling_on_the_embedded_hcp_runs():
    bold = np.asarray(nd.datasets.load("hcp").bold)
    train = np.mean([np.corrcoef(r.T) for r in bold[:4]], axis=0)
    test = np.mean([np.corrcoef(r.T) for r in bold[4:]], axis=0)
    ceiling = nd.noise_ceiling(bold[:4], bold[4:])
    assert ceiling == pytest.approx(np.corrcoef(_triu(train), _triu(test))[0, 1], rel=1e-12)
    assert ceiling == pytest.approx(0.899, abs=5e-4)


def test_ks_statistic_is_scipys():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=300), rng.normal(0.3, 1.2, size=211)
    assert nd.ks_statistic(a, b) == pytest.approx(stats.ks_2samp(a, b).statistic, rel=1e-12)
    assert nd.ks_statistic(a, a) == 0.0
    with pytest.raises(ValueError, match="at least one value"):
        nd.ks_statistic(a, np.zeros(0))


def test_score_runs_against_numpy():
    sim, emp, train = _runs(1, 2), _runs(2, 3), _runs(4, 2)
    scores = nd.score_runs(np.stack([r[:120] for r in sim]), emp, train=train,
                           fcd_window=40, fcd_step=5)
    f = np.mean([np.corrcoef(r[:120].T) for r in sim], axis=0)
    t = np.mean([np.corrcoef(r.T) for r in emp], axis=0)
    ft = np.mean([np.corrcoef(r.T) for r in train], axis=0)
    r = np.corrcoef(_triu(f), _triu(t))[0, 1]
    assert scores["fc_r"] == pytest.approx(r, rel=1e-10)
    assert scores["mean_fc"] == pytest.approx(_triu(f).mean(), rel=1e-10)
    assert scores["empirical_mean_fc"] == pytest.approx(_triu(t).mean(), rel=1e-10)
    assert scores["saturation"] == np.mean(_triu(f) > 0.9)
    ceiling = np.corrcoef(_triu(ft), _triu(t))[0, 1]
    assert scores["ceiling"] == pytest.approx(ceiling, rel=1e-10)
    assert scores["fraction_of_ceiling"] == pytest.approx(r / ceiling, rel=1e-10)

    def fcd_values(x):  # FCD by NumPy: correlations of the windows' FC triangles
        wins = [_triu(np.corrcoef(x[s:s + 40].T)) for s in range(0, x.shape[0] - 39, 5)]
        return _triu(np.corrcoef(np.array(wins)))

    a = np.concatenate([fcd_values(x[:120]) for x in sim])
    b = np.concatenate([fcd_values(x) for x in emp])
    assert scores["fcd_ks"] == pytest.approx(stats.ks_2samp(a, b).statistic, rel=1e-10)


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((np.zeros((2, 5)),), {}, "time >= 3"),
        ((np.ones((2, 10, 4)) * np.nan,), {}, "NaN or infinite"),
        (([np.zeros((10, 4)), np.zeros((10, 5))],), {}, "nodes as run 0"),
        (([],), {}, "holds no run"),
        ((np.zeros((1, 2, 3, 4)),), {}, "must be \\[runs, time, nodes\\]"),
    ],
)
def test_runs_fc_bad_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        nd.runs_fc(*args, **kwargs)


def test_score_runs_errors_name_the_problem():
    sim, emp = _runs(1, 1, nodes=5), _runs(2, 1, nodes=6)
    with pytest.raises(ValueError, match="simulated has 5 nodes but test has 6"):
        nd.score_runs(sim, emp)
    with pytest.raises(ValueError, match="fewer than the FCD window"):
        nd.score_runs(_runs(1, 1), _runs(2, 1), fcd_window=500)


def test_huber_level_term():
    target = jnp.asarray(np.corrcoef(_runs(5, 1)[0].T))
    loss = nd.FcLoss(target, nd.Heun(), nd.Raw(period=1.0), duration=10.0,
                     metric="1-r+huber", level_width=0.05)
    plain = loss.replace(metric="1-r+mean")
    level = float(np.mean(_triu(np.asarray(target))))
    for shift in (-0.3, -0.04, 0.0, 0.02, 0.2):
        f = target + shift * (1 - jnp.eye(6))
        value, metrics = loss.loss_of_fc(f)
        gap = float(metrics["mean_fc"]) - level
        huber = gap**2 / 0.1 if abs(gap) <= 0.05 else abs(gap) - 0.025
        assert float(value) == pytest.approx(1 - float(metrics["fc_r"]) + huber, abs=1e-12)
        assert float(plain.loss_of_fc(f)[0]) == pytest.approx(
            1 - float(metrics["fc_r"]) + abs(gap), abs=1e-12)
    # Smooth at the matched level, where |gap| has a kink: the derivative along a
    # uniform shift is 0 there (r does not change with a uniform shift).
    d = jax.grad(lambda s: loss.loss_of_fc(target + s * (1 - jnp.eye(6)))[0])(0.0)
    assert abs(float(d)) < 1e-12
    with pytest.raises(ValueError, match="level_width must be a finite real number > 0"):
        nd.FcLoss(target, nd.Heun(), nd.Raw(period=1.0), duration=10.0, level_width=0.0)


REAL = "must be a finite real number"
WINDOW = r"fcd_window must be two whole numbers of samples \(window, step\) with window >= 2"


@pytest.mark.parametrize("option, value, message", [
    ("burn_in", float("nan"), f"FcLoss burn_in {REAL} >= 0 ms, got nan"),
    ("duration", float("nan"), f"FcLoss duration {REAL} > 0 ms"),
    ("duration", float("inf"), f"FcLoss duration {REAL} > 0 ms"),
    ("dt", 0.0, f"FcLoss dt {REAL} > 0 ms"),
    ("fcd_weight", float("nan"), f"FcLoss fcd_weight {REAL} >= 0"),
    ("fcd_weight", -1.0, f"FcLoss fcd_weight {REAL} >= 0"),
    ("realisations", 0, "FcLoss realisations must be a whole number >= 1, got 0"),
    # Checked even without an FCD target (were accepted, and unused until one was given).
    ("fcd_window", (1, 1), WINDOW),
    ("fcd_window", (40, 0), WINDOW),
    # A complex array lost its imaginary part (NumPy's cast), a NaN was caught late.
    ("fcd_target", np.array([0.1 + 1j, 0.2, 0.3]), "FcLoss fcd_target must be real"),
    ("fcd_target", np.array([0.1, np.inf]), r"FcLoss fcd_target must be finite.*at 1"),
])
def test_fc_loss_options_are_checked_where_given(option, value, message):
    # Each option is refused with a message that names it and the accepted range, not a
    # raw conversion error.
    options = {"duration": 7200.0, option: value}
    with pytest.raises(ValueError, match=message):
        nd.FcLoss(np.eye(4), nd.Heun(), nd.Bold(period=720.0), **options)


@pytest.mark.parametrize("option, value, message", [
    ("burn_in", "abc", f"FcLoss burn_in {REAL} >= 0 ms, got 'abc'"),
    ("burn_in", None, f"FcLoss burn_in {REAL} >= 0 ms, got None"),
    ("realisations", 1.5, "FcLoss realisations must be a whole number >= 1, got 1.5"),
    ("realisations", True, "FcLoss realisations must be a whole number >= 1, got True"),
    ("fcd_window", (5.7, 2), WINDOW + r".*got \(5.7, 2\)"),
    ("fcd_window", (5, 2, 1), WINDOW + r".*got \(5, 2, 1\)"),
    ("burn_in_gradient", "no", "FcLoss burn_in_gradient must be True or False, got 'no'"),
    ("metric", 3, "FcLoss metric must be 'rmse', '1-r', '1-r\\+mean' or '1-r\\+huber', got 3"),
    ("metric", np.array(["rmse", "1-r"]), "FcLoss metric must be 'rmse'"),
    ("fcd_metric", None, "FcLoss fcd_metric must be 'w2' or 'ks', got None"),
])
def test_fc_loss_options_of_the_wrong_type(no_type_hook, option, value, message):
    options = {"duration": 7200.0, option: value}
    with pytest.raises(ValueError, match=message):
        nd.FcLoss(np.eye(4), nd.Heun(), nd.Bold(period=720.0), **options)


@pytest.mark.parametrize("target, message", [
    (np.eye(4) * (1 + 1j), "FcLoss target must be real, got a complex array"),
    (np.array([["a"] * 3] * 3), "FcLoss target must be an array of real numbers"),
    (np.triu(np.full((4, 4), 0.5)), r"FcLoss target must be a symmetric FC matrix; "
                                     r"entries \(\d, \d\) and \(\d, \d\) differ by 0.5"),
    (np.ones((4, 3)), r"square FC matrix \[nodes, nodes\] with nodes >= 3, got shape \(4, 3\)"),
    (np.where(np.eye(4) > 0, 1.0, np.inf), r"FcLoss target must be finite; it has 12 NaN"),
])
def test_fc_loss_target_is_a_finite_real_symmetric_matrix(target, message):
    with pytest.raises(ValueError, match=message):
        nd.FcLoss(target, nd.Heun(), nd.Bold(period=720.0), duration=7200.0)
    # Rounding (a float32 FC, the order of a matmul) is not asymmetry.
    f = np.corrcoef(np.random.default_rng(0).normal(size=(4, 50))).astype(np.float32)
    f[0, 1] += 1e-5
    nd.FcLoss(f, nd.Heun(), nd.Bold(period=720.0), duration=7200.0)


@pytest.mark.parametrize("realisations", [10**8, 1e8, 10**12])
def test_fc_loss_refuses_realisations_whose_samples_cannot_fit(no_type_hook, realisations):
    # 100000 samples x 4 nodes x 8 bytes (float64) per run: 3.2 MB, so 1e8 runs need
    # 320 TB, more than any device (they ended in XLA's RESOURCE_EXHAUSTED when called).
    need = int(realisations) * 100_000 * 4 * 8
    message = (rf"FcLoss realisations={int(realisations)} would hold "
               rf"{re.escape(f'{need / 1e9:.3g}')} GB of monitored samples \({int(realisations)} "
               r"runs x 100000 samples x 4 nodes x 8 bytes\), more than this device's "
               r"[0-9.e+]+ GB of memory")
    with pytest.raises(ValueError, match=message):
        nd.FcLoss(np.eye(4), nd.Heun(), nd.Bold(period=720.0), duration=720.0 * 100_000,
                  realisations=realisations)
    # A count that fits is kept as an int.
    loss = nd.FcLoss(np.eye(4), nd.Heun(), nd.Bold(period=720.0), duration=7200.0,
                     realisations=4.0 if isinstance(realisations, float) else 4)
    assert loss.realisations == 4 and type(loss.realisations) is int
