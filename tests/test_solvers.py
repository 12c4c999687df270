"""Solvers: convergence order on a problem with a known solution; noise statistics."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import netdyn as nd


class ForcedDecay(nd.AbstractDynamics):
    """dx/dt = -rate x + forcing cos(t) + c."""

    rate: float = 1.0
    forcing: float = 1.0
    coupled_variables: tuple[str, ...] = eqx.field(default=("x",), static=True)
    state_names: ClassVar[tuple[str, ...]] = ("x",)
    state_bounds: ClassVar[dict] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t, y, c):
        return -self.rate * y + self.forcing * jnp.cos(t) + c

    def initial_state(self, n_nodes):
        return jnp.ones((1, n_nodes))


def _exact(weights, G, y0, t):
    """x' = A x + cos(t) 1 with A = -I + G W symmetric, solved in A's eigenbasis."""
    lam, V = np.linalg.eigh(-np.eye(len(weights)) + G * weights)
    forced = (-lam * np.cos(t) + np.sin(t) + lam * np.exp(lam * t)) / (lam**2 + 1)
    return V @ (np.exp(lam * t) * (V.T @ y0) + forced * (V.T @ np.ones(len(weights))))


@pytest.mark.parametrize(
    "solver, dts",
    [
        (nd.Euler(), [0.04, 0.02, 0.01, 0.005]),
        (nd.Heun(), [0.04, 0.02, 0.01, 0.005]),
        (nd.RK4(), [0.2, 0.1, 0.05, 0.025]),
    ],
)
def test_convergence_order(solver, dts):
    rng = np.random.default_rng(1)
    w = rng.random((4, 4))
    w = 0.5 * (w + w.T)
    G, T = 0.3, 2.0
    y0 = rng.uniform(-1, 1, 4)
    net = nd.Network(ForcedDecay(), nd.Linear(G=G), nd.DenseGraph(w))
    exact = _exact(w, G, y0, T)
    errors = []
    for dt in dts:
        sol = nd.simulate(net, solver, t0=0.0, t1=T, dt=dt, history=y0[None],
                          monitors={"x": nd.Raw(period=T)})
        errors.append(np.max(np.abs(np.asarray(sol["x"])[-1, 0] - exact)))
    order = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert abs(order - solver.order) < 0.3, (order, errors)


class Still(nd.AbstractDynamics):
    """Two states that do not move: dy/dt = 0."""

    coupled_variables: tuple[str, ...] = eqx.field(default=("a",), static=True)
    state_names: ClassVar[tuple[str, ...]] = ("a", "b")
    state_bounds: ClassVar[dict] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t, y, c):
        return jnp.zeros_like(y)

    def initial_state(self, n_nodes):
        return jnp.ones((2, n_nodes))


def _noisy_run(noise, solver, n_nodes=4000, steps=50, dt=0.1):
    net = nd.Network(Still(), nd.Linear(G=0.0), nd.DenseGraph(jnp.zeros((n_nodes, n_nodes))),
                     noise)
    sol = nd.simulate(net, solver, t0=0.0, t1=steps * dt, dt=dt, key=jax.random.key(3),
                      monitors={"y": nd.Raw(period=steps * dt)})
    return np.asarray(sol["y"])[-1]


@pytest.mark.parametrize("solver", [nd.Euler(), nd.Heun(), nd.RK4()])
def test_additive_noise_variance_and_rows(solver):
    sigma, steps, dt = 0.3, 50, 0.1
    y = _noisy_run(nd.AdditiveNoise(sigma, apply_to=("b",)), solver, steps=steps, dt=dt)
    assert np.array_equal(y[0], np.ones_like(y[0]))  # "a" gets no noise
    increments = y[1] - 1.0
    var = sigma**2 * steps * dt
    assert abs(np.mean(increments)) < 4 * np.sqrt(var / increments.size)
    assert abs(np.var(increments) / var - 1) < 0.1


def test_multiplicative_noise_moments():
    # Euler-Maruyama for dy = sigma y dW: E[y_n] = y_0 and E[y_n^2] = y_0^2 (1 + sigma^2 dt)^n.
    sigma, steps, dt = 0.2, 50, 0.1
    y = _noisy_run(nd.MultiplicativeNoise(sigma), nd.Euler(), steps=steps, dt=dt).ravel()
    second = (1 + sigma**2 * dt) ** steps
    assert abs(np.mean(y) - 1.0) < 4 * np.sqrt((second - 1) / y.size)
    assert abs(np.mean(y**2) / second - 1) < 0.05
