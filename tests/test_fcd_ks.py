"""fcd_ks: the smoothed KS distance against NumPy loops, its limit (the KS statistic),
gradients, vmap, and use as a loss in nd.fit."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import netdyn as nd


def _ks_smooth_loop(a, b, h, points):
    lo, hi = min(min(a), min(b)), max(max(a), max(b))
    best = 0.0
    for k in range(points):
        z = lo + (hi - lo) * k / (points - 1)
        fa = sum(1.0 / (1.0 + math.exp(-(z - v) / h)) for v in a) / len(a)
        fb = sum(1.0 / (1.0 + math.exp(-(z - v) / h)) for v in b) / len(b)
        best = max(best, abs(fa - fb))
    return best


def _ks_exact_loop(a, b):
    """sup_z |F_a(z) - F_b(z)| of the empirical CDFs, checked at every pooled value."""
    best = 0.0
    for z in sorted(set(a) | set(b)):
        fa = sum(v <= z for v in a) / len(a)
        fb = sum(v <= z for v in b) / len(b)
        best = max(best, abs(fa - fb))
    return best


def test_matches_numpy_loop_with_unequal_counts():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.3, 0.2, 40), rng.normal(0.1, 0.3, 25)
    for h, points in ((0.02, 64), (0.1, 33)):
        got = float(nd.fcd_ks(a, b, bandwidth=h, points=points))
        assert got == pytest.approx(_ks_smooth_loop(list(a), list(b), h, points), rel=1e-12)


def test_small_bandwidth_gives_the_ks_statistic():
    # Distinct values on a 0.01 lattice: a grid of step 0.0005 and h = 1e-5 resolve
    # every gap between consecutive values.
    rng = np.random.default_rng(2)
    values = rng.permutation(np.arange(-100, 101)) / 100.0
    a, b = values[:60], values[60:130] * 0.7
    b = np.round(b * 100) / 100 + 0.005  # no ties with a
    got = float(nd.fcd_ks(a, b, bandwidth=1e-5, points=8001))
    exact = _ks_exact_loop(list(a), list(b))
    assert got == pytest.approx(exact, abs=1e-9)
    stats = pytest.importorskip("scipy.stats")
    assert exact == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-12)


def test_fcd_matrices_use_their_upper_triangles():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(120, 5))
    m1, m2 = nd.fcd(x, 30, 10), nd.fcd(x[::-1] + rng.normal(size=x.shape), 30, 10)
    got = float(nd.fcd_ks(m1, m2))
    iu = np.triu_indices(m1.shape[0], 1)
    want = _ks_smooth_loop(list(np.asarray(m1)[iu]), list(np.asarray(m2)[iu]), 0.02, 256)
    assert got == pytest.approx(want, rel=1e-10)
    assert float(nd.fcd_ks(m1, m1)) < 1e-15


def test_gradient_matches_finite_differences_and_reaches_many_values():
    rng = np.random.default_rng(4)
    a, b = rng.normal(0.3, 0.2, 30), rng.normal(0.2, 0.25, 30)
    f = jax.jit(lambda a: nd.fcd_ks(a, b, bandwidth=0.05, points=128))
    g = np.asarray(jax.grad(f)(jnp.asarray(a)))
    h = 1e-6
    for i in range(0, 30, 3):
        e = np.zeros(30)
        e[i] = h
        fd = (float(f(a + e)) - float(f(a - e))) / (2 * h)
        assert g[i] == pytest.approx(fd, rel=1e-4, abs=1e-8)
    assert np.sum(np.abs(g) > 1e-6) >= 5  # unlike the hard KS, many values get a gradient


def test_vmap_equals_a_loop():
    rng = np.random.default_rng(5)
    batch, b = rng.normal(size=(3, 20)), rng.normal(size=15)
    got = jax.vmap(lambda a: nd.fcd_ks(a, b))(jnp.asarray(batch))
    for i in range(3):
        assert float(got[i]) == pytest.approx(float(nd.fcd_ks(batch[i], b)), rel=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        nd.fcd_ks(np.ones(3), np.ones(3), bandwidth=0.0)
    with pytest.raises(ValueError, match="points must be a Python int >= 2"):
        nd.fcd_ks(np.ones(3), np.ones(3), points=1)
    with pytest.raises(ValueError, match="at least one value"):
        nd.fcd_ks(np.ones(0), np.ones(3))
    with pytest.raises(ValueError, match="square matrix"):
        nd.fcd_ks(np.ones((2, 3)), np.ones(3))


@pytest.mark.slow
def test_usable_as_a_loss_in_fit():
    # A 4-node Hopf network with noise; the loss compares the FCD distribution of its
    # (subsampled) activity with a target drawn at another coupling.
    n = 4
    w = np.ones((n, n)) - np.eye(n)
    solver = nd.Euler()

    def network(G):
        return nd.Network(
            dynamics=nd.SupHopf(a=-0.05, omega=0.06),
            coupling=nd.Linear(G=G),
            graph=nd.DenseGraph(w),
            noise=nd.AdditiveNoise(sigma=0.05),
        )

    def simulated_fcd(net, key):
        sol = nd.simulate(net, solver, t0=0.0, t1=1200.0, dt=1.0,
                          monitors={"x": nd.Raw(period=4.0, variables=("x",))}, key=key)
        return nd.fcd(sol["x"], 60, 20)

    target = simulated_fcd(network(jnp.asarray(0.2)), jax.random.key(7))

    def loss_fn(net, key):
        return nd.fcd_ks(simulated_fcd(net, key), target, bandwidth=0.05)

    key = jax.random.key(0)
    net = network(jnp.asarray(0.0))
    # One compiled program for the gradient and the values of the differences.
    value_and_grad = jax.jit(jax.value_and_grad(lambda G: loss_fn(network(G), key)))
    g = value_and_grad(jnp.asarray(0.0))[1]
    h = 1e-5
    fd = (value_and_grad(jnp.asarray(h))[0] - value_and_grad(jnp.asarray(-h))[0]) / (2 * h)
    assert float(g) == pytest.approx(float(fd), rel=1e-3, abs=1e-7) and float(g) != 0.0
    fitted, history = nd.fit(net, loss_fn, optax.adam(0.05), where=lambda m: m.coupling.G,
                             steps=2, key=key)
    assert len(history) == 2 and np.all(np.isfinite(history.loss))
    assert float(fitted.coupling.G) != 0.0
