"""No NaN or inf scores as a good fit: every public metric and loss of netdyn that scores a
signal or an FC is fed signals, FCs and FCD values with NaN or +-inf at random places (a
seeded loop), and must not return a finite score as good as, or better than, the score of
the same input before it was spoiled. NaN, an infinity on the losing side, or a
``ValueError`` that refuses the input are all honest answers."""

import math
import zlib
from unittest import mock

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_networks import hopf

import netdyn as nd

TRIALS = 12
NODES, TIME, WINDOW, STEP = 5, 60, 20, 5
BAD = (np.nan, np.inf, -np.inf)


def _signal(rng, time=TIME):
    """A correlated, finite ``[time, nodes]`` signal."""
    return rng.normal(size=(time, NODES)) @ rng.normal(size=(NODES, NODES))


def _spoil_signal(rng, x):
    """``x`` with 1 to 4 entries set to NaN or +-inf, at random samples and nodes, or (one
    time in four) every entry from a random sample on, as a diverged simulation ends."""
    x = x.copy()
    if rng.random() < 0.25:
        x[rng.integers(x.shape[0]):] = rng.choice(BAD)
        return x
    for _ in range(rng.integers(1, 5)):
        x[rng.integers(x.shape[0]), rng.integers(x.shape[1])] = rng.choice(BAD)
    return x


def _spoil_fc(rng, f):
    """A square ``f`` with 1 to 3 off-diagonal pairs (both triangles, as in the FC of a
    diverged signal) set to NaN or +-inf; a vector with 1 to 3 values set."""
    f = f.copy()
    for _ in range(rng.integers(1, 4)):
        value = rng.choice(BAD)
        if f.ndim == 1:
            f[rng.integers(f.size)] = value
            continue
        i, j = rng.choice(f.shape[0], size=2, replace=False)
        f[i, j] = f[j, i] = value
    return f


def _fcd_vals(x):
    return np.asarray(nd.fcd_values(nd.fcd(x, WINDOW, STEP)))


def _loss(metric="rmse", **kw):
    target = np.corrcoef(_signal(np.random.default_rng(99)).T)
    return nd.FcLoss(target, nd.Heun(), nd.Raw(period=1.0), duration=float(TIME),
                     metric=metric, **kw)


# Scores of two FCs (or FCD values), and whether lower is better.
FC_SCORES = {
    "rmse": (nd.rmse, True),
    "fc_correlation": (nd.fc_correlation, False),
    "one_minus_pearson": (nd.one_minus_pearson, True),
    "fcd_distance": (nd.fcd_distance, True),
    "fcd_ks": (nd.fcd_ks, True),
    "ks_statistic": (nd.ks_statistic, True),
    "fc_summary fc_r": (lambda a, b: nd.fc_summary(a, b)["fc_r"], False),
    "fc_summary rmse": (lambda a, b: nd.fc_summary(a, b)["rmse"], True),
}
# FcLoss.loss_of_fc: the target is fixed (a non-finite one is refused at construction).
LOSS_METRICS = ("rmse", "1-r", "1-r+mean", "1-r+huber")


def _whole_loss(x, fcd_metric):
    """``FcLoss(...)(network, key)`` with its runs replaced by ``x``: the FC term and an
    FCD term, as the loss computes them from the monitored signal."""
    loss = _loss("1-r+huber", fcd_target=_fcd_vals(_signal(np.random.default_rng(98))),
                 fcd_window=(WINDOW, STEP), fcd_metric=fcd_metric)
    net = nd.Network(dynamics=nd.SupHopf(), coupling=nd.Linear(G=0.0),
                     graph=nd.DenseGraph(np.zeros((NODES, NODES))))
    with mock.patch.object(nd.FcLoss, "signals", lambda self, network, key: x[None]):
        return loss(net, None)[0]


# Scores of a simulated signal x against a signal y, and whether lower is better.
SIGNAL_SCORES = {
    "fc then rmse": (lambda x, y: nd.rmse(nd.fc(x), nd.fc(y)), True),
    "fc then fc_correlation": (lambda x, y: nd.fc_correlation(nd.fc(x), nd.fc(y)), False),
    "fcd then fcd_distance": (lambda x, y: nd.fcd_distance(_fcd_vals(x), _fcd_vals(y)), True),
    "fcd then fcd_ks": (lambda x, y: nd.fcd_ks(_fcd_vals(x), _fcd_vals(y)), True),
    "score_runs fc_r": (lambda x, y: nd.score_runs(x, y)["fc_r"], False),
    "score_runs fcd_ks": (lambda x, y: nd.score_runs(x, y, fcd_window=WINDOW,
                                                     fcd_step=STEP)["fcd_ks"], True),
    "noise_ceiling": (lambda x, y: nd.noise_ceiling(x, y), False),
}


