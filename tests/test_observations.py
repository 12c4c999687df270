"""Observations: FC, FCD and the losses, against NumPy and finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import netdyn as nd


def _series(n_time=200, n_nodes=6, seed=0):
    rng = np.random.default_rng(seed)
    mixing = rng.standard_normal((n_nodes, n_nodes))
    return rng.standard_normal((n_time, n_nodes)) @ mixing + rng.uniform(-1, 1, n_nodes)


def _triu(m, k=1):
    return m[np.triu_indices(m.shape[0], k=k)]


def test_fc_equals_numpy_corrcoef():
    x = _series()
    expected = np.corrcoef(x.T)
    np.testing.assert_allclose(nd.fc(x), expected, rtol=0, atol=1e-13)
    # A monitor's [time, 1, nodes] output.
    np.testing.assert_allclose(nd.fc(x[:, None, :]), expected, rtol=0, atol=1e-13)
    assert np.all(np.diag(nd.fc(x)) == 1.0)
    z = nd.fc(x, fisher_z=True)
    np.testing.assert_allclose(_triu(np.asarray(z)), np.arctanh(_triu(expected)), atol=1e-12)
    np.testing.assert_array_equal(np.diag(z), 0.0)
    np.testing.assert_allclose(z, np.asarray(z).T)


def test_fc_batches_with_vmap():
    xs = np.stack([_series(seed=s) for s in range(3)])
    batched = jax.vmap(nd.fc)(xs)
    for x, got in zip(xs, batched):
        np.testing.assert_allclose(got, np.corrcoef(x.T), atol=1e-13)


def test_fc_shape_errors():
    with pytest.raises(ValueError, match=r"\[time, nodes\]"):
        nd.fc(np.zeros((10, 2, 3)))
    with pytest.raises(ValueError, match="at least 2 time samples"):
        nd.fc(np.zeros((1, 3)))


def _numpy_fcd(x, window, step):
    fcs = []
    for start in range(0, x.shape[0] - window + 1, step):
        fcs.append(_triu(np.corrcoef(x[start : start + window].T)))
    return np.corrcoef(np.array(fcs))


@pytest.mark.parametrize("window,step", [(40, 10), (25, 7), (190, 1)])
def test_fcd_equals_numpy_loop(window, step):
    x = _series(n_time=200, n_nodes=7, seed=3)
    got = nd.fcd(x, window, step)
    expected = _numpy_fcd(x, window, step)
    assert got.shape == expected.shape == ((200 - window) // step + 1,) * 2
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(nd.fcd_values(got), _triu(expected), atol=1e-12)
    np.testing.assert_allclose(nd.fcd_values(got, k=3), _triu(expected, k=3), atol=1e-12)


def test_fcd_errors():
    x = _series(n_time=50)
    with pytest.raises(ValueError, match="window"):
        nd.fcd(x, 60, 5)
    with pytest.raises(ValueError, match="step"):
        nd.fcd(x, 10, 0)
    with pytest.raises((TypeError, ValueError)):  # TypeError from the jaxtyping hook
        nd.fcd(x, 10.0, 5)


def test_losses_equal_numpy():
    a, b = np.corrcoef(_series(seed=1).T), np.corrcoef(_series(seed=2).T)
    ua, ub = _triu(a), _triu(b)
    np.testing.assert_allclose(nd.rmse(a, b), np.sqrt(np.mean((ua - ub) ** 2)), rtol=1e-14)
    r = np.corrcoef(ua, ub)[0, 1]
    np.testing.assert_allclose(nd.fc_correlation(a, b), r, rtol=1e-13)
    np.testing.assert_allclose(nd.one_minus_pearson(a, b), 1.0 - r, rtol=1e-13)
    # The diagonal and the lower triangle are ignored.
    a2 = a.copy()
    a2[np.tril_indices(6)] = 7.0
    np.testing.assert_allclose(nd.rmse(a2, b), nd.rmse(a, b), rtol=1e-15)
    assert nd.rmse(a, a) == 0.0 and np.isclose(nd.one_minus_pearson(a, a), 0.0, atol=1e-15)
    with pytest.raises(ValueError, match="same shape"):
        nd.rmse(a, b[:5, :5])


def _numpy_w2(a, b, n_levels=200_000):
    """2-Wasserstein distance by quadrature of the empirical quantile functions."""
    u = (np.arange(n_levels) + 0.5) / n_levels
    qa = np.quantile(a, u, method="inverted_cdf")
    qb = np.quantile(b, u, method="inverted_cdf")
    return np.sqrt(np.mean((qa - qb) ** 2))


def test_fcd_distance():
    rng = np.random.default_rng(4)
    a, b = rng.normal(0.3, 0.2, 45), rng.normal(0.5, 0.1, 45)
    # Equal counts: RMS difference of the sorted values.
    expected = np.sqrt(np.mean((np.sort(a) - np.sort(b)) ** 2))
    np.testing.assert_allclose(nd.fcd_distance(a, b), expected, rtol=1e-14)
    # Different counts: the quantile-function integral.
    c = rng.normal(0.4, 0.3, 28)
    np.testing.assert_allclose(nd.fcd_distance(a, c), _numpy_w2(a, c), rtol=1e-4)
    # FCD matrices: their upper triangles; identical distributions are at distance 0.
    x = _series(n_time=120, n_nodes=6, seed=5)
    m = np.asarray(nd.fcd(x, 30, 5))
    np.testing.assert_allclose(nd.fcd_distance(m, _triu(m)), 0.0, atol=1e-15)
    shuffled = rng.permutation(_triu(m))
    np.testing.assert_allclose(nd.fcd_distance(m, shuffled), 0.0, atol=1e-15)
    np.testing.assert_allclose(nd.fcd_distance(a, c), nd.fcd_distance(c, a), rtol=1e-14)


@pytest.mark.parametrize(
    "loss",
    [nd.rmse, nd.fc_correlation, nd.one_minus_pearson, nd.fcd_distance],
    ids=lambda f: f.__name__,
)
def test_loss_gradients_match_finite_differences(loss):
    x = _series(n_time=60, n_nodes=5, seed=6)
    target = np.corrcoef(_series(n_time=60, n_nodes=5, seed=7).T)

    def f(x):
        if loss is nd.fcd_distance:
            return loss(nd.fcd(x, 20, 5), nd.fcd(jnp.asarray(x[::-1]), 20, 5))
        return loss(nd.fc(x), target)

    check_grads(jax.jit(f), (jnp.asarray(x),), order=1, modes=["rev"], eps=1e-6, atol=1e-6,
                rtol=1e-6)


def test_constant_region_gives_no_nan():
    x = _series(n_time=80, n_nodes=5, seed=8)
    x[:, 2] = 0.37  # a constant region
    m = np.asarray(nd.fc(x))
    assert np.all(np.isfinite(m))
    np.testing.assert_array_equal(np.delete(m[2], 2), 0.0)
    np.testing.assert_array_equal(np.delete(m[:, 2], 2), 0.0)
    assert m[2, 2] == 1.0
    others = np.delete(np.arange(5), 2)
    np.testing.assert_allclose(m[np.ix_(others, others)], np.corrcoef(x[:, others].T),
                               atol=1e-13)
    assert np.all(np.isfinite(nd.fc(x, fisher_z=True)))
    assert np.all(np.isfinite(nd.fcd(x, 20, 5)))
    target = np.corrcoef(_series(n_time=80, n_nodes=5, seed=9).T)
    constant_fc = np.asarray(nd.fc(np.ones((10, 5))))
    np.testing.assert_array_equal(constant_fc, np.eye(5))

    def losses(x):
        fc = nd.fc(x)
        return (nd.rmse(fc, target) + nd.one_minus_pearson(fc, target)
                + nd.fcd_distance(nd.fcd(x, 20, 5), nd.fcd(x[::-1], 20, 5))
                + jnp.sum(nd.fc(x, fisher_z=True)))

    for data in (x, np.ones((80, 5))):
        value, grad = jax.jit(jax.value_and_grad(losses))(jnp.asarray(data))
        assert np.isfinite(value) and np.all(np.isfinite(grad))
    # Losses at their minimum (zero distance, constant inputs) have finite gradients.
    for loss in (nd.rmse, nd.one_minus_pearson, nd.fc_correlation, nd.fcd_distance):
        grad = jax.jit(jax.grad(loss))
        assert np.all(np.isfinite(grad(jnp.asarray(target), target))), loss.__name__
        assert np.all(np.isfinite(grad(jnp.ones((5, 5)), np.ones((5, 5))))), loss.__name__


def test_observations_jit():
    x = jnp.asarray(_series(n_time=60))
    target = np.corrcoef(_series(seed=1).T)

    def f(x):
        return nd.rmse(nd.fc(x), target) + nd.fcd_distance(nd.fcd(x, 30, 10), nd.fcd(x, 20, 10))

    np.testing.assert_allclose(jax.jit(f)(x), f(x), rtol=1e-13)


def test_a_non_finite_fc_never_scores_as_a_perfect_fit():
    # A diverged simulation gives a NaN FC: every score must say NaN, not 0 (a scan would
    # otherwise pick the diverged point as its best one).
    target = jnp.full((5, 5), 0.3) + 0.7 * jnp.eye(5)
    bad = target.at[1, 2].set(jnp.nan).at[2, 1].set(jnp.nan)
    assert np.isnan(nd.rmse(bad, target))
    assert np.isnan(nd.fcd_distance(jnp.full(10, jnp.nan), jnp.arange(10.0)))
    summary = nd.fc_summary(bad, target)
    assert all(np.isnan(float(v)) for v in summary.values()), summary
    # Finite inputs are unchanged: rmse 0 with gradient 0 at a perfect fit.
    assert float(nd.rmse(target, target)) == 0.0
    assert np.all(np.asarray(jax.grad(nd.rmse)(target, target)) == 0.0)
