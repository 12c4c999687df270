"""Couplings and graphs against a NumPy loop oracle; the delay time-index convention.

The oracle is written from the equations with plain Python loops over steps, targets and
sources. Convention checked: step ``n -> n + 1`` uses ``x_j(t_n - d_ij)``, read at the
nearest step ``rint(d / dt)`` or interpolated linearly between the two neighbouring steps;
the target's own value ``x_i`` is the current one; history row ``-1`` is the state at
``t0``.
"""

import dataclasses
import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import ALL_COUPLINGS

import netdyn as nd

DT = 0.5
N_STEPS = 40


class _Relax2(nd.AbstractDynamics):
    """du/dt = -u + c_0, dv/dt = -3 v / 2 + c_1 (two coupling inputs)."""

    coupled_variables: tuple[str, ...] = eqx.field(default=("u", "v"), static=True)
    state_names: ClassVar[tuple[str, ...]] = ("u", "v")
    state_bounds: ClassVar[dict] = {}
    n_coupling_inputs: ClassVar[int] = 2

    def vector_field(self, t, y, c):
        return jnp.stack([-y[0] + c[0], -1.5 * y[1] + c[1]])

    def initial_state(self, n_nodes):
        return jnp.zeros((2, n_nodes))


class _Relax1(nd.AbstractDynamics):
    """du/dt = -u + c_0, dv/dt = -v / 2 (one coupling input, two coupled variables)."""

    coupled_variables: tuple[str, ...] = eqx.field(default=("u", "v"), static=True)
    state_names: ClassVar[tuple[str, ...]] = ("u", "v")
    state_bounds: ClassVar[dict] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t, y, c):
        return jnp.stack([-y[0] + c[0], -0.5 * y[1]])

    def initial_state(self, n_nodes):
        return jnp.zeros((2, n_nodes))


class _Integrator(nd.AbstractDynamics):
    """dx/dt = c_0."""

    coupled_variables: tuple[str, ...] = eqx.field(default=("x",), static=True)
    state_names: ClassVar[tuple[str, ...]] = ("x",)
    state_bounds: ClassVar[dict] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t, y, c):
        return c

    def initial_state(self, n_nodes):
        return jnp.zeros((1, n_nodes))


def _is_jansen_rit(c):
    return isinstance(c, (nd.SigmoidalJansenRit, nd.DelayedSigmoidalJansenRit))


def _connectome(n=6, seed=3):
    """Asymmetric weights with zeros; delays (ms) mixing 0, whole and fractional steps."""
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.05, 0.35, (n, n)) * (rng.random((n, n)) < 0.65)
    weights[0, 1], weights[1, 0] = 0.9, 0.0  # surely asymmetric
    steps = rng.integers(0, 7, (n, n)) + rng.choice([0.0, 0.1, 0.3, 0.7, 0.9], (n, n))
    edges = np.argwhere(weights > 0)[:3]
    steps[edges[:, 0], edges[:, 1]] = 0.0
    steps[0, 1] = 0.0  # a zero delay on an edge
    steps[2, 0] = 3.0  # a whole number of steps
    steps[1, 2] = 4.3
    delays = steps * DT
    return weights, delays


def _history(rows, n, seed=4):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (rows, 2, n))


# --- the oracle ---------------------------------------------------------------------------


def _sig(x):
    return 1.0 / (1.0 + math.exp(-x))


def _edge_term(c, xi, xj):
    """The per-edge term, for coupled-variable lists ``xi`` (target) and ``xj`` (source)."""
    if isinstance(c, (nd.Linear, nd.DelayedLinear, nd.Sigmoidal, nd.DelayedSigmoidal)):
        return list(xj)
    if isinstance(c, (nd.Difference, nd.DelayedDifference)):
        return [b - a for a, b in zip(xi, xj)]
    if isinstance(c, (nd.KuramotoSine, nd.DelayedKuramotoSine)):
        return [math.sin(b - a) for a, b in zip(xi, xj)]
    if _is_jansen_rit(c):
        cmin, cmax, m, r = (float(v) for v in (c.cmin, c.cmax, c.midpoint, c.r))
        return [cmin + (cmax - cmin) / (1.0 + math.exp(r * (m - (xj[0] - xj[1]))))]
    raise AssertionError(type(c))


