"""``stages="save"``: a remat strategy keeps the solver stages' intermediates instead of
recomputing them in the backward pass. The forward result and the gradient are those of
``stages="recompute"`` (inside a gradient's program, to rounding); the memory held per step
is larger (XLA's memory analysis)."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_networks import remat_network

import netdyn as nd

T1 = 600.0
MONITORS = {"tavg": nd.TemporalAverage(period=100.0), "sub": nd.Raw(period=50.0)}
PARAMS = (0.6, 0.32)


def _loss(params, remat):
    G, I_o = params
    net = eqx.tree_at(lambda n: (n.coupling.G, n.dynamics.I_o), remat_network(), (G, I_o))
    sol = nd.simulate(net, nd.Heun(remat=remat), t0=0.0, t1=T1, dt=1.0, monitors=MONITORS,
                      key=jax.random.key(11))
    return jnp.mean((sol["tavg"] - 0.25) ** 2) + jnp.mean(sol["sub"] ** 2), sol["sub"]


def _compiled(remat):
    return jax.jit(jax.value_and_grad(_loss, has_aux=True), static_argnums=1).lower(
        jnp.array(PARAMS), remat).compile()


def _forward(remat):
    return nd.simulate(remat_network(), nd.Heun(remat=remat), t0=0.0, t1=T1, dt=1.0,
                       monitors=MONITORS, key=jax.random.key(11))["sub"]


@pytest.mark.parametrize("remat", [nd.NoRemat(), nd.Uniform(7)], ids=str)
def test_saved_stages_give_the_same_run_and_gradient(remat):
    saved = dataclasses.replace(remat, stages="save")
    assert remat.stages == "recompute" and saved.stages == "save"
    # A forward run is the same program: bit for bit.
    assert np.array_equal(np.asarray(_forward(remat)), np.asarray(_forward(saved)))
    (v0, x0), g0 = _compiled(remat)(jnp.array(PARAMS))
    (v1, x1), g1 = _compiled(saved)(jnp.array(PARAMS))
    # Inside the gradient's program XLA may fuse the kept stages differently (NoRemat: the
    # last bit of some samples); the gradient differs by rounding.
    np.testing.assert_allclose(np.asarray(x1), np.asarray(x0), rtol=1e-14, atol=0)
    np.testing.assert_allclose(float(v1), float(v0), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g0), rtol=1e-12, atol=0)


def test_saved_stages_hold_more_memory():
    # What the option changes: reverse mode keeps the stages' intermediates of every step
    # (NoRemat holds all 600 steps), more than the stages' inputs alone.
    temp = {s: _compiled(nd.NoRemat(stages=s)).memory_analysis().temp_size_in_bytes
            for s in ("recompute", "save")}
    assert temp["save"] > 1.2 * temp["recompute"]


@pytest.mark.parametrize("make", [
    lambda s: nd.NoRemat(stages=s), lambda s: nd.Uniform(7, stages=s),
    lambda s: nd.Nested(5, 25, stages=s), lambda s: nd.MultiLevel(3, stages=s),
    lambda s: nd.Policy(("coupling",), stages=s), lambda s: nd.Auto(10**9, stages=s),
])
def test_bad_stages(make):
    name = type(make("save")).__name__
    with pytest.raises(ValueError, match=f"{name} stages must be 'recompute' or 'save', "
                                         "got 'keep'"):
        make("keep")


def test_auto_hands_stages_on():
    net = remat_network()
    choice = nd.choose_remat(net, nd.Heun(remat=nd.Auto(max_bytes=10**9, stages="save")),
                             t0=0.0, t1=T1, dt=1.0, monitors=MONITORS, key=jax.random.key(0))
    assert choice.strategy.stages == "save"
