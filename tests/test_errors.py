"""Bad input gets a clear error naming the problem."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import netdyn as nd


def _net(weights=None, delays=None, dynamics=None, noise=None, coupling=None):
    n = 4
    weights = np.ones((n, n)) if weights is None else weights
    delays = np.full((n, n), 3.0) if delays is None else delays
    return nd.Network(
        dynamics=nd.ReducedWongWang() if dynamics is None else dynamics,
        coupling=nd.DelayedLinear(G=0.5) if coupling is None else coupling,
        graph=nd.DelayGraph(weights, delays),
        noise=noise,
    )


def _sim(net, **kwargs):
    args = dict(t0=0.0, t1=10.0, dt=1.0)
    args.update(kwargs)
    return nd.simulate(net, nd.Heun(), **args)


def test_non_square_weights():
    with pytest.raises(ValueError, match="weights must be a square"):
        nd.DelayGraph(np.ones((3, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="weights must be a square"):
        nd.DenseGraph(np.ones(3))


def test_mismatched_delays():
    with pytest.raises(ValueError, match="delays has shape"):
        nd.DelayGraph(np.ones((3, 3)), np.ones((4, 4)))


def test_nan_weights():
    w = np.ones((4, 4))
    w[1, 2] = np.nan
    with pytest.raises(Exception, match="weights contain NaN"):
        _sim(_net(weights=w))


def test_negative_weights_unless_signed():
    w = np.ones((4, 4))
    w[0, 1] = -1.0
    with pytest.raises(Exception, match="negative"):
        _sim(_net(weights=w))
    signed = nd.Network(
        nd.ReducedWongWang(), nd.DelayedLinear(), nd.DelayGraph(w, np.ones((4, 4)), signed=True)
    )
    _sim(signed)


def test_negative_and_nan_delays():
    d = np.full((4, 4), 3.0)
    d[2, 0] = -1.0
    with pytest.raises(Exception, match="delays contain negative"):
        _sim(_net(delays=d))
    net = _net()
    net = eqx.tree_at(lambda n: n.graph.delays, net, jnp.full((4, 4), jnp.nan))
    with pytest.raises(Exception, match="delays contain NaN"):
        _sim(net)


def test_delay_longer_than_buffer():
    net = eqx.tree_at(lambda n: n.graph.delays, _net(), jnp.full((4, 4), 30.0))
    with pytest.raises(Exception, match="max_delay"):
        _sim(net)


def test_traced_delays_need_max_delay():
    w = jnp.ones((3, 3))

    def build(d):
        return nd.DelayGraph(w, d).max_delay

    with pytest.raises(ValueError, match="max_delay"):
        jax.jit(build)(jnp.ones((3, 3)))
    assert nd.DelayGraph(w, jnp.ones((3, 3)), max_delay=5.0).max_delay == 5.0


def test_graph_dynamics_mismatch():
    dyn = nd.ReducedWongWang(I_o=jnp.full(7, 0.3))
    with pytest.raises(ValueError, match="nodes"):
        _sim(_net(dynamics=dyn))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(t1=0.0), "t1 must be greater than t0"),
        (dict(t0=5.0, t1=5.0), "t1 must be greater than t0"),
        (dict(dt=0.0), "dt must be positive"),
        (dict(dt=-1.0), "dt must be positive"),
        (dict(t1=10.5), "not a whole number of steps"),
        (dict(t1=float("nan")), "t1 must be finite"),
        (dict(monitors={"m": nd.TemporalAverage(period=2.5)}), "period"),
        (dict(monitors={"m": nd.TemporalAverage(period=4.0)}), "whole number of periods"),
        (dict(monitors={"m": nd.TemporalAverage(period=-2.0)}), "period must be positive"),
        (dict(monitors={"m": nd.Raw(variables=("X",))}), "unknown variable"),
    ],
)
def test_time_and_monitor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _sim(_net(), **kwargs)


def test_monitor_of_wrong_type():
    # Without the test suite's type-checking hook this is simulate's own ValueError.
    with pytest.raises((ValueError, TypeError), match="AbstractMonitor"):
        _sim(_net(), monitors={"m": "raw"})


def test_unknown_coupled_variable():
    with pytest.raises(ValueError, match="unknown coupled-variable"):
        nd.ReducedWongWang(coupled_variables=("X",))


def test_unknown_noise_variable():
    with pytest.raises(ValueError, match="apply_to"):
        _sim(_net(noise=nd.AdditiveNoise(0.01, apply_to=("V",))), key=jax.random.key(0))


@pytest.mark.parametrize(
    "history",
    [np.zeros((2, 4)), np.zeros((3, 1, 4)), np.zeros((10, 2, 4)), np.zeros((1, 1, 1, 4))],
)
def test_history_of_wrong_shape(history):
    with pytest.raises(ValueError, match="history|initial state"):
        _sim(_net(), history=history)


def test_continuation_with_other_buffer():
    sol = _sim(_net())
    other = nd.Network(
        nd.ReducedWongWang(), nd.DelayedLinear(), nd.DelayGraph(np.ones((4, 4)), np.ones((4, 4)))
    )
    with pytest.raises(ValueError, match="buffer"):
        _sim(other, history=sol.final)


def test_delayed_coupling_needs_delay_graph():
    net = nd.Network(nd.ReducedWongWang(), nd.DelayedLinear(), nd.DenseGraph(np.ones((3, 3))))
    with pytest.raises(ValueError, match="AbstractDelayGraph"):
        _sim(net)


def test_bad_interpolation():
    with pytest.raises((ValueError, TypeError), match="interpolation"):
        nd.DelayedLinear(interpolation="cubic")


def test_bad_speed():
    with pytest.raises(ValueError, match="speed"):
        nd.DelayGraph.from_lengths(np.ones((2, 2)), np.ones((2, 2)), speed=0.0)