def _node_term(c, s):
    """The per-node transform of the weighted sum ``s``."""
    if isinstance(c, (nd.Linear, nd.DelayedLinear)):
        return float(c.G) * s + float(c.b)
    if isinstance(c, (nd.Sigmoidal, nd.DelayedSigmoidal)):
        cmin, cmax, m, a, sigma = (float(v) for v in (c.cmin, c.cmax, c.midpoint, c.a, c.sigma))
        return cmin + (cmax - cmin) * _sig(a * (s - m) / sigma)
    return float(c.G) * s


def _oracle(c, weights, delays, history, n_steps, dt, vector_field):
    """Euler with coupling ``c`` from plain loops; returns states after steps 1..n_steps.

    ``delays`` is ``None`` for an instantaneous coupling; otherwise the interpolation is
    ``c.interpolation``.
    """
    n = weights.shape[0]
    traj = [np.array(h, dtype=float) for h in history]  # traj[-1] is the current state
    out = []
    for _ in range(n_steps):
        now = len(traj) - 1
        y = traj[now]

        def past(j, d):
            if d is None:
                return [y[0, j], y[1, j]]
            s = d / dt
            if c.interpolation == "nearest":
                row = traj[now - int(np.rint(s))]
                return [row[0, j], row[1, j]]
            D = math.floor(s)
            f = s - D
            a, b = traj[now - D], traj[now - D - 1]
            return [(1 - f) * a[0, j] + f * b[0, j], (1 - f) * a[1, j] + f * b[1, j]]

        rows = 1 if _is_jansen_rit(c) else 2
        coupling = np.zeros((rows, n))
        for i in range(n):
            sums = [0.0] * rows
            for j in range(n):
                d = None if delays is None else delays[i, j]
                term = _edge_term(c, [y[0, i], y[1, i]], past(j, d))
                for k in range(rows):
                    sums[k] += weights[i, j] * term[k]
            for k in range(rows):
                coupling[k, i] = _node_term(c, sums[k])
        y1 = y + dt * vector_field(y, coupling)
        traj.append(y1)
        out.append(y1)
    return np.stack(out)


def _relax2_np(y, c):
    return np.stack([-y[0] + c[0], -1.5 * y[1] + c[1]])


def _relax1_np(y, c):
    return np.stack([-y[0] + c[0], -0.5 * y[1]])


# --- the comparison ------------------------------------------------------------------------


def _cases():
    for c in ALL_COUPLINGS:
        name = type(c).__name__
        if isinstance(c, nd.AbstractDelayedCoupling):
            for interp in ("nearest", "linear"):
                for kind in ("dense", "sparse"):
                    yield pytest.param(c, interp, kind, id=f"{name}-{interp}-{kind}")
        else:
            for kind in ("dense", "sparse"):
                yield pytest.param(c, None, kind, id=f"{name}-{kind}")


@pytest.mark.parametrize("coupling,interpolation,kind", list(_cases()))
def test_matches_numpy_loop_oracle(coupling, interpolation, kind):
    weights, delays = _connectome()
    n = weights.shape[0]
    if interpolation is not None:
        coupling = dataclasses.replace(coupling, interpolation=interpolation)
    if kind == "dense":
        graph = nd.DelayGraph(weights, delays) if interpolation else nd.DenseGraph(weights)
    else:
        graph = (
            nd.SparseDelayGraph.from_dense(weights, delays)
            if interpolation
            else nd.SparseGraph.from_dense(weights)
        )
    jr = _is_jansen_rit(coupling)
    dynamics = _Relax1() if jr else _Relax2()
    history = _history(int(delays.max() / DT) + 4, n)
    sol = nd.simulate(
        nd.Network(dynamics, coupling, graph), nd.Euler(), t0=0.0, t1=N_STEPS * DT, dt=DT,
        monitors={"raw": nd.Raw()}, history=jnp.asarray(history),
    )
    expected = _oracle(
        coupling, weights, delays if interpolation else None, history, N_STEPS, DT,
        _relax1_np if jr else _relax2_np,
    )
    got = np.asarray(sol["raw"])
    assert got.shape == expected.shape
    assert np.abs(expected).max() < 10.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # The coupling matters: dropping it changes the trajectory by far more than 1e-12.
    free = _oracle(
        nd.DelayedLinear(G=0.0), weights, delays, history, N_STEPS, DT,
        _relax1_np if jr else _relax2_np,
    )
    assert np.abs(free - expected).max() > 1e-3


