"""Remat strategies save memory, as XLA's memory analysis of the compiled gradient says,
and ``Auto`` / ``choose_remat`` pick the cheapest strategy that fits a budget."""

import functools
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_networks import REMAT_NODES, remat_network

import netdyn as nd

DT = 1.0  # ms


def _run_g(remat, G, t1=2000.0, run=nd.simulate, tiny=False):
    """``run`` (``simulate``, or ``choose_remat``: same arguments) with coupling ``G``, on
    the delayed ``remat_network`` (``tiny``: on ``_tiny``'s two nodes without delays).
    Euler: the memory of a remat strategy does not depend on the solver (Heun's figures
    here are the same), and Euler's gradients trace and compile ~25 % faster."""
    net = eqx.tree_at(lambda n: n.coupling.G, _tiny() if tiny else remat_network(), G)
    return run(net, nd.Euler(remat=remat), t0=0.0, t1=t1, dt=DT,
               monitors={"tavg": nd.TemporalAverage(period=100.0)}, key=jax.random.key(0))


def _loss(remat, t1=2000.0, tiny=False):
    return lambda G: jnp.mean(_run_g(remat, G, t1, tiny=tiny)["tavg"] ** 2)


def _gradient(remat, t1=2000.0, tiny=False):
    """The compiled ``jax.value_and_grad`` of the loss, as ``nd.gradient_memory``
    compiles it (which also traces the loss a second time, for its residuals: the tests
    that read only the temporaries use this)."""
    return _compiled(remat, t1, tiny)  # one cache key with or without the defaults


@functools.cache  # deterministic; each gradient takes 2-10 s to trace and compile
def _compiled(remat, t1, tiny):
    return jax.jit(jax.value_and_grad(_loss(remat, t1, tiny))).lower(0.6).compile()


def _temp(remat, t1=2000.0, tiny=False) -> int:
    return int(_gradient(remat, t1, tiny).memory_analysis().temp_size_in_bytes)


@functools.cache
def _memory(remat):
    return nd.gradient_memory(_loss(remat), 0.6)


# The delayed network's gradients take 2-10 s each to compile: the tests that compare many
# of them are marked slow (``pytest -m slow``, run by CI after the default suite).


@pytest.mark.slow
def test_checkpointing_saves_memory():
    # Claims that hold on every backend (asserted on whichever runs the suite).
    none = _temp(nd.NoRemat())
    uniform = _temp(nd.Uniform(50))
    # Branching 8 (levels of 8, 64, 512 steps): MultiLevel(4) compiles 5x longer here.
    multilevel = _temp(nd.MultiLevel(8))
    assert uniform < none / 5
    # No-remat memory grows with the run, multi-level memory barely does.
    assert _temp(nd.NoRemat(), 4000.0) > 1.8 * none
    assert _temp(nd.MultiLevel(8), 4000.0) < 1.3 * multilevel


@pytest.mark.slow
@pytest.mark.skipif(
    jax.default_backend() != "cpu",
    reason="XLA:CPU's memory plan: on an H100 (XLA:GPU, jax 0.11.2) this short run's "
    "MultiLevel(4) gradient needed 134.5 KB of temporaries against Uniform(50)'s 82.6 KB",
)
def test_multilevel_below_uniform_on_cpu():
    # Measured here: 37.8 KB against 66.8 KB.
    assert _temp(nd.MultiLevel(8)) < _temp(nd.Uniform(50))


@pytest.mark.slow
def test_non_divisor_block_costs_no_more_than_neighbours():
    mem = {k: _temp(nd.Uniform(k)) for k in (40, 45, 50)}
    assert mem[45] <= 1.1 * max(mem[40], mem[50])


def test_policies_change_what_is_saved():
    nothing = _memory(nd.Policy((), block=50))
    coupling = _memory(nd.Policy(("coupling",), block=50))
    history = _memory(nd.Policy(("history",), block=50))
    # Saving the coupling input keeps one [1, nodes] array per step, the history the
    # whole buffer per step: each policy must show up in the saved residuals.
    per_step = 2000 * REMAT_NODES * 8
    assert coupling.residual_bytes >= nothing.residual_bytes + per_step
    rows = history.residual_bytes - nothing.residual_bytes
    assert rows >= 10 * per_step
    assert history.temp_bytes > coupling.temp_bytes > nothing.temp_bytes
    assert nothing.temp_bytes == _temp(nd.Uniform(50))


