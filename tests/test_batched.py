"""``simulate(..., batch_last=True)`` under ``jax.vmap``: the batch-last time loop that
runs when the batch shares its graph, against a NumPy loop for every member (couplings,
delays), and against single runs (noise, monitors, stimuli, continuation, derivatives).
The single runs are themselves checked against NumPy oracles in ``test_coupling.py`` and
``test_simulate.py``.
"""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import toy_networks as toy
from coupling_oracle import oracle, relax1_np, relax2_np
from helpers import ALL_COUPLINGS, tree_allclose
from toy_networks import DT

import netdyn as nd

CLOSE = {"rtol": 1e-11, "atol": 1e-13}  # batched against single runs: summation order


N_STEPS = 30
# The parameter each delayed coupling is swept over.
SWEPT = {
    nd.DelayedLinear: "G",
    nd.DelayedDifference: "G",
    nd.DelayedSigmoidal: "cmax",
    nd.DelayedSigmoidalJansenRit: "G",
    nd.DelayedKuramotoSine: "G",
    nd.DelayedHyperbolicTangent: "sigma",
}


def runs_batch_last(fn, args, buffer_shape, batch: int) -> bool:
    """Whether ``fn(*args)`` runs the batch-last loop: its program holds the ring buffer
    ``[2 * rows, nodes, k, batch]``, where the plain ``vmap`` holds ``[batch, rows, nodes,
    k]``. ``buffer_shape``: ``[rows, nodes, k]``, a single run's ``sol.final.buffer``."""
    rows, nodes, k = buffer_shape
    return f"[{2 * rows},{nodes},{k},{batch}]" in str(jax.make_jaxpr(fn)(*args))


def _delayed_cases():
    # By default each delayed coupling once, on one of the four (interpolation, layout)
    # pairs in turn, so that every coupling and every pair runs the batch-last loop (its
    # buffer and gathers depend on the pair, not on the coupling); the whole product, 24
    # programs to compile, with ``pytest -m slow``. Every coupling on every pair in single
    # runs: test_coupling.py.
    pairs = [(interp, kind) for interp in ("nearest", "linear") for kind in ("dense", "sparse")]
    delayed = [c for c in ALL_COUPLINGS if isinstance(c, nd.AbstractDelayedCoupling)]
    for i, c in enumerate(delayed):
        for j, (interp, kind) in enumerate(pairs):
            marks = [] if j == i % len(pairs) else [pytest.mark.slow]
            yield pytest.param(c, interp, kind, id=f"{type(c).__name__}-{interp}-{kind}",
                               marks=marks)


@pytest.mark.parametrize("coupling,interpolation,kind", list(_delayed_cases()))
def test_every_member_matches_the_numpy_oracle(coupling, interpolation, kind):
    weights, delays = toy.connectome()
    n = weights.shape[0]
    coupling = dataclasses.replace(coupling, interpolation=interpolation)
    name = SWEPT[type(coupling)]
    values = float(getattr(coupling, name)) * np.linspace(0.6, 1.7, 8)
    jr = toy.is_jansen_rit(coupling)
    net = nd.Network(toy.Relax1() if jr else toy.Relax2(), coupling,
                     toy.graph(kind, weights, delays))
    history = jnp.asarray(toy.random_history(int(delays.max() / DT) + 4, n))

    def run(value):
        edited = eqx.tree_at(lambda m: getattr(m.coupling, name), net, value)
        return nd.simulate(edited, nd.Euler(), t0=0.0, t1=N_STEPS * DT, dt=DT,
                           monitors={"raw": nd.Raw()}, history=history, batch_last=True)

    batch = jax.vmap(run)
    sol = batch(jnp.asarray(values))
    got = np.asarray(sol["raw"])
    assert runs_batch_last(batch, (jnp.asarray(values),), sol.final.buffer.shape[1:],
                           len(values))
    for k, value in enumerate(values):
        member = dataclasses.replace(coupling, **{name: value})
        want = oracle(member, weights, delays, np.asarray(history), N_STEPS, DT,
                      relax1_np if jr else relax2_np)
        np.testing.assert_allclose(got[k], want, rtol=0, atol=1e-12)
    assert np.abs(got[0] - got[-1]).max() > 1e-3  # the swept parameter matters