def test_delay_convention_by_hand():
    """One edge, integrator: x_1(t_{n+1}) = x_1(t_n) + dt * x_0(t_n - d)."""
    weights = np.array([[0.0, 0.0], [1.0, 0.0]])
    for d, expect in [(0.0, [10.0, 10.0]), (1.0, [8.0, 9.0]), (0.75, [8.5, 9.5])]:
        rows = np.zeros((5, 1, 2))
        rows[:, 0, 0] = [6.0, 7.0, 8.0, 9.0, 10.0]  # node 0: 10 at t0, 9 at t0 - dt, ...
        for interp in ("nearest", "linear"):
            if interp == "nearest" and d == 0.75:
                continue
            graph = nd.DelayGraph(weights, np.full((2, 2), d), max_delay=1.0)
            net = nd.Network(_Integrator(), nd.DelayedLinear(G=1.0, interpolation=interp), graph)
            sol = nd.simulate(net, nd.Euler(), t0=0.0, t1=1.0, dt=0.5,
                              monitors={"raw": nd.Raw()}, history=jnp.asarray(rows))
            # Node 0 gets no input; node 1 integrates the delayed node 0 with dt = 0.5.
            x1 = np.asarray(sol["raw"])[:, 0, 1]
            np.testing.assert_allclose(x1, np.cumsum(0.5 * np.array(expect)), atol=1e-14)


# --- orientation --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize(
    "coupling",
    [c for c in ALL_COUPLINGS if not _is_jansen_rit(c) and not isinstance(
        c, (nd.Sigmoidal, nd.DelayedSigmoidal))],
    ids=lambda c: type(c).__name__,
)
def test_directed_orientation(coupling, kind):
    """W[1, 0] = 1, W[0, 1] = 0: node 1 receives from node 0, node 0 receives nothing."""
    if isinstance(coupling, (nd.Linear, nd.DelayedLinear)):
        coupling = eqx.tree_at(lambda c: c.b, coupling, 0.0)
    weights = np.array([[0.0, 0.0], [1.0, 0.0]])
    delays = np.array([[0.0, 0.0], [1.0, 0.0]])
    delayed = isinstance(coupling, nd.AbstractDelayedCoupling)
    if kind == "dense":
        graph = nd.DelayGraph(weights, delays) if delayed else nd.DenseGraph(weights)
    else:
        graph = (
            nd.SparseDelayGraph.from_dense(weights, delays)
            if delayed
            else nd.SparseGraph.from_dense(weights)
        )
        assert graph.n_edges == 1
    y0 = jnp.array([[1.0, 0.2]])
    sol = nd.simulate(nd.Network(_Integrator(), coupling, graph), nd.Euler(), t0=0.0, t1=5.0,
                      dt=0.5, monitors={"raw": nd.Raw()}, history=y0)
    x = np.asarray(sol["raw"])[:, 0]
    np.testing.assert_array_equal(x[:, 0], 1.0)
    assert np.all(np.abs(x[:, 1] - 0.2) > 1e-3)


# --- gradients with respect to delays and conduction speed --------------------------------


def _grad_problem(interpolation, kind="dense"):
    weights, delays = _connectome(seed=11)
    # Fractional parts of d / dt in [0.1, 0.9]: central differences stay on one segment.
    delays = (np.floor(delays / DT) + 0.1 + 0.8 * np.random.default_rng(1).random(
        delays.shape)) * DT
    history = jnp.asarray(_history(int(delays.max() / DT) + 6, weights.shape[0], seed=2))
    coupling = nd.DelayedKuramotoSine(G=0.8, interpolation=interpolation)
    max_delay = float(delays.max()) + DT
    if kind == "dense":
        graph = nd.DelayGraph(weights, delays, max_delay=max_delay)
    else:
        graph = nd.SparseDelayGraph.from_dense(weights, delays, max_delay=max_delay)
    net = nd.Network(_Relax2(), coupling, graph)

    def loss(d):
        n = eqx.tree_at(lambda n: n.graph.delays, net, d)
        sol = nd.simulate(n, nd.Euler(), t0=0.0, t1=30 * DT, dt=DT,
                          monitors={"raw": nd.Raw()}, history=history)
        return jnp.sum(jnp.sin(sol["raw"]) ** 2)

    return loss, jnp.asarray(graph.delays)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_delay_gradient_linear_matches_finite_differences(kind):
    loss, d = _grad_problem("linear", kind)
    g = np.asarray(jax.grad(loss)(d))
    assert np.abs(g).max() > 1e-6
    rng = np.random.default_rng(0)
    h = 1e-5
    directions = [rng.normal(size=d.shape) for _ in range(2)]
    flat = np.zeros(d.size)
    flat[int(np.argmax(np.abs(g.ravel())))] = 1.0
    directions.append(flat.reshape(d.shape))
    for u in directions:
        fd = (loss(d + h * u) - loss(d - h * u)) / (2 * h)
        np.testing.assert_allclose(np.sum(g * u), fd, rtol=1e-6)


