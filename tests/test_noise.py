"""Noise: additive and multiplicative Wiener increments against independent references.

References: NumPy Euler-Maruyama and stochastic Heun loops driven by the documented
counter-based stream, ``jax.random.normal(jax.random.fold_in(key, step))``; the stationary
variance of the Ornstein-Uhlenbeck process, $\\sigma^2 \\tau / 2$ (Euler-Maruyama:
$\\sigma^2 \\Delta t / (1 - (1 - \\Delta t / \\tau)^2)$); the first two moments of
Euler-Maruyama geometric Brownian motion.
"""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import netdyn as nd


class _Decay(nd.AbstractDynamics):
    """dy/dt = -y / tau for every state variable (an Ornstein-Uhlenbeck process with
    additive noise, geometric Brownian motion with multiplicative noise); the coupling
    input is ignored."""

    tau: float = 10.0
    state_names: ClassVar[tuple[str, ...]] = ("u", "v")
    state_bounds: ClassVar[dict] = {}
    n_coupling_inputs: ClassVar[int] = 1
    coupled_variables: tuple[str, ...] = eqx.field(default=("u",), static=True)

    def vector_field(self, t, y, c):
        return -y / self.tau

    def initial_state(self, n_nodes):
        return jnp.ones((2, n_nodes))


def _run(noise, n_nodes, n_steps, dt, key, *, tau=10.0, y0=None, solver=None, t0=0.0,
         history=None):
    # Uncoupled nodes: one zero-weight edge keeps the graph small at 20,000 nodes.
    graph = nd.SparseGraph(np.array([0]), np.array([0]), np.array([0.0]), n_nodes=n_nodes)
    net = nd.Network(_Decay(tau=tau), nd.Linear(G=0.0), graph, noise=noise)
    if history is None and y0 is not None:
        history = jnp.asarray(y0)
    return nd.simulate(net, solver or nd.Euler(), t0=t0, t1=t0 + n_steps * dt, dt=dt,
                       monitors={"raw": nd.Raw()}, key=key, history=history)


def _draws(key, n_steps, shape, first=0):
    """The Gaussian draws of steps ``first .. first + n_steps - 1``, as documented."""
    return np.stack([
        np.asarray(jax.random.normal(jax.random.fold_in(key, i), shape, jnp.float64))
        for i in range(first, first + n_steps)
    ])


def _y0(n_nodes, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, (2, n_nodes))


# --- against NumPy loops on the same draws -------------------------------------------------


@pytest.mark.parametrize(
    "sigma",
    [0.3, np.array([0.3, 0.05]), np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]])],
    ids=["scalar", "per-state", "per-state-and-node"],
)
def test_additive_euler_maruyama_matches_numpy(sigma):
    n, steps, dt, tau, key = 4, 30, 0.5, 10.0, jax.random.key(3)
    y0 = _y0(n)
    got = np.asarray(_run(nd.AdditiveNoise(sigma=sigma), n, steps, dt, key, y0=y0)["raw"])
    z = _draws(key, steps, (2, n))
    s = np.asarray(sigma, float)
    s = np.broadcast_to(s[:, None] if s.ndim == 1 else s, (2, n))  # [states, nodes]
    y, expected = y0.copy(), []
    for k in range(steps):
        y = y + dt * (-y / tau) + s * np.sqrt(dt) * z[k]
        expected.append(y)
    np.testing.assert_allclose(got, np.array(expected), rtol=0, atol=1e-13)


def test_additive_apply_to_leaves_other_rows_deterministic():
    n, steps, dt, tau, key = 3, 25, 0.5, 10.0, jax.random.key(4)
    y0 = _y0(n, seed=1)
    got = np.asarray(
        _run(nd.AdditiveNoise(sigma=0.2, apply_to="v"), n, steps, dt, key, y0=y0)["raw"]
    )
    decay = (1 - dt / tau) ** np.arange(1, steps + 1)
    np.testing.assert_allclose(got[:, 0], decay[:, None] * y0[0], rtol=1e-13)
    # The noisy row draws [1, nodes] per step (only the rows the noise applies to).
    z = _draws(key, steps, (1, n))[:, 0]
    v, expected = y0[1].copy(), []
    for k in range(steps):
        v = v + dt * (-v / tau) + 0.2 * np.sqrt(dt) * z[k]
        expected.append(v)
    np.testing.assert_allclose(got[:, 1], np.array(expected), rtol=0, atol=1e-13)