def _tiny():
    """Two nodes without delays: every candidate's gradient compiles in a fraction of a
    second (the delayed network of ``remat_network``: seconds each)."""
    return nd.Network(nd.LinearDynamics(gamma=-0.1), nd.Linear(G=0.1),
                      nd.DenseGraph(np.ones((2, 2))))


def test_choose_remat_returns_a_concrete_strategy():
    short = dict(t0=0.0, t1=100.0, dt=DT, monitors={"tavg": nd.TemporalAverage(period=50.0)})
    solver = nd.Heun(remat=nd.Auto(max_bytes=10**9, unroll=2))
    choice = nd.choose_remat(_tiny(), solver, **short, key=jax.random.key(0))
    assert isinstance(choice, nd.RematChoice)
    assert choice.strategy == nd.NoRemat(unroll=2)  # the first candidate, Auto's unroll
    assert 0 < choice.temp_bytes <= 10**9
    # Shapes and dtypes alone decide (abstract arguments give the same choice), computed
    # again: nothing is kept between calls.
    net, key = eqx.filter_eval_shape(lambda a: a, (_tiny(), jax.random.key(3)))
    assert isinstance(key, jax.ShapeDtypeStruct)
    assert nd.choose_remat(net, solver, **short, key=key) == choice
    for module in {sys.modules[nd.Auto.__module__], sys.modules[nd.choose_remat.__module__]}:
        state = [name for name, value in vars(module).items() if not name.startswith("__")
                 and (isinstance(value, (dict, list, set)) or hasattr(value, "cache_info"))]
        assert not state, f"module-level state in {module.__name__}: {state}"
    with pytest.raises(ValueError, match="solver.remat must be an nd.Auto"):
        nd.choose_remat(_tiny(), nd.Heun(), **short, key=jax.random.key(0))
    with pytest.raises(TypeError, match="choose_remat"):
        solver.remat.loop(lambda c: c, lambda c: (c, c), jnp.zeros(2), 4, 2)


@pytest.mark.slow
def test_auto_respects_budget():
    # On two nodes without delays over 2000 steps (NoRemat's gradient: 45 KB here; the
    # delayed network's candidates take 30 s to compile): Auto's choice does not depend
    # on what the carry holds, only on the compiled gradients' memory.
    budget = 20_000
    assert _temp(nd.NoRemat(), tiny=True) > budget
    auto = nd.Auto(max_bytes=budget)
    # The run of ``_gradient``, G traced as jax.jit traces 0.6 (a weakly typed scalar).
    g = jax.ShapeDtypeStruct((), jnp.float64, weak_type=True)
    choice = _run_g(auto, g, run=nd.choose_remat, tiny=True)
    assert type(choice.strategy) in (nd.Uniform, nd.Nested, nd.MultiLevel)  # checkpoints
    assert choice.temp_bytes <= budget
    # simulate chooses the same strategy (the same compiled gradient), which fits with the
    # loss around it, and runs it: the same value and gradient, bit for bit. (Auto's
    # forward-only run against its choice, bit for bit: test_remat's
    # test_forward_is_bit_identical[Auto(...)].)
    assert _temp(auto, tiny=True) == _temp(choice.strategy, tiny=True)
    assert _temp(auto, tiny=True) <= 1.2 * budget
    ran, chosen = _gradient(auto, tiny=True)(0.6), _gradient(choice.strategy, tiny=True)(0.6)
    for a, b in zip(jax.tree.leaves(ran), jax.tree.leaves(chosen), strict=True):
        assert np.array_equal(a, b)
    # Every candidate is compiled before giving up; a two-node network without delays,
    # integrated by Euler over 20 steps, keeps that quick (1.7 s here, 17 s with _network).
    with pytest.raises(ValueError, match="no strategy fits max_bytes=10; the smallest was"):
        nd.choose_remat(_tiny(), nd.Euler(remat=nd.Auto(max_bytes=10)), t0=0.0, t1=20.0,
                        dt=1.0, monitors={"tavg": nd.TemporalAverage(period=10.0)}, key=None)