def test_delay_gradient_nearest_is_zero():
    loss, d = _grad_problem("nearest")
    g = np.asarray(jax.grad(loss)(d))
    assert np.all(g == 0.0)


@pytest.mark.parametrize(
    "graph_cls",
    [nd.DelayGraph, nd.SparseDelayGraph],
)
def test_speed_gradient_matches_finite_differences(graph_cls):
    weights, _ = _connectome(seed=11)
    lengths = np.random.default_rng(5).uniform(3.0, 12.0, weights.shape)
    history = jnp.asarray(_history(40, weights.shape[0], seed=2))

    def loss(speed):
        graph = graph_cls.from_lengths(weights, lengths, speed, max_delay=12.0)
        net = nd.Network(_Relax2(), nd.DelayedDifference(G=0.7, interpolation="linear"), graph)
        sol = nd.simulate(net, nd.Euler(), t0=0.0, t1=15.0, dt=DT,
                          monitors={"raw": nd.Raw()}, history=history)
        return jnp.sum(sol["raw"] ** 2)

    speed = 2.13
    g = float(jax.grad(loss)(speed))
    assert abs(g) > 1e-6
    h = 1e-6
    fd = float((loss(speed + h) - loss(speed - h)) / (2 * h))
    np.testing.assert_allclose(g, fd, rtol=1e-6)


# --- sparse graphs --------------------------------------------------------------------------


def test_sparse_weighted_sum_matches_loop():
    """Edge lists in any order, duplicates, nodes without in-edges, degrees of many sizes."""
    rng = np.random.default_rng(7)
    n, e = 23, 140
    targets = rng.integers(0, n - 3, e)  # the last three nodes receive nothing
    sources = rng.integers(0, n, e)
    weights = rng.random(e)
    graph = nd.SparseGraph(targets, sources, weights, n_nodes=n)
    x = rng.normal(size=(3, n))
    v = rng.normal(size=(2, graph.n_edges))

    @eqx.filter_jit
    def apply(graph, x, v):
        g = graph.validate()
        return g.weighted_sum(g.source_values(x)), g.weighted_sum(v)

    got_x, got_v = (np.asarray(a) for a in apply(graph, jnp.asarray(x), jnp.asarray(v)))
    expected = np.zeros((3, n))
    for t, s, w in zip(targets, sources, weights):
        expected[:, t] += w * x[:, s]
    np.testing.assert_allclose(got_x, expected, rtol=1e-13, atol=1e-13)
    expected = np.zeros((2, n))
    tg, wg = np.asarray(graph.targets), np.asarray(graph.weights)
    for k in range(graph.n_edges):
        expected[:, tg[k]] += wg[k] * v[:, k]
    np.testing.assert_allclose(got_v, expected, rtol=1e-13, atol=1e-13)


def test_sparse_from_dense_keeps_edges_above_threshold():
    weights, _ = _connectome()
    graph = nd.SparseGraph.from_dense(weights, threshold=0.5)
    dense = np.zeros_like(weights)
    dense[np.asarray(graph.targets), np.asarray(graph.sources)] = np.asarray(graph.weights)
    np.testing.assert_array_equal(dense, np.where(weights > 0.5, weights, 0.0))
    assert graph.n_edges == int(np.sum(weights > 0.5))


def _thresholded(n=30, density=0.2, seed=9):
    rng = np.random.default_rng(seed)
    w = rng.lognormal(0.0, 1.0, (n, n))
    np.fill_diagonal(w, 0.0)
    w = np.where(w > np.quantile(w, 1 - density), w, 0.0)
    w = 0.8 * w / w.sum(axis=1).max()  # G * row sums < 1: bounded trajectories
    lengths = rng.uniform(2.0, 30.0, (n, n))
    return w, lengths / 3.0


