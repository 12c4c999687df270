"""``nd.heldout_scores``: each noise set is the loss's own simulation with the set's key,
scored as a NumPy computation scores it; the mean and sd over the sets are NumPy's; the
FCD is left out (and says why) when the runs hold too few windows."""

import jax
import numpy as np
import pytest
from toy_networks import hopf

import netdyn as nd

N = 4
MONITOR = nd.TemporalAverage(period=5.0, variables=("x",))


def _setup():
    net = hopf(N, 1, G=0.3, a=-0.1, omega=0.2, sigma=0.05, max_delay=6.0)
    rng = np.random.default_rng(0)
    test = [rng.normal(size=(90, N)) + rng.normal(size=(1, N)) * rng.normal(size=(90, 1))
            for _ in range(2)]
    train = [rng.normal(size=(90, N)) for _ in range(2)]
    target = np.mean([np.corrcoef(r.T) for r in train], axis=0)
    loss = nd.FcLoss(target, nd.Heun(), MONITOR, duration=400.0, dt=0.5, burn_in=50.0,
                     realisations=2, metric="1-r")
    return net, loss, test, train


def _upper(m):
    return m[np.triu_indices(N, k=1)]


def _numpy_scores(signals, runs):
    f = np.mean([np.corrcoef(s.T) for s in signals], axis=0)
    emp = np.mean([np.corrcoef(r.T) for r in runs], axis=0)
    return f, np.corrcoef(_upper(f), _upper(emp))[0, 1], _upper(f).mean()


def test_each_set_is_the_loss_simulation_with_its_key_scored_as_numpy_scores_it():
    net, loss, test, train = _setup()
    key = jax.random.key(5)
    result = nd.heldout_scores(loss, net, key=key, sets=3, test=test, train=train,
                               fcd_window=10, fcd_step=2)
    assert len(result.sets) == 3 and result.fcd_skipped is None
    keys = [key, jax.random.fold_in(key, 1), jax.random.fold_in(key, 2)]
    for i, (one, k) in enumerate(zip(result.sets, keys)):
        signals = np.asarray(loss.signals(net, k))  # [2, 80, N]
        assert signals.shape == (2, 80, N)
        f, r_test, mean_fc = _numpy_scores(signals, test)
        _, r_train, _ = _numpy_scores(signals, train)
        np.testing.assert_allclose(one["test"]["fc_r"], r_test, rtol=1e-9)
        np.testing.assert_allclose(one["test"]["mean_fc"], mean_fc, rtol=1e-9)
        np.testing.assert_allclose(one["train"]["fc_r"], r_train, rtol=1e-9)
        r_target = np.corrcoef(_upper(f), _upper(loss.target))[0, 1]
        np.testing.assert_allclose(one["fit"]["loss"], 1 - r_target, rtol=1e-9)
        ceiling = np.corrcoef(_upper(np.mean([np.corrcoef(r.T) for r in train], 0)),
                              _upper(np.mean([np.corrcoef(r.T) for r in test], 0)))[0, 1]
        np.testing.assert_allclose(one["test"]["fraction_of_ceiling"], r_test / ceiling,
                                   rtol=1e-9)
        assert 0.0 <= one["test"]["fcd_ks"] <= 1.0
        if i == 0:
            np.testing.assert_allclose(result.fc, f, rtol=1e-9, atol=1e-12)
    # Different keys give different noise: the sets differ.
    assert len({one["test"]["fc_r"] for one in result.sets}) == 3
    for part in ("fit", "test", "train"):
        for name, mean in result.mean[part].items():
            values = [one[part][name] for one in result.sets]
            np.testing.assert_allclose(mean, np.mean(values), rtol=1e-12)
            np.testing.assert_allclose(result.sd[part][name], np.std(values, ddof=1),
                                       rtol=1e-9, atol=1e-15)


def test_one_set_has_no_spread_and_its_noise_is_the_first_of_more_sets():
    net, loss, test, _ = _setup()
    key = jax.random.key(7)
    one = nd.heldout_scores(loss, net, key=key, sets=1, test=test)
    two = nd.heldout_scores(loss, net, key=key, sets=2, test=np.stack(test))  # runs as one array
    assert one.sd["test"]["fc_r"] == 0.0 and "train" not in one.sets[0]
    assert one.sets[0] == two.sets[0]


def test_fcd_left_out_when_the_runs_hold_fewer_than_three_windows():
    net, loss, test, train = _setup()
    seen = []
    result = nd.heldout_scores(loss, net, key=jax.random.key(1), sets=2, test=test,
                               train=train, fcd_window=30, on_set=lambda i, s: seen.append(i))
    assert "fcd_ks" not in result.sets[0]["test"]
    assert result.fcd_skipped == "runs of 80 TRs hold fewer than 3 FCD windows of 30 TRs"
    assert seen == [0, 1]


@pytest.mark.parametrize("kw, words", [
    ({"sets": 0}, "sets must be an integer >= 1"),
    ({"sets": True}, "sets must be an integer >= 1"),
    ({"train": [np.zeros((10, N))]}, "pass test="),
])
def test_bad_arguments_are_named(kw, words):
    net, loss, _, _ = _setup()
    with pytest.raises(ValueError, match=words):
        nd.heldout_scores(loss, net, key=jax.random.key(0), **kw)


def test_heldout_cautions():
    good = {"saturation": 0.05, "mean_fc": 0.39, "fc_r": 0.3}
    assert nd.heldout_cautions(good, target_mean_fc=0.3) == []  # every limit met
    bad = {"saturation": 0.256, "mean_fc": 0.42, "fc_r": 0.253}
    assert nd.heldout_cautions(bad, target_mean_fc=0.307) == [
        "26 % of the held-out FC pairs are above 0.9 (saturated)",
        "the held-out mean FC 0.420 is 0.113 from the fitted 0.307",
        "the held-out FC r is only 0.253"]
