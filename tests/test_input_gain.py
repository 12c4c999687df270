"""A dense graph's per-target ``input_gain``, and ``nd.InputScaling`` kept as that gain inside
the time loop: the coupling input against a NumPy loop, the same runs and gradients as the
gains folded into the weights, FIC's balance, batches, the smaller gradient program, and
bad gains refused."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import toy_networks as toy
from coupling_oracle import oracle, relax2_np
from toy_networks import DT

import netdyn as nd
from netdyn._parameterisation.input_gain import factor_input_scaling

N_STEPS = 30
GAIN = np.array([0.5, 1.0, 2.0, 0.0, 1.5, 0.8])


class Folded(nd.AbstractParameterisation):
    """The gains folded into one ``[nodes, nodes]`` matrix before the loop (resolved inside
    out, ``scaling`` is already ``e^{g_i} W_ij`` here): what ``simulate`` did before."""

    scaling: nd.AbstractParameterisation

    def value(self):
        return self.scaling


def _folded(net):
    return eqx.tree_at(lambda n: n.graph.weights, net, Folded(net.graph.weights))


@pytest.mark.parametrize("interpolation", ["nearest", "linear"])
@pytest.mark.parametrize("delayed", [True, False])
def test_input_gain_scales_each_targets_sum_as_numpy(interpolation, delayed):
    weights, delays = toy.connectome()
    coupling = nd.DelayedDifference(G=0.7) if delayed else nd.Difference(G=0.7)
    if delayed:
        coupling = dataclasses.replace(coupling, interpolation=interpolation)
        graph = nd.DelayGraph(weights, delays, input_gain=GAIN)
    else:
        graph = nd.DenseGraph(weights, input_gain=GAIN)
    history = toy.random_history(int(delays.max() / DT) + 4, weights.shape[0])
    sol = nd.simulate(nd.Network(toy.Relax2(), coupling, graph), nd.Euler(), t0=0.0,
                      t1=N_STEPS * DT, dt=DT, monitors={"raw": nd.Raw()},
                      history=jnp.asarray(history))
    want = oracle(coupling, GAIN[:, None] * weights, delays if delayed else None, history,
                  N_STEPS, DT, relax2_np)
    np.testing.assert_allclose(np.asarray(sol["raw"]), want, rtol=0, atol=1e-12)


def _scaled_rww(log_gain, seed=0):
    net = toy.rww(6, seed, sigma=0.01)
    return eqx.tree_at(lambda n: n.graph.weights, net,
                       nd.InputScaling(net.graph.weights, log_gain))


def _run(net, key=0):
    return nd.simulate(net, nd.Heun(), t0=0.0, t1=300.0, dt=0.5,
                       monitors={"raw": nd.Raw(period=5.0)}, key=jax.random.key(key))["raw"]


def test_input_scaling_runs_as_the_structural_weights_and_a_gain():
    log_gain = jnp.asarray(0.3 * np.random.default_rng(2).standard_normal(6))
    net = _scaled_rww(log_gain)
    factored = factor_input_scaling(net)
    np.testing.assert_array_equal(factored.graph.weights, net.graph.weights.weights)
    resolved = nd.resolve_parameters(factored)
    np.testing.assert_allclose(resolved.graph.input_gain, np.exp(log_gain), rtol=1e-15)
    # resolve_parameters alone still gives the folded weights.
    np.testing.assert_allclose(nd.resolve_parameters(net).graph.weights,
                               np.exp(log_gain)[:, None] * net.graph.weights.weights,
                               rtol=1e-15)
    np.testing.assert_allclose(_run(net), _run(_folded(net)), rtol=1e-12, atol=1e-14)
    assert np.abs(np.asarray(_run(net) - _run(toy.rww(6, 0, sigma=0.01)))).max() > 1e-4


def test_a_graphs_own_gain_multiplies_the_scalings():
    log_gain = jnp.asarray(np.linspace(-0.4, 0.4, 6))
    net = _scaled_rww(log_gain)
    net = eqx.tree_at(lambda n: n.graph.input_gain, net, jnp.asarray(GAIN),
                      is_leaf=lambda x: x is None)
    resolved = nd.resolve_parameters(factor_input_scaling(net))
    np.testing.assert_allclose(resolved.graph.input_gain, GAIN * np.exp(log_gain), rtol=1e-15)
    plain = eqx.tree_at(lambda n: n.graph.weights, net,
                        jnp.asarray(np.exp(log_gain)[:, None] * net.graph.weights.weights))
    np.testing.assert_allclose(_run(net), _run(plain), rtol=1e-12, atol=1e-14)


def test_gradient_of_the_gains_is_the_folded_ones_with_less_memory():
    def loss(log_gain, fold):
        net = _scaled_rww(log_gain)
        return jnp.mean(_run(_folded(net) if fold else net) ** 2)

    x0 = jnp.asarray(0.2 * np.random.default_rng(5).standard_normal(6))
    grads = {}
    for fold in (False, True):
        compiled = jax.jit(jax.grad(lambda x, f=fold: loss(x, f))).lower(x0).compile()
        grads[fold] = (compiled(x0), compiled.memory_analysis().temp_size_in_bytes)
    np.testing.assert_allclose(grads[False][0], grads[True][0], rtol=1e-10, atol=1e-16)
    # The folded program carries a [nodes, nodes] cotangent through the loop.
    assert grads[False][1] < grads[True][1]
    # And along a direction, central differences (the whole gradient is also checked in
    # test_parameterisation.py).
    u = jnp.asarray(np.random.default_rng(6).standard_normal(6))
    h = 1e-5
    fd = (loss(x0 + h * u, False) - loss(x0 - h * u, False)) / (2 * h)
    np.testing.assert_allclose(float(grads[False][0] @ u), float(fd), rtol=1e-6)


def test_feedback_inhibition_sees_the_gains():
    """FIC balances every region on the gained input: the same J_i either way."""
    w, lengths = toy.connectome(6, seed=4)
    net = nd.presets.rww_ei_fic(w / w.max(), lengths * 4.0, G=0.5, sigma=0.001)
    log_gain = jnp.asarray(np.linspace(-0.2, 0.3, 6))
    net = eqx.tree_at(lambda n: n.graph.weights, net,
                      nd.InputScaling(net.graph.weights, log_gain))
    factored = nd.resolve_parameters(factor_input_scaling(net))
    folded = nd.resolve_parameters(net)
    assert factored.graph.input_gain is not None and folded.graph.input_gain is None
    np.testing.assert_allclose(factored.dynamics.J_i, folded.dynamics.J_i, rtol=1e-13)
    assert np.ptp(np.asarray(factored.dynamics.J_i)) > 1e-3


def test_a_batch_of_gains_matches_each_member():
    gains = jnp.asarray(np.random.default_rng(8).uniform(0.5, 1.5, (3, 6)))
    base = toy.rww(6, 1, sigma=0.01)

    def run(gain):
        net = eqx.tree_at(lambda n: n.graph.input_gain, base, gain,
                          is_leaf=lambda x: x is None)
        return nd.simulate(net, nd.Heun(), t0=0.0, t1=100.0, dt=0.5,
                           monitors={"raw": nd.Raw(period=5.0)}, key=jax.random.key(0),
                           batch_last=True)["raw"]

    batch = np.asarray(jax.vmap(run)(gains))
    for b in range(3):
        np.testing.assert_allclose(batch[b], run(gains[b]), rtol=1e-12, atol=1e-14)
    # A gain shared by a batch of couplings runs the batch-last loop's weighted sum.
    shared = eqx.tree_at(lambda n: n.graph.input_gain, base, gains[0],
                         is_leaf=lambda x: x is None)

    def run_g(G):
        net = eqx.tree_at(lambda n: n.coupling.G, shared, G)
        return nd.simulate(net, nd.Heun(), t0=0.0, t1=100.0, dt=0.5,
                           monitors={"raw": nd.Raw(period=5.0)}, key=jax.random.key(0),
                           batch_last=True)["raw"]

    Gs = jnp.asarray([0.3, 0.5])
    batch = np.asarray(jax.vmap(run_g)(Gs))
    for b in range(2):
        np.testing.assert_allclose(batch[b], run_g(Gs[b]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("gain,match", [
    (np.ones(5), r"DelayGraph.input_gain must have shape \(6,\)"),
    (np.array([1.0, -1.0, 1, 1, 1, 1]), r"DelayGraph.input_gain must be finite and non-neg"),
    (np.array([1.0, 1, np.nan, 1, 1, 1]), r"nodes \[2\]"),
    (np.ones(6) * 1j, "must be real"),
])
def test_bad_input_gains_are_refused(gain, match):
    weights, delays = toy.connectome()
    with pytest.raises(ValueError, match=match):
        nd.DelayGraph(weights, delays, input_gain=gain)
    with pytest.raises(ValueError, match=match.replace("DelayGraph", "DenseGraph")):
        nd.DenseGraph(weights, input_gain=gain)


def test_a_traced_bad_gain_is_a_runtime_error():
    net = toy.rww(6, 0, sigma=None)

    @jax.jit
    def run(gain):
        n = eqx.tree_at(lambda n: n.graph.input_gain, net, gain, is_leaf=lambda x: x is None)
        return nd.simulate(n, nd.Heun(), t0=0.0, t1=10.0, dt=0.5, monitors={"raw": nd.Raw()})

    run(jnp.ones(6))
    with pytest.raises(Exception, match="input_gain contains NaN, inf or negative"):
        run(-jnp.ones(6))