@pytest.mark.parametrize("jansen_rit", [False, True], ids=["others", "jansen_rit"])
def test_sparse_equals_dense(jansen_rit, getkey):
    """Every coupling at once (instantaneous ones on a delay graph too), Heun with noise,
    on a 30-node thresholded graph: the dense and sparse layouts agree."""
    weights, delays = _thresholded()
    couplings = tuple(
        dataclasses.replace(c, interpolation="linear")
        if isinstance(c, nd.AbstractDelayedCoupling) else c
        for c in ALL_COUPLINGS if _is_jansen_rit(c) == jansen_rit
    )
    dynamics = _Relax1() if jansen_rit else _Relax2()
    key = getkey()
    history = jnp.asarray(_history(45, 30, seed=1))

    def run(graph):
        net = nd.Network(dynamics, couplings, graph, noise=nd.AdditiveNoise(sigma=0.05))
        return nd.simulate(net, nd.Heun(), t0=0.0, t1=50.0, dt=DT, key=key, history=history,
                           monitors={"raw": nd.Raw()})["raw"]

    expected = run(nd.DelayGraph(weights, delays))
    assert np.abs(expected).max() < 10.0
    got = run(nd.SparseDelayGraph.from_dense(weights, delays))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_sparse_equals_dense_reduced_wong_wang(getkey):
    weights, delays = _thresholded(n=40, density=0.15, seed=2)
    key = getkey()

    def run(graph):
        net = nd.Network(nd.ReducedWongWang(w=0.5, I_o=0.32), nd.DelayedLinear(G=0.5), graph,
                         noise=nd.AdditiveNoise(sigma=0.00283))
        return nd.simulate(net, nd.Heun(), t0=0.0, t1=200.0, dt=1.0, key=key,
                           monitors={"raw": nd.Raw()})["raw"]

    np.testing.assert_allclose(
        run(nd.SparseDelayGraph.from_dense(weights, delays)),
        run(nd.DelayGraph(weights, delays)), rtol=0, atol=1e-12,
    )


def test_sparse_vmap_over_weights():
    weights, delays = _connectome()
    graph = nd.SparseDelayGraph.from_dense(weights, delays)
    net = nd.Network(_Relax2(), (nd.Difference(G=0.5), nd.DelayedKuramotoSine(G=0.5)), graph)
    history = jnp.asarray(_history(20, weights.shape[0]))
    scales = jnp.array([0.5, 1.0, 2.0])

    def run(scale):
        n = eqx.tree_at(lambda n: n.graph.weights, net, scale * graph.weights)
        return nd.simulate(n, nd.Heun(), t0=0.0, t1=10.0, dt=DT, history=history,
                           monitors={"raw": nd.Raw()})["raw"]

    batched = jax.vmap(run)(scales)
    looped = jnp.stack([run(s) for s in scales])
    np.testing.assert_allclose(batched, looped, rtol=0, atol=1e-13)
    assert np.abs(batched[0] - batched[2]).max() > 1e-3


# --- errors ---------------------------------------------------------------------------------


def test_sparse_errors():
    weights, delays = _connectome()
    with pytest.raises(ValueError, match="NaN"):
        nd.SparseGraph.from_dense(np.where(weights > 0, np.nan, 0.0))
    with pytest.raises(ValueError, match="targets"):
        nd.SparseGraph(np.array([0, 7]), np.array([1, 2]), np.ones(2), n_nodes=3)
    with pytest.raises(ValueError, match="shape"):
        nd.SparseGraph(np.array([0, 1]), np.array([1, 2, 0]), np.ones(2), n_nodes=3)
    graph = nd.SparseDelayGraph.from_dense(weights, delays)
    net = nd.Network(_Relax2(), nd.DelayedDifference(), graph)
    run = lambda n: nd.simulate(n, nd.Euler(), t0=0.0, t1=5.0, dt=DT)  # noqa: E731
    with pytest.raises(Exception, match="max_delay"):
        run(eqx.tree_at(lambda n: n.graph.delays, net, graph.delays + 100.0))
    with pytest.raises(Exception, match="negative"):
        run(eqx.tree_at(lambda n: n.graph.weights, net, -graph.weights))
    with pytest.raises(Exception, match="chunk layout"):
        run(eqx.tree_at(lambda n: n.graph.targets, net, graph.targets[::-1]))


def test_jansen_rit_coupling_needs_two_variables():
    weights, delays = _connectome()
    net = nd.Network(_Integrator(), nd.DelayedSigmoidalJansenRit(), nd.DelayGraph(weights, delays))
    with pytest.raises(ValueError, match="two coupled variables"):
        nd.simulate(net, nd.Euler(), t0=0.0, t1=5.0, dt=DT)