def _rww(n=6, seed=0):
    return toy.rww(n, seed, sigma=0.01)


MONITORS = {
    "raw": nd.Raw(period=2.0),
    "tavg": nd.TemporalAverage(period=10.0),
    "hrf": nd.HrfBold(period=20.0, variables="S"),
    "bold": nd.Bold(period=20.0, variables="S"),
}


@pytest.mark.slow
def test_noise_monitors_and_continuation_match_single_runs(getkey):
    net = _rww()
    Gs = jnp.linspace(0.2, 0.9, 8)
    keys = jax.random.split(getkey(), 8)

    def run(G, key, t0, t1, history=None, batch_last=False):
        edited = eqx.tree_at(lambda m: m.coupling.G, net, G)
        return nd.simulate(edited, nd.Heun(), t0=t0, t1=t1, dt=0.5, monitors=MONITORS,
                           key=key, history=history, batch_last=batch_last)

    start = jax.vmap(lambda G, k: run(G, k, 0.0, 60.0, batch_last=True))
    more = jax.vmap(lambda G, k, h: run(G, k, 60.0, 120.0, h, batch_last=True))
    first = start(Gs, keys)
    second = more(Gs, keys, first.final)
    shape = first.final.buffer.shape[1:]
    assert runs_batch_last(start, (Gs, keys), shape, 8)
    # The continuation stays on the batch-last loop (one step counter for the batch).
    assert runs_batch_last(more, (Gs, keys, first.final), shape, 8)
    for b in range(8):
        one = run(Gs[b], keys[b], 0.0, 60.0)
        pick = lambda tree, b=b: jax.tree.map(lambda x: x[b], tree)  # noqa: E731
        tree_allclose(pick(first.ys), one.ys, **CLOSE)
        tree_allclose(pick(first.final), one.final, **CLOSE)
        two = run(Gs[b], keys[b], 60.0, 120.0, one.final)
        tree_allclose(pick(second.ys), two.ys, **CLOSE)
        tree_allclose(pick(second.final), two.final, **CLOSE)
    np.testing.assert_array_equal(second.final.step, np.full(8, 240))
    assert np.abs(first["raw"][0] - first["raw"][-1]).max() > 1e-3


@pytest.mark.slow
def test_batched_histories_stimuli_and_unroll_match_single_runs(getkey):
    net = _rww(n=5, seed=1)
    stim = nd.PulseTrain("S", amplitude=0.05, onset=5.0, width=3.0, period=10.0,
                         n_pulses=3, regions=(0, 2))
    net = eqx.tree_at(lambda m: m.stimulus, net, stim, is_leaf=lambda x: x is None)
    key = getkey()
    histories = jax.random.uniform(getkey(), (8, 1, 5), minval=0.1, maxval=0.6)
    amplitudes = jnp.linspace(0.0, 0.2, 8)
    solver = nd.RK4(remat=nd.NoRemat(unroll=3))

    def run(history, amplitude, batch_last=False):
        edited = eqx.tree_at(lambda m: m.stimulus.amplitude, net, amplitude)
        return nd.simulate(edited, solver, t0=0.0, t1=40.0, dt=0.5, key=key,
                           monitors={"raw": nd.Raw()}, history=history,
                           batch_last=batch_last)

    batch = jax.vmap(lambda h, a: run(h, a, batch_last=True))
    got = batch(histories, amplitudes)
    assert runs_batch_last(batch, (histories, amplitudes), got.final.buffer.shape[1:], 8)
    for b in range(8):
        tree_allclose(jax.tree.map(lambda x: x[b], got.ys),
                      run(histories[b], amplitudes[b]).ys, **CLOSE)