def test_additive_stochastic_heun_matches_numpy():
    """TVB's HeunStochastic: the same increment in the predictor and the corrector."""
    n, steps, dt, tau, key = 3, 20, 0.5, 10.0, jax.random.key(5)
    y0 = _y0(n, seed=2)
    sigma = np.array([0.2, 0.4])
    got = _run(nd.AdditiveNoise(sigma=sigma), n, steps, dt, key, y0=y0, solver=nd.Heun())
    z = _draws(key, steps, (2, n))
    y, expected = y0.copy(), []
    for k in range(steps):
        dw = sigma[:, None] * np.sqrt(dt) * z[k]
        inter = y + dt * (-y / tau) + dw
        y = y + 0.5 * dt * (-y / tau - inter / tau) + dw
        expected.append(y)
    np.testing.assert_allclose(np.asarray(got["raw"]), np.array(expected), rtol=0, atol=1e-13)


def test_multiplicative_euler_maruyama_matches_numpy():
    """Itô: g(y) = sigma y at the start of the step."""
    n, steps, dt, tau, key = 4, 30, 0.5, 10.0, jax.random.key(6)
    y0 = _y0(n, seed=3)
    sigma = np.array([0.3, 0.1])
    got = _run(nd.MultiplicativeNoise(sigma=sigma), n, steps, dt, key, y0=y0)
    z = _draws(key, steps, (2, n))
    y, expected = y0.copy(), []
    for k in range(steps):
        y = y + dt * (-y / tau) + sigma[:, None] * y * np.sqrt(dt) * z[k]
        expected.append(y)
    np.testing.assert_allclose(np.asarray(got["raw"]), np.array(expected), rtol=0, atol=1e-13)


# --- statistics -------------------------------------------------------------------------------


def test_ornstein_uhlenbeck_stationary_variance():
    """dx = -x / tau dt + sigma dW: var = sigma^2 tau / 2, per state variable's sigma."""
    n, steps, dt, tau = 200, 6000, 0.2, 10.0
    sigma = np.array([0.5, 0.2])
    x = np.asarray(_run(nd.AdditiveNoise(sigma=sigma), n, steps, dt, jax.random.key(7),
                        tau=tau, y0=np.zeros((2, n)))["raw"])
    x = x[500:]  # (1 - dt / tau)^1000 ~ 2e-9 of the start remains
    a = 1 - dt / tau
    discrete = sigma**2 * dt / (1 - a**2)  # Euler-Maruyama's stationary variance
    continuous = sigma**2 * tau / 2
    np.testing.assert_allclose(discrete, continuous, rtol=dt / tau)  # 1 / (1 - dt / 2 tau)
    # ~11,000 effectively independent samples per row: a standard error of ~1.4 %.
    np.testing.assert_allclose(x.var(axis=(0, 2)), continuous, rtol=0.05)
    assert np.all(np.abs(x.mean(axis=(0, 2))) < 0.05 * np.sqrt(continuous))
    lag1 = np.mean(x[1:] * x[:-1], axis=(0, 2)) / x.var(axis=(0, 2))
    np.testing.assert_allclose(lag1, a, atol=0.01)
    # Nodes draw independent increments.
    assert abs(np.corrcoef(x[:, 0, 0], x[:, 0, 1])[0, 1]) < 0.1


def test_geometric_brownian_motion_moments():
    """dx = -x / tau dt + sigma x dW (Euler-Maruyama): E x_n = x_0 a^n and
    E x_n^2 = x_0^2 (a^2 + sigma^2 dt)^n with a = 1 - dt / tau."""
    n, steps, dt, tau, sigma = 20_000, 40, 0.5, 50.0, 0.1
    x = np.asarray(_run(nd.MultiplicativeNoise(sigma=sigma, apply_to="u"), n, steps, dt,
                        jax.random.key(8), tau=tau, y0=np.ones((2, n)))["raw"])[-1, 0]
    a = 1 - dt / tau
    # Standard errors ~0.3 % (mean) and ~0.8 % (second moment); the noise raises the
    # second moment by 23 % over the squared mean, and a Stratonovich reading would
    # raise the mean by 10 %.
    np.testing.assert_allclose(x.mean(), a**steps, rtol=0.015)
    np.testing.assert_allclose(np.mean(x**2), (a**2 + sigma**2 * dt) ** steps, rtol=0.03)


