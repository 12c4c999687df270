"""Remat strategies: same forward result, same gradient, real memory savings."""

import functools
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import ALL_REMATS
from toy_networks import remat_network

import netdyn as nd

T1, DT = 600.0, 1.0  # 600 steps; monitors emit every 50 and 100 steps
MONITORS = {"tavg": nd.TemporalAverage(period=100.0), "sub": nd.Raw(period=50.0)}


STRATEGIES = [
    nd.Uniform(1),
    nd.Uniform(7),  # divides neither the period nor the run
    nd.Uniform(25),
    nd.Uniform(50),
    nd.Uniform(150),  # three periods of 50: 12 periods split into 4 blocks
    nd.Uniform(250),  # five periods asked: 12 periods balanced into 3 blocks of 4
    nd.Uniform(10_000),  # longer than the run
    nd.Nested(7, 100),
    nd.Nested(5, 25, 200),
    nd.MultiLevel(4),
    nd.MultiLevel(8),  # three levels: its gradient compiles in a fraction of MultiLevel(4)'s
    # Deeper schedules: slow to compile (tens of seconds per gradient); MultiLevel(4) and
    # the nested strategies cover the levels in the default run.
    pytest.param(nd.MultiLevel(3), marks=pytest.mark.slow),
    pytest.param(nd.MultiLevel(2), marks=pytest.mark.slow),
    nd.Policy(("coupling",)),
    nd.Policy(("state", "history", "monitor"), block=30),
    nd.Auto(max_bytes=10**9),  # NoRemat fits; a checkpointing choice: test_auto_respects_budget
]


def _run(remat, net=None, key=None):
    net = remat_network() if net is None else net
    key = jax.random.key(11) if key is None else key
    return nd.simulate(net, nd.Heun(remat=remat), t0=0.0, t1=T1, dt=DT, monitors=MONITORS,
                       key=key)


def _loss_and_samples(params, remat):
    G, I_o = params
    net = eqx.tree_at(lambda n: (n.coupling.G, n.dynamics.I_o), remat_network(), (G, I_o))
    sol = _run(remat, net)
    samples = {name: sol[name] for name in MONITORS}
    return jnp.mean((sol["tavg"] - 0.25) ** 2) + jnp.mean(sol["sub"] ** 2), samples


def _loss(params, remat):
    return _loss_and_samples(params, remat)[0]


PARAMS = (0.6, 0.32)


@functools.cache
def _gradient_and_samples(remat):
    """The gradient of ``_loss`` at ``PARAMS`` under ``remat``, and the samples of the run
    (the forward pass of the same program), compiled once per strategy (a gradient costs
    5-30 s to compile; several tests compare the same one)."""
    grad, samples = jax.jit(jax.grad(lambda p: _loss_and_samples(p, remat), has_aux=True))(
        jnp.array(PARAMS))
    return np.asarray(grad), jax.tree.map(np.asarray, samples)


def _gradient(remat):
    return _gradient_and_samples(remat)[0]


@functools.cache
def _no_remat_loss():
    return jax.jit(lambda p: _loss(p, nd.NoRemat()))


@pytest.fixture(scope="module")
def reference():
    # simulate's own jit: the unroll tests' reference is the same compiled run.
    return _run(nd.NoRemat()), _gradient_and_samples(nd.NoRemat())


# Gradients of strategies whose kind of schedule a default case runs too, with ``pytest -m
# slow`` (each bit-identical forward is checked by default, in test_forward_is_bit_identical
# or in the gradient's own program). By default: blocks of one step (Uniform(1)); unequal
# blocks of steps (Uniform(7)); the three levels of MultiLevel(8), unequal blocks of 8
# steps inside equal blocks of one and 6 periods (nd.checkpoint_blocks); a policy saving
# named values (Policy(("coupling",))).
_SLOW_GRADIENTS = {
    nd.MultiLevel(4),  # four levels (25-60 s to compile): MultiLevel(8)'s three by default
    nd.Uniform(25),  # equal blocks of steps
    nd.Uniform(50),  # blocks of one period
    nd.Uniform(150),  # equal blocks of 3 periods
    nd.Uniform(250),  # equal blocks of 4 periods
    nd.Uniform(10_000),  # longer than the run: nothing checkpointed, NoRemat's loop
    nd.Nested(7, 100),  # unequal blocks of steps inside blocks of 2 periods
    nd.Nested(5, 25, 200),  # equal blocks of steps inside blocks of 4 periods
    nd.Policy(("state", "history", "monitor"), block=30),  # other names saved
    nd.Auto(max_bytes=10**9),  # NoRemat fits, so it is NoRemat's gradient
}
GRADIENT_STRATEGIES = [
    pytest.param(s, marks=pytest.mark.slow)
    if isinstance(s, nd.AbstractRemat) and s in _SLOW_GRADIENTS else s
    for s in STRATEGIES
]
# A forward-only run of its own for every strategy but Uniform(7) and Policy(coupling):
# these run forward only, unrolled, against NoRemat bit for bit in
# test_unroll_forward_is_bit_identical (and their gradient's forward pass below); nor
# MultiLevel(8), whose multi-level loop MultiLevel(4)'s forward run checks bit for bit.
FORWARD_STRATEGIES = [
    s for s in STRATEGIES
    if s not in (nd.Uniform(7), nd.Policy(("coupling",)), nd.MultiLevel(8))
]