@pytest.mark.slow
def test_plain_vmap_by_default_and_for_a_batched_graph(getkey):
    net, key = _rww(n=5), getkey()
    scales = jnp.linspace(0.5, 2.0, 8)

    def run(network, batch_last):
        return nd.simulate(network, nd.Heun(), t0=0.0, t1=30.0, dt=1.0, key=key,
                           monitors={"raw": nd.Raw()}, batch_last=batch_last)

    def of_G(G, batch_last=False):
        return run(eqx.tree_at(lambda m: m.coupling.G, net, G), batch_last)

    def scaled(s, batch_last=False):
        return run(eqx.tree_at(lambda m: m.graph.weights, net, s * net.graph.weights),
                   batch_last)

    shape = of_G(scales[0]).final.buffer.shape
    plain = jax.vmap(of_G)
    weights = jax.vmap(lambda s: scaled(s, batch_last=True))  # the graph is batched
    small = jax.vmap(lambda G: of_G(G, batch_last=True))  # any size, the caller's choice
    assert not runs_batch_last(plain, (scales,), shape, 8)
    assert not runs_batch_last(weights, (scales,), shape, 8)
    assert runs_batch_last(small, (scales[:2],), shape, 2)
    got, by_weights, two = plain(scales), weights(scales), small(scales[:2])
    for b, s in enumerate(scales):
        np.testing.assert_allclose(got["raw"][b], of_G(s)["raw"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(by_weights["raw"][b], scaled(s)["raw"], rtol=1e-12,
                                   atol=1e-14)
    for b in range(2):
        tree_allclose(jax.tree.map(lambda x: x[b], two.ys), of_G(scales[b]).ys, **CLOSE)


def test_members_own_input_gains_run_batch_last(getkey):
    """A sweep of the graph's per-target ``input_gain`` (what ``nd.InputScaling`` fits)
    shares the weights and delays, so it runs batch-last; each member as its single run.
    A gain shared by the batch stays on the graph."""
    net, key = _rww(n=5), getkey()
    gains = jax.random.uniform(getkey(), (6, 5), minval=0.2, maxval=2.0)

    def run(gain, G=0.6, batch_last=False):
        edited = eqx.tree_at(lambda m: (m.graph.input_gain, m.coupling.G), net, (gain, G),
                             is_leaf=lambda x: x is None)
        return nd.simulate(edited, nd.Heun(), t0=0.0, t1=30.0, dt=0.5, key=key,
                           monitors={"raw": nd.Raw()}, batch_last=batch_last)

    shape = run(gains[0]).final.buffer.shape
    own = jax.vmap(lambda g: run(g, batch_last=True))
    shared = jax.vmap(lambda G: run(gains[0], G, batch_last=True))
    Gs = jnp.linspace(0.3, 0.9, 6)
    assert runs_batch_last(own, (gains,), shape, 6)
    assert runs_batch_last(shared, (Gs,), shape, 6)
    got, got_shared = own(gains), shared(Gs)
    for b in range(6):
        tree_allclose(jax.tree.map(lambda x: x[b], got.ys), run(gains[b]).ys, **CLOSE)
        tree_allclose(jax.tree.map(lambda x: x[b], got_shared.ys), run(gains[0], Gs[b]).ys,
                      **CLOSE)
    assert np.abs(got["raw"][0] - got["raw"][1]).max() > 1e-4  # the gains matter


@pytest.mark.parametrize("value", ["yes", 0, -3, 2.0])
def test_batch_last_is_a_bool_or_a_batch_size(value, no_type_hook):
    net = _rww(n=3)
    with pytest.raises(ValueError, match="batch_last must be True, False or a positive"):
        nd.simulate(net, nd.Heun(), t0=0.0, t1=2.0, dt=1.0, key=jax.random.key(0),
                    batch_last=value)


def test_nested_batches_merge_into_one_batch_last_loop(getkey):
    """A vmap over G of a vmap over noise keys runs one batch-last loop of G x keys (the
    ring ``[2 rows, nodes, k, 3 * 4]``), each member as its single run; with
    ``batch_last=B`` the merged batch decides: 12 members run batch-last from B = 12, the
    plain vmap at B = 13, and 4 keys alone (B = 8) the plain vmap."""
    net = _rww(n=5)
    Gs, keys = jnp.linspace(0.3, 0.9, 3), jax.random.split(getkey(), 4)

    def run(G, key, batch_last=False):
        edited = eqx.tree_at(lambda m: m.coupling.G, net, G)
        return nd.simulate(edited, nd.Heun(), t0=0.0, t1=30.0, dt=0.5, key=key,
                           monitors={"raw": nd.Raw()}, batch_last=batch_last)

    def population(B):
        return jax.vmap(lambda G: jax.vmap(lambda k: run(G, k, batch_last=B))(keys))

    shape = run(Gs[0], keys[0]).final.buffer.shape
    assert runs_batch_last(population(True), (Gs,), shape, 12)
    assert runs_batch_last(population(12), (Gs,), shape, 12)
    assert not runs_batch_last(population(13), (Gs,), shape, 12)
    keys_only = jax.vmap(lambda k: run(Gs[0], k, batch_last=8))
    assert not runs_batch_last(keys_only, (keys,), shape, 4)
    # The keys shared by every G: broadcast into the merged batch (outer members major).
    got = population(True)(Gs)
    for g in range(3):
        for b in range(4):
            tree_allclose(jax.tree.map(lambda x, g=g, b=b: x[g, b], got.ys),
                          run(Gs[g], keys[b]).ys, **CLOSE)


@pytest.mark.slow
def test_derivatives_of_and_under_a_batch(getkey):
    net, key = _rww(n=5), getkey()
    Gs = jnp.linspace(0.3, 0.9, 8)

    def run(G):
        edited = eqx.tree_at(lambda m: m.coupling.G, net, G)
        return nd.simulate(edited, nd.Heun(remat=nd.Uniform(10)), t0=0.0, t1=40.0, dt=1.0,
                           key=key, monitors={"tavg": nd.TemporalAverage(period=10.0)},
                           batch_last=True)

    def loss(G):
        return jnp.sum(run(G)["tavg"] ** 2)

    grad = jax.jit(jax.grad(loss))
    singles = np.array([float(grad(G)) for G in Gs])
    eps = 1e-6
    fd = np.array([(loss(G + eps) - loss(G - eps)) / (2 * eps) for G in Gs])
    np.testing.assert_allclose(singles, fd, rtol=1e-6)
    # Transformed under jax.jit: eagerly, each part would compile once more.
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(loss)))(Gs), singles, rtol=1e-12)
    # The derivative of a batched run: reverse and forward mode.
    scale = jax.jit(jax.grad(lambda s: jnp.sum(jax.vmap(loss)(s * Gs))))(1.0)
    np.testing.assert_allclose(scale, np.sum(singles * np.asarray(Gs)), rtol=1e-12)
    _, tangent = jax.jit(lambda t: jax.jvp(lambda s: jax.vmap(loss)(s * Gs), (1.0,), (t,)))(
        1.0)
    np.testing.assert_allclose(tangent, singles * np.asarray(Gs), rtol=1e-12)
    # The forward value of a batch that is not differentiated takes the batch-last loop,
    # its derivatives the plain one.
    shape = run(Gs[0]).final.buffer.shape
    assert runs_batch_last(jax.vmap(loss), (Gs,), shape, 8)
    assert not runs_batch_last(jax.vmap(jax.grad(loss)), (Gs,), shape, 8)
    np.testing.assert_allclose(jax.vmap(loss)(Gs), [loss(G) for G in Gs], rtol=1e-12)