def _honest(spoiled, clean: float, lower_is_better: bool) -> bool:
    """Whether a score of spoiled input is honest: NaN, an infinity on the losing side,
    or a finite score strictly worse than the clean input's."""
    if isinstance(spoiled, ValueError):
        return True
    s = float(spoiled)
    sign = 1.0 if lower_is_better else -1.0
    if math.isnan(s):
        return True
    return sign * s > sign * clean


def _score(fn, *args):
    try:
        return fn(*args)
    except ValueError as e:  # refused for its NaN or infinite values: honest
        assert "NaN" in str(e) or "finite" in str(e), e
        return e


def _check(name, fn, lower_is_better, clean_args, spoiled_args):
    clean = float(fn(*clean_args))
    assert math.isfinite(clean), (name, clean)
    spoiled = _score(fn, *spoiled_args)
    assert _honest(spoiled, clean, lower_is_better), (
        f"{name}: spoiled input scored {spoiled}, clean {clean}")


@pytest.mark.parametrize("name", list(FC_SCORES))
def test_fc_scores_of_non_finite_input(name):
    fn, lower = FC_SCORES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for trial in range(TRIALS):
        a = np.corrcoef(_signal(rng).T)
        # Half the trials compare a with itself: the clean score is then the best there is.
        b = a.copy() if trial % 2 else np.corrcoef(_signal(rng).T)
        if name == "ks_statistic":  # values, not matrices
            a, b = a[np.triu_indices(NODES, 1)], b[np.triu_indices(NODES, 1)]
        spoiled = (_spoil_fc(rng, a), b) if rng.random() < 0.7 else (a, _spoil_fc(rng, b))
        _check(name, fn, lower, (a, b), spoiled)


@pytest.mark.parametrize("metric", LOSS_METRICS)
def test_fc_loss_of_a_non_finite_fc(metric):
    loss = _loss(metric)
    target = np.asarray(loss.target)
    rng = np.random.default_rng(7)
    for trial in range(TRIALS):
        f = target.copy() if trial % 2 else np.corrcoef(_signal(rng).T)
        _check(metric, lambda g: loss.loss_of_fc(jnp.asarray(g))[0], True, (f,),
               (_spoil_fc(rng, f),))


@pytest.mark.parametrize("name", list(SIGNAL_SCORES))
def test_signal_scores_of_non_finite_signals(name):
    fn, lower = SIGNAL_SCORES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for trial in range(TRIALS // 2):
        x = _signal(rng)
        y = x.copy() if trial % 2 else _signal(rng)
        spoiled = (_spoil_signal(rng, x), y) if rng.random() < 0.7 else (
            x, _spoil_signal(rng, y))
        _check(name, fn, lower, (x, y), spoiled)


@pytest.mark.parametrize("fcd_metric", ["w2", "ks"])
def test_whole_fc_loss_of_a_non_finite_signal(fcd_metric):
    rng = np.random.default_rng(11)
    for _ in range(TRIALS // 2):
        x = _signal(rng)
        _check(f"FcLoss, {fcd_metric} FCD term", lambda s: _whole_loss(s, fcd_metric), True,
               (x,), (_spoil_signal(rng, x),))


@pytest.mark.slow
def test_a_burn_in_that_diverges_gives_a_nan_loss_not_an_error(getkey):
    # Stuart-Landau nodes have no bound: at G = 50 the delayed diffusive coupling drives
    # them to inf within the burn-in. A fit must see a non-finite loss (and say it
    # diverged), not a runtime error about the state the measured run starts from.
    net = hopf(4, 0, G=50.0, a=-0.05, omega=0.06, sigma=0.01, max_delay=5.0)
    loss = nd.FcLoss(np.eye(4), nd.Heun(), nd.Raw(period=5.0, variables=("x",)),
                     duration=200.0, burn_in=400.0)

    def at(G):
        return loss(eqx.tree_at(lambda n: n.coupling.G, net, G), getkey())[0]

    value, grad = jax.value_and_grad(at)(jnp.asarray(50.0))
    assert np.isnan(float(value)) and not np.isfinite(float(grad))
    assert np.isfinite(float(at(jnp.asarray(0.01))))  # the same run at a calm coupling