@pytest.mark.parametrize("remat", FORWARD_STRATEGIES, ids=str)
def test_forward_is_bit_identical(remat, reference):
    sol, _ = reference
    other = _run(remat)
    for a, b in zip(jax.tree.leaves(sol), jax.tree.leaves(other), strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("remat", GRADIENT_STRATEGIES, ids=str)
def test_gradient_equals_no_remat(remat, reference):
    _, (grad, samples) = reference
    got, got_samples = _gradient_and_samples(remat)
    np.testing.assert_allclose(got, grad, rtol=1e-10)
    # The forward pass of the gradient's program: the same samples, to rounding (XLA may
    # fuse the differentiated programs differently: MultiLevel(4)'s differs in the last
    # bits, its forward-only run is bit-identical above).
    for name in MONITORS:
        np.testing.assert_allclose(got_samples[name], samples[name], rtol=1e-12, atol=0,
                                   err_msg=name)


@pytest.mark.parametrize("remat", [nd.Uniform(7), nd.MultiLevel(8)], ids=str)
def test_gradient_matches_finite_differences(remat):
    params = jnp.array(PARAMS)
    grad = _gradient(remat)
    f = _no_remat_loss()
    for i, h in enumerate([1e-5, 1e-6]):
        e = jnp.zeros(2).at[i].set(h)
        fd = (f(params + e) - f(params - e)) / (2 * h)
        np.testing.assert_allclose(grad[i], fd, rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: nd.Uniform(0),
        lambda: nd.Uniform(-3),
        lambda: nd.Uniform(2.5),
        lambda: nd.Nested(),
        lambda: nd.Nested(10, 0),
        lambda: nd.MultiLevel(1),
        lambda: nd.Policy(("bogus",)),
        lambda: nd.Policy("coupling"),
        lambda: nd.Policy((), block=0),
        lambda: nd.Auto(max_bytes=0),
    ],
)
def test_bad_strategy_arguments(make):
    with pytest.raises((ValueError, TypeError)):
        make()


# --------------------------------------------------------------------------- unroll

# Loop shapes for ``unroll``: monitors every 50 and 100 steps (periods not divisible by 3
# or 8); a sample every step (the period-level scan is the one unrolled) over 203 steps
# (not divisible by 3 or 8); a 7-step period (shorter than unroll=8) over 203 steps.
UNROLL_CASES = {
    "periods-50-100": (T1, MONITORS),
    "every-step": (203.0, {"raw": nd.Raw()}),
    "period-7": (203.0, {"tavg": nd.TemporalAverage(period=7.0)}),
}
# Every strategy in the first case; no remat, short blocks and nested levels in the others.
# Not Auto: simulate runs the strategy it chooses, which gets Auto's unroll
# (test_choose_remat_returns_a_concrete_strategy, test_auto_respects_budget).
# With ``pytest -m slow``: MultiLevel(3) over every step (4 levels of periods, 25 s to
# compile): Uniform(7) there unrolls the period-level scan inside checkpointed blocks, and
# MultiLevel(3) in the other cases unrolls under nested levels; the second Policy, whose
# blocks are checkpointed as the first's (other names saved); MultiLevel(3) over periods
# of 50 (nested levels unrolled: Nested(5,25,200) there, MultiLevel(3) over periods of 7);
# NoRemat over periods of 7 (its unrolled scan with a remainder: NoRemat over periods of
# 50; periods of 7 unrolled: Uniform(7) there).
_SLOW_UNROLLS = {("MultiLevel(3)", "every-step"),
                 ("Policy(state,history,monitor)", "periods-50-100"),
                 ("MultiLevel(3)", "periods-50-100"), ("NoRemat", "period-7")}
UNROLL_PARAMS = [
    pytest.param(make, case, id=f"{name}-{case}",
                 marks=[pytest.mark.slow] if (name, case) in _SLOW_UNROLLS else [])
    for case in UNROLL_CASES
    for name, make in ALL_REMATS
    if name != "Auto"
    and (case == "periods-50-100" or name in ("NoRemat", "Uniform(7)", "MultiLevel(3)"))
]


