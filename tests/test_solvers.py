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


def _order_conditions(tab):
    """The residuals of the Runge-Kutta order conditions up to order 4 (Butcher 2008,
    Numerical Methods for ODEs, table 310(I)), from the tableau as a full matrix."""
    s = len(tab.c)
    a = np.zeros((s, s))
    for i, row in enumerate(tab.a, start=1):
        a[i, : len(row)] = row
    b, c = np.asarray(tab.b) / tab.denominator, np.asarray(tab.c)
    return {
        1: [b.sum() - 1.0],
        2: [b @ c - 1 / 2],
        3: [b @ c**2 - 1 / 3, b @ a @ c - 1 / 6],
        4: [b @ c**3 - 1 / 4, (b * c) @ a @ c - 1 / 8, b @ a @ c**2 - 1 / 12,
            b @ a @ a @ c - 1 / 24],
    }, a, c


@pytest.mark.parametrize("solver", [nd.Euler, nd.Heun, nd.RK4])
def test_tableau_meets_the_order_conditions_of_its_order(solver):
    conditions, a, c = _order_conditions(solver.tableau)
    np.testing.assert_allclose(a.sum(axis=1), c, atol=1e-15)  # row sums are the nodes
    for order, residuals in conditions.items():
        if order <= solver.order:
            np.testing.assert_allclose(residuals, 0.0, atol=1e-15)
    if solver.order < 4:  # and not the next one: the declared order is the real one
        assert np.max(np.abs(conditions[solver.order + 1])) > 1e-3


def test_a_tableau_declared_by_a_user_integrates():
    # Ralston's second-order method (a21 = 2/3, b = (1/4, 3/4)): dy/dt = -y from 1 for
    # 1 ms, against exp(-1), with the error of a second-order method.
    class Ralston(nd.AbstractRungeKutta):
        remat: nd.AbstractRemat = nd.NoRemat()
        order: ClassVar[int] = 2
        tableau: ClassVar[nd.ButcherTableau] = nd.ButcherTableau(
            a=((2 / 3,),), b=(1.0, 3.0), c=(0.0, 2 / 3), denominator=4.0)

    errors = []
    for dt in (0.1, 0.05):
        y = jnp.ones((1, 1))  # [states, nodes]
        for n in range(round(1.0 / dt)):
            y = Ralston().step(lambda t, x: -x, jnp.asarray(n * dt), y, dt, None, lambda x: x)
        errors.append(abs(float(y[0, 0]) - np.exp(-1.0)))
    assert 3.6 < errors[0] / errors[1] < 4.4
