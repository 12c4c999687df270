"""Graphs: the dense and sparse layouts against NumPy, the orientation ``W[target, source]``,
the delay time-index convention, gradients with respect to delays and conduction speed.

Convention checked: step ``n -> n + 1`` uses ``x_j(t_n - d_ij)``, read at the nearest step
``rint(d / dt)`` or interpolated linearly between the two neighbouring steps; history row
``-1`` is the state at ``t0``.
"""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import ALL_COUPLINGS
from toy_networks import (
    DT,
    Integrator,
    Relax1,
    Relax2,
    connectome,
    graph as toy_graph,
    is_jansen_rit,
    random_history,
)

import netdyn as nd

# --- the layouts against NumPy ------------------------------------------------------------


def _graphs(weights, delays):
    return {
        "DenseGraph": nd.DenseGraph(weights),
        "DelayGraph": nd.DelayGraph(weights, delays),
        "SparseGraph": nd.SparseGraph.from_dense(weights),
        "SparseDelayGraph": nd.SparseDelayGraph.from_dense(weights, delays),
    }


@pytest.mark.parametrize("name", ["DenseGraph", "DelayGraph", "SparseGraph", "SparseDelayGraph"])
def test_weighted_sums_match_numpy(name):
    """sum_j W_ij x_j, x_i sum_j W_ij and sum_j W_ij (x_j - x_i), in either layout."""
    weights, delays = connectome(n=7, seed=8)
    graph = _graphs(weights, delays)[name]
    layout = nd.AbstractSparseGraph if name.startswith("Sparse") else nd.AbstractDenseGraph
    assert isinstance(graph, layout) and graph.n_nodes == 7
    if isinstance(graph, nd.AbstractSparseGraph):
        assert graph.n_edges == np.count_nonzero(weights)
    x = np.random.default_rng(2).normal(size=(2, 7))
    source, target = graph.source_values(jnp.asarray(x)), graph.target_values(jnp.asarray(x))
    np.testing.assert_allclose(graph.weighted_sum(source), x @ weights.T, rtol=1e-13)
    np.testing.assert_allclose(graph.weighted_sum(target), x * weights.sum(axis=1), rtol=1e-13)
    np.testing.assert_allclose(
        graph.weighted_sum(source - target), x @ weights.T - x * weights.sum(axis=1),
        rtol=1e-12, atol=1e-14,
    )