def _run_case(remat, case):
    t1, monitors = UNROLL_CASES[case]
    return nd.simulate(remat_network(), nd.Heun(remat=remat), t0=0.0, t1=t1, dt=DT,
                       monitors=monitors, key=jax.random.key(11))


@functools.cache
def _unroll_reference(case):
    # unroll=None is unroll=1 on CPU (test_unroll_default_is_resolved_per_backend): in the
    # first case, the run compiled for the reference fixture.
    return jax.tree.map(np.asarray, _run_case(
        nd.NoRemat() if nd.default_unroll() == 1 else nd.NoRemat(unroll=1), case))


@pytest.mark.parametrize("unroll", [3, pytest.param(8, marks=pytest.mark.slow)])
@pytest.mark.parametrize("make, case", UNROLL_PARAMS)
def test_unroll_forward_is_bit_identical(make, case, unroll):
    # unroll=8 (copies separated by barriers, like 3, but a longer compile) runs with
    # ``pytest -m slow``, as does the gradient test's below.
    # Every strategy with unroll=1 is bit-identical to NoRemat (above), so comparing with
    # NoRemat(unroll=1) compares with the same strategy at unroll=1.
    ref = _unroll_reference(case)
    other = _run_case(make(unroll), case)
    assert jax.tree.structure(ref) == jax.tree.structure(other)
    for a, b in zip(jax.tree.leaves(ref), jax.tree.leaves(other)):
        assert np.array_equal(a, b)


# Unrolled gradients compile for 15-80 s each (unroll=8, the GPU default, the longest):
# with ``pytest -m slow``, as CI runs; the unrolled forward runs are checked by default.
@pytest.mark.slow
@pytest.mark.parametrize("unroll", [3, 8])
@pytest.mark.parametrize(
    "name, make",
    [pytest.param(n, m, id=n) for n, m in ALL_REMATS if n in ("NoRemat", "Uniform(7)")],
)
def test_unroll_gradient_equals_unroll_1(name, make, unroll):
    # unroll=None is unroll=1 on CPU (test_unroll_default_is_resolved_per_backend): the
    # gradient compiled for the tests above.
    one = _gradient(make(None) if nd.default_unroll() == 1 else make(1))
    np.testing.assert_allclose(_gradient(make(unroll)), one, rtol=1e-12, atol=0)


def _toy_loop_jaxpr(strategy, n_steps, every):
    """The jaxpr of ``strategy``'s time loop over a scalar carry; one ``sin`` per step."""
    return jax.make_jaxpr(
        lambda c: strategy.loop(lambda x: jnp.sin(x) + 1.0, lambda x: (x, x), c, n_steps, every)
    )(jnp.zeros(()))


def test_unroll_default_is_resolved_per_backend(monkeypatch):
    assert all(make(None).unroll is None for _, make in ALL_REMATS)
    assert nd.Uniform(7).unroll is None and nd.Nested(5, 25).unroll is None
    assert nd.default_unroll("cpu") == 1 and nd.default_unroll("tpu") == 1
    assert nd.default_unroll("gpu") == 8
    for backend in ("cpu", "gpu"):
        monkeypatch.setattr(jax, "default_backend", lambda backend=backend: backend)
        default = nd.default_unroll()
        assert default == nd.default_unroll(backend)
        for make in (lambda u: nd.NoRemat(unroll=u), lambda u: nd.Uniform(16, unroll=u)):
            # ``unroll=None`` builds the same loop as the backend's default, traced now.
            loop = str(_toy_loop_jaxpr(make(None), 64, 64))
            assert loop == str(_toy_loop_jaxpr(make(default), 64, 64))
            assert loop != str(_toy_loop_jaxpr(make(default * 2), 64, 64))


def test_block_sizes_of_each_strategy():
    assert nd.NoRemat().block_sizes(600) == ()
    assert nd.Uniform(7).block_sizes(600) == (7,)
    assert nd.Nested(25, 5, 200).block_sizes(600) == (5, 25, 200)
    assert nd.MultiLevel(4).block_sizes(600) == (4, 16, 64, 256)
    assert nd.Policy(("coupling",)).block_sizes(600) == (24,)
    assert nd.Policy(("coupling",), block=30).block_sizes(600) == (30,)
    with pytest.raises(TypeError, match="choose_remat"):
        nd.Auto(max_bytes=10**9).block_sizes(600)