# --- the counter-based stream ------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_increment_is_fold_in_normal(impl):
    key = jax.random.key(11, impl=impl)
    y = jnp.asarray(_y0(5, seed=4))
    noise = nd.MultiplicativeNoise(sigma=jnp.array([0.3, 0.7]))
    # Compiled once (as in a simulation) for the three steps: op by op it cost seconds.
    increment = jax.jit(lambda key, step, y: noise.increment(key, step, y, 0.25, (0, 1)))
    for step in (0, 1, 12345):
        got = increment(key, jnp.asarray(step, jnp.int32), y)
        z = jax.random.normal(jax.random.fold_in(key, step), (2, 5), jnp.float64)
        expected = np.array([[0.3], [0.7]]) * np.asarray(y) * 0.5 * np.asarray(z)
        np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32])
@pytest.mark.parametrize("impl", ["threefry2x32", "rbg", None])
def test_draws_are_jax_random_bit_for_bit(impl, dtype, partitionable):
    """With sigma = 1 and dt = 1 the increment is the draw itself: compiled, it equals
    ``jax.random.normal(fold_in(key, step))`` bit for bit, for Threefry keys under either
    setting of ``jax_threefry_partitionable`` too (``impl=None``: the default, a raw key)."""
    key = jax.random.PRNGKey(11) if impl is None else jax.random.key(11, impl=impl)
    y = jnp.zeros((2, 5), dtype)
    noise = nd.AdditiveNoise(sigma=1.0)
    with jax.threefry_partitionable(partitionable):
        draw = jax.jit(lambda key, step: noise.increment(key, step, y, 1.0, (0, 1)))
        for step in (0, 1, 12345):
            step = jnp.asarray(step, jnp.int32)
            z = jax.random.normal(jax.random.fold_in(key, step), (2, 5), dtype)
            np.testing.assert_array_equal(draw(key, step), z)


def test_noise_depends_only_on_key_and_step():
    """Same key: bit-identical, whatever the remat blocks or a split into a continuation;
    another key: another trajectory."""
    n, steps, dt, key = 3, 60, 0.5, jax.random.key(12)
    noise = nd.AdditiveNoise(sigma=0.3)
    whole = _run(noise, n, steps, dt, key)
    again = _run(noise, n, steps, dt, key)
    blocks = _run(noise, n, steps, dt, key, solver=nd.Euler(remat=nd.Uniform(7)))
    first = _run(noise, n, 25, dt, key)
    second = _run(noise, n, steps - 25, dt, key, t0=25 * dt, history=first.final)
    other = _run(noise, n, steps, dt, jax.random.key(13))
    assert np.array_equal(whole["raw"], again["raw"])
    assert np.array_equal(whole["raw"], blocks["raw"])
    joined = np.concatenate([np.asarray(first["raw"]), np.asarray(second["raw"])])
    assert np.array_equal(np.asarray(whole["raw"]), joined)
    assert np.abs(np.asarray(whole["raw"]) - np.asarray(other["raw"])).max() > 0.1


# --- errors ------------------------------------------------------------------------------------


def test_sigma_shape_and_apply_to_errors():
    with pytest.raises(ValueError, match="sigma has shape"):
        _run(nd.AdditiveNoise(sigma=np.ones(3)), 4, 2, 0.5, jax.random.key(0))
    with pytest.raises(ValueError, match="sigma has shape"):
        _run(nd.MultiplicativeNoise(sigma=np.ones((2, 5))), 4, 2, 0.5, jax.random.key(0))
    with pytest.raises(ValueError, match="unknown state variable"):
        _run(nd.AdditiveNoise(sigma=0.1, apply_to="w"), 4, 2, 0.5, jax.random.key(0))