@pytest.mark.slow  # ~20 s: three second-order programs to compile
def test_second_derivatives_of_single_and_batched_runs(getkey):
    net, key = _rww(n=4), getkey()
    Gs = jnp.linspace(0.3, 0.9, 8)

    def loss(G):
        edited = eqx.tree_at(lambda m: m.coupling.G, net, G)
        sol = nd.simulate(edited, nd.Heun(), t0=0.0, t1=30.0, dt=1.0, key=key,
                          monitors={"tavg": nd.TemporalAverage(period=10.0)},
                          batch_last=True)
        return jnp.sum(sol["tavg"] ** 2)

    eps = 1e-4
    curvature = jax.grad(jax.grad(loss))(0.5)
    fd = (jax.grad(loss)(0.5 + eps) - jax.grad(loss)(0.5 - eps)) / (2 * eps)
    np.testing.assert_allclose(curvature, fd, rtol=1e-6)
    np.testing.assert_allclose(jax.jacfwd(jax.grad(loss))(0.5), curvature, rtol=1e-12)
    batch = jax.grad(jax.grad(lambda s: jnp.sum(jax.vmap(loss)(s * Gs))))(1.0)
    single = jax.jit(jax.grad(jax.grad(lambda s, G: loss(s * G))))
    singles = [float(single(1.0, G)) for G in Gs]
    np.testing.assert_allclose(batch, np.sum(singles), rtol=1e-10)