def test_checkpoint_blocks_of_the_reference_run():
    # 60 s at dt = 1 ms with BOLD every 1000 steps (``benchmarks/remat.md``).
    expected = {
        nd.NoRemat(): (),
        nd.Uniform(100): ((100, False),),
        nd.Uniform(150): ((143, True),),  # 143 x 7 steps a period, the last 142
        nd.Uniform(245): ((200, False),),
        nd.Uniform(1000): ((1000, False),),
        nd.Uniform(1001): ((1000, False),),
        nd.Uniform(7000): ((7000, True),),  # 7 x 9 periods, the last 4
        nd.Uniform(10**6): (),  # longer than the run: nothing checkpointed
        nd.Nested(50, 1200): ((50, False), (1000, False)),
        nd.Nested(20, 1000, 10000): ((20, False), (1000, False), (10000, False)),
        nd.MultiLevel(16): ((16, True), (250, False), (4000, False)),
        nd.MultiLevel(8): ((8, True), (63, True), (500, False), (4000, True), (30000, False)),
        nd.Policy(("coupling",)): ((200, False),),
    }
    for strategy, blocks in expected.items():
        assert nd.checkpoint_blocks(strategy, 60_000, 1000) == blocks, strategy
    with pytest.raises(ValueError, match="every"):
        nd.checkpoint_blocks(nd.Uniform(10), 600, 70)
    with pytest.raises(TypeError, match="choose_remat"):
        nd.checkpoint_blocks(nd.Auto(max_bytes=10**9), 600, 50)


# The primitive of ``jax.checkpoint`` (its name depends on the JAX version).
_CHECKPOINT = jax.make_jaxpr(jax.checkpoint(jnp.sin))(0.0).eqns[0].primitive


def _checkpointed_steps(jaxpr) -> tuple[int, set[int]]:
    """``(steps, sizes)``: the steps (``sin``) ``jaxpr`` runs, and those of each
    checkpointed block in it."""
    steps, sizes = 0, set()
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "sin":
            steps += 1
        for param in eqn.params.values():
            inner = getattr(param, "jaxpr", param)
            if not isinstance(inner, jax.extend.core.Jaxpr):
                continue
            n, inner_sizes = _checkpointed_steps(inner)
            sizes |= inner_sizes
            if eqn.primitive == _CHECKPOINT:
                sizes.add(n)
            steps += n * eqn.params.get("length", 1)
    return steps, sizes


# Only traced, not compiled: MultiLevel(2) (the deepest schedule) is cheap here.
@pytest.mark.parametrize(
    "strategy",
    [s for s in STRATEGIES if isinstance(s, nd.AbstractRemat) and not isinstance(s, nd.Auto)]
    + [nd.NoRemat(), nd.MultiLevel(2)],
    ids=str,
)
def test_checkpoint_blocks_are_the_blocks_the_loop_checkpoints(strategy):
    n_steps, every = 600, 50
    blocks = nd.checkpoint_blocks(strategy, n_steps, every)
    steps, sizes = _checkpointed_steps(_toy_loop_jaxpr(strategy, n_steps, every).jaxpr)
    assert steps == n_steps
    realised = {size for size, _ in blocks}
    if any(padded for _, padded in blocks):
        # The shorter last blocks are checkpointed too.
        assert sizes > realised
    else:
        assert sizes == realised


@pytest.mark.parametrize("value", [0, -2, True, 2.5, "8"], ids=repr)
@pytest.mark.parametrize("name, make", [pytest.param(n, m, id=n) for n, m in ALL_REMATS])
def test_bad_unroll(name, make, value):
    if isinstance(value, int):
        with pytest.raises(ValueError, match=f"{name.split('(')[0]} unroll must be"):
            make(value)
    else:
        # Not an int: the runtime type check of the test suite (jaxtyping + beartype)
        # stops it first; without it, the same ValueError.
        with pytest.raises((ValueError, TypeError), match="unroll"):
            make(value)


def test_parse_remat_reads_each_form():
    assert nd.parse_remat("none") == nd.NoRemat()
    assert nd.parse_remat("uniform:250") == nd.Uniform(250)
    assert nd.parse_remat("nested:10,100") == nd.Nested(10, 100)
    assert nd.parse_remat("multilevel:4") == nd.MultiLevel(4)
    assert nd.parse_remat("multilevel") == nd.MultiLevel(16)
    assert nd.parse_remat("uniform:250+save") == nd.Uniform(250, stages="save")
    assert nd.parse_remat("none+save") == nd.NoRemat(stages="save")
    assert nd.parse_remat("nested:10,100+save") == nd.Nested(10, 100, stages="save")
    for bad in ("none:3", "uniform", "uniform:x", "blocks:3", "", "uniform:250+keep",
                "uniform:250+"):
        with pytest.raises(ValueError, match="^" + re.escape(repr(bad)) + ": "):
            nd.parse_remat(bad)