@pytest.mark.parametrize("interpolation", ["nearest", "linear"])
@pytest.mark.parametrize("name", ["DelayGraph", "SparseDelayGraph"])
def test_delayed_reads_match_numpy(name, interpolation):
    """x_j(t - d_ij) from a [rows, nodes, k] buffer whose row -1 is t: row -1 - rint(d / dt),
    or rows -1 - D and -2 - D weighted 1 - f and f for d / dt = D + f."""
    weights, delays = connectome(n=6, seed=5)
    graph = _graphs(weights, delays)[name]
    rows = int(np.max(delays) / DT) + 2
    buffer = np.random.default_rng(3).normal(size=(rows, 6, 2))
    got = np.asarray(graph.delayed_source_values(
        jnp.asarray(buffer), graph.delay_index(DT, rows, interpolation)))
    expected = np.zeros((2, 6, 6))
    for i in range(6):
        for j in range(6):
            steps = delays[i, j] / DT
            if interpolation == "nearest":
                expected[:, i, j] = buffer[rows - 1 - int(np.rint(steps)), j]
            else:
                D, f = int(np.floor(steps)), steps - np.floor(steps)
                expected[:, i, j] = ((1 - f) * buffer[rows - 1 - D, j]
                                     + f * buffer[rows - 2 - D, j])
    if isinstance(graph, nd.AbstractSparseGraph):
        expected = expected[:, np.asarray(graph.targets), np.asarray(graph.sources)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("graph_cls", [nd.DelayGraph, nd.SparseDelayGraph])
def test_from_lengths_divides_by_speed(graph_cls):
    weights, _ = connectome(seed=6)
    lengths = np.random.default_rng(4).uniform(1.0, 40.0, weights.shape)
    lengths[tuple(np.argwhere(weights == 0)[0])] = 100.0  # the longest tract: no edge
    graph = graph_cls.from_lengths(weights, lengths, 2.5)
    delays = lengths / 2.5
    if graph_cls is nd.DelayGraph:
        np.testing.assert_array_equal(graph.delays, delays)
        assert graph.max_delay == delays.max()  # every entry, zero weights too (as TVB)
    else:
        kept = delays[np.asarray(graph.targets), np.asarray(graph.sources)]
        np.testing.assert_array_equal(graph.delays, kept)
        assert graph.max_delay == kept.max() < delays.max()  # the kept edges only
    for speed in (0.0, -1.0):
        with pytest.raises(ValueError, match="speed must be positive"):
            graph_cls.from_lengths(weights, lengths, speed)


# --- the delay convention in a simulation ----------------------------------------------


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
            net = nd.Network(Integrator(), nd.DelayedLinear(G=1.0, interpolation=interp), graph)
            sol = nd.simulate(net, nd.Euler(), t0=0.0, t1=1.0, dt=0.5,
                              monitors={"raw": nd.Raw()}, history=jnp.asarray(rows))
            # Node 0 gets no input; node 1 integrates the delayed node 0 with dt = 0.5.
            x1 = np.asarray(sol["raw"])[:, 0, 1]
            np.testing.assert_allclose(x1, np.cumsum(0.5 * np.array(expect)), atol=1e-14)


# --- orientation --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize(
    "coupling",
    [c for c in ALL_COUPLINGS if not is_jansen_rit(c) and not isinstance(
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
    graph = toy_graph(kind, weights, delays if delayed else None)
    if kind == "sparse":
        assert graph.n_edges == 1
    y0 = jnp.array([[1.0, 0.2]])
    sol = nd.simulate(nd.Network(Integrator(), coupling, graph), nd.Euler(), t0=0.0, t1=5.0,
                      dt=0.5, monitors={"raw": nd.Raw()}, history=y0)
    x = np.asarray(sol["raw"])[:, 0]
    np.testing.assert_array_equal(x[:, 0], 1.0)
    assert np.all(np.abs(x[:, 1] - 0.2) > 1e-3)


# --- gradients with respect to delays and conduction speed --------------------------------


def _grad_problem(interpolation, kind="dense"):
    weights, delays = connectome(seed=11)
    # Fractional parts of d / dt in [0.1, 0.9]: central differences stay on one segment.
    delays = (np.floor(delays / DT) + 0.1 + 0.8 * np.random.default_rng(1).random(
        delays.shape)) * DT
    history = jnp.asarray(random_history(int(delays.max() / DT) + 6, weights.shape[0], seed=2))
    coupling = nd.DelayedKuramotoSine(G=0.8, interpolation=interpolation)
    max_delay = float(delays.max()) + DT
    if kind == "dense":
        graph = nd.DelayGraph(weights, delays, max_delay=max_delay)
    else:
        graph = nd.SparseDelayGraph.from_dense(weights, delays, max_delay=max_delay)
    net = nd.Network(Relax2(), coupling, graph)

    def loss(d):
        n = eqx.tree_at(lambda n: n.graph.delays, net, d)
        sol = nd.simulate(n, nd.Euler(), t0=0.0, t1=30 * DT, dt=DT,
                          monitors={"raw": nd.Raw()}, history=history)
        return jnp.sum(jnp.sin(sol["raw"]) ** 2)

    return loss, jnp.asarray(graph.delays)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_delay_gradient_linear_matches_finite_differences(kind):
    loss, d = _grad_problem("linear", kind)
    # One compiled program for the gradient and the values of the differences.
    value_and_grad = jax.jit(jax.value_and_grad(loss))
    g = np.asarray(value_and_grad(d)[1])
    assert np.abs(g).max() > 1e-6
    rng = np.random.default_rng(0)
    h = 1e-5
    directions = [rng.normal(size=d.shape) for _ in range(2)]
    flat = np.zeros(d.size)
    flat[int(np.argmax(np.abs(g.ravel())))] = 1.0
    directions.append(flat.reshape(d.shape))
    for u in directions:
        fd = (value_and_grad(d + h * u)[0] - value_and_grad(d - h * u)[0]) / (2 * h)
        np.testing.assert_allclose(np.sum(g * u), fd, rtol=1e-6)


def test_delay_gradient_nearest_is_zero():
    loss, d = _grad_problem("nearest")
    with pytest.warns(nd.NearestDelayGradientWarning):  # zero, and said so
        g = np.asarray(jax.grad(loss)(d))
    assert np.all(g == 0.0)


@pytest.mark.parametrize(
    "graph_cls",
    [nd.DelayGraph, nd.SparseDelayGraph],
)
def test_speed_gradient_matches_finite_differences(graph_cls):
    weights, _ = connectome(seed=11)
    lengths = np.random.default_rng(5).uniform(3.0, 12.0, weights.shape)
    history = jnp.asarray(random_history(40, weights.shape[0], seed=2))

    def loss(speed):
        graph = graph_cls.from_lengths(weights, lengths, speed, max_delay=12.0)
        net = nd.Network(Relax2(), nd.DelayedDifference(G=0.7, interpolation="linear"), graph)
        sol = nd.simulate(net, nd.Euler(), t0=0.0, t1=15.0, dt=DT,
                          monitors={"raw": nd.Raw()}, history=history)
        return jnp.sum(sol["raw"] ** 2)

    # One compiled program for the gradient and the values of the differences.
    value_and_grad = jax.jit(jax.value_and_grad(loss))
    speed = 2.13
    g = float(value_and_grad(jnp.asarray(speed))[1])
    assert abs(g) > 1e-6
    h = 1e-6
    fd = float((value_and_grad(jnp.asarray(speed + h))[0]
                - value_and_grad(jnp.asarray(speed - h))[0]) / (2 * h))
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
    weights, _ = connectome()
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
        for c in ALL_COUPLINGS if is_jansen_rit(c) == jansen_rit
    )
    dynamics = Relax1() if jansen_rit else Relax2()
    key = getkey()
    history = jnp.asarray(random_history(45, 30, seed=1))

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
    weights, delays = connectome()
    graph = nd.SparseDelayGraph.from_dense(weights, delays)
    net = nd.Network(Relax2(), (nd.Difference(G=0.5), nd.DelayedKuramotoSine(G=0.5)), graph)
    history = jnp.asarray(random_history(20, weights.shape[0]))
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
    weights, delays = connectome()
    with pytest.raises(ValueError, match="NaN"):
        nd.SparseGraph.from_dense(np.where(weights > 0, np.nan, 0.0))
    with pytest.raises(ValueError, match="targets"):
        nd.SparseGraph(np.array([0, 7]), np.array([1, 2]), np.ones(2), n_nodes=3)
    with pytest.raises(ValueError, match="shape"):
        nd.SparseGraph(np.array([0, 1]), np.array([1, 2, 0]), np.ones(2), n_nodes=3)
    graph = nd.SparseDelayGraph.from_dense(weights, delays)
    net = nd.Network(Relax2(), nd.DelayedDifference(), graph)
    run = lambda n: nd.simulate(n, nd.Euler(), t0=0.0, t1=5.0, dt=DT)  # noqa: E731
    with pytest.raises(Exception, match="max_delay"):
        run(eqx.tree_at(lambda n: n.graph.delays, net, graph.delays + 100.0))
    with pytest.raises(Exception, match="negative"):
        run(eqx.tree_at(lambda n: n.graph.weights, net, -graph.weights))
    with pytest.raises(Exception, match="chunk layout"):
        run(eqx.tree_at(lambda n: n.graph.targets, net, graph.targets[::-1]))
