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


def _entries(message: str) -> list[tuple[int, int]]:
    """The ``(target, source)`` pairs a message names."""
    import re

    return [(int(t), int(s)) for t, s in re.findall(r"\((\d+), (\d+)\)", message)]


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize(
    "build",
    [
        lambda w: nd.DelayGraph(w, np.ones((4, 4))),
        lambda w: nd.DelayGraph.from_lengths(w, np.ones((4, 4)), speed=4.0),
        lambda w: nd.DelayGraph(w, np.ones((4, 4)), max_delay=5.0),
        lambda w: nd.DenseGraph(w),
        lambda w: nd.SparseGraph.from_dense(w),
        lambda w: nd.SparseDelayGraph.from_lengths(w, np.ones((4, 4)), speed=4.0),
    ],
    ids=["DelayGraph", "from_lengths", "max_delay", "DenseGraph", "SparseGraph",
         "SparseDelayGraph"],
)
def test_nonfinite_weights_are_refused_when_built(build, value):
    # A directed graph: entry [target 1, source 2] only, its mirror [2, 1] is fine.
    w = np.ones((4, 4))
    w[1, 2] = value
    message = r"Graph\.weights must be finite; 1 entry is NaN or infinite"
    with pytest.raises(ValueError, match=message) as e:
        build(w)
    assert _entries(str(e.value)) == [(1, 2)]


@pytest.mark.parametrize(
    "build",
    [
        lambda w, signed: nd.DelayGraph(w, np.ones((4, 4)), signed=signed),
        lambda w, signed: nd.DenseGraph(w, signed=signed),
        lambda w, signed: nd.SparseGraph.from_dense(w, signed=signed),
        lambda w, signed: nd.SparseDelayGraph.from_dense(w, np.ones((4, 4)), signed=signed),
    ],
    ids=["DelayGraph", "DenseGraph", "SparseGraph", "SparseDelayGraph"],
)
def test_negative_weights_are_refused_when_built_unless_signed(build):
    w = np.ones((4, 4))
    w[3, 0], w[0, 2] = -1.0, -2.5
    with pytest.raises(ValueError, match=r"weights must be >= 0 \(pass signed=True") as e:
        build(w, False)
    assert "2 entries are not" in str(e.value)
    assert _entries(str(e.value)) == [(0, 2), (3, 0)]  # row-major order
    graph = build(w, True)
    dense = np.zeros((4, 4))
    if isinstance(graph, (nd.SparseGraph, nd.SparseDelayGraph)):
        dense[np.asarray(graph.targets), np.asarray(graph.sources)] = np.asarray(graph.weights)
    else:
        dense = np.asarray(graph.weights)
    np.testing.assert_array_equal(dense, w)


def test_sparse_edge_weights_are_named_by_target_and_source():
    targets, sources = np.array([0, 3, 2]), np.array([1, 0, 3])
    message = r"SparseGraph\.weights must be finite; 1 edge is NaN"
    with pytest.raises(ValueError, match=message) as e:
        nd.SparseGraph(targets, sources, np.array([1.0, np.nan, 2.0]), n_nodes=4)
    assert _entries(str(e.value)) == [(3, 0)]
    with pytest.raises(ValueError, match=r"SparseDelayGraph\.weights must be >= 0") as e:
        nd.SparseDelayGraph(targets, sources, np.array([1.0, 1.0, -2.0]), np.ones(3), n_nodes=4)
    assert _entries(str(e.value)) == [(2, 3)]


def _runtime_message(net) -> str:
    with pytest.raises(eqx.EquinoxRuntimeError) as e:
        eqx.filter_jit(_sim)(net)
    return str(e.value)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_weights_put_in_after_construction_are_named_at_run_time(kind):
    # eqx.tree_at skips the constructor's checks: simulate's runtime check names the entry.
    w = np.ones((4, 4))
    if kind == "dense":
        net = _net(weights=w)
    else:
        net = nd.Network(nd.ReducedWongWang(), nd.DelayedLinear(G=0.5),
                         nd.SparseDelayGraph.from_dense(w, np.full((4, 4), 3.0)))
    if kind == "dense":
        bad = w.copy()
        bad[2, 1] = np.nan
    else:
        # The sparse layout reorders the edges: find edge [target 2, source 1].
        t, s = np.asarray(net.graph.targets), np.asarray(net.graph.sources)
        bad = np.ones(t.shape)
        bad[np.nonzero((t == 2) & (s == 1))[0][0]] = np.nan
    nan_net = eqx.tree_at(lambda n: n.graph.weights, net, jnp.asarray(bad))
    message = _runtime_message(nan_net)
    assert "weights contain NaN or inf (at [target, source] = (2, 1))." in message
    negative = np.where(np.isnan(bad), -0.5, bad)
    neg_net = eqx.tree_at(lambda n: n.graph.weights, net, jnp.asarray(negative))
    message = _runtime_message(neg_net)
    assert "weights contain negative entries (at [target, source] = (2, 1)); pass signed=True" \
        in message


def test_traced_weights_are_checked_at_run_time():
    # Weights built inside jit are traced: the graph cannot check them when built.
    w = np.ones((4, 4))
    w[0, 3] = np.inf

    @eqx.filter_jit
    def run(weights):
        net = nd.Network(nd.ReducedWongWang(), nd.DelayedLinear(G=0.5),
                         nd.DelayGraph(weights, np.full((4, 4), 3.0)))
        return _sim(net)

    with pytest.raises(eqx.EquinoxRuntimeError,
                       match=r"weights contain NaN or inf \(at \[target, source\] = \(0, 3\)\)"):
        run(jnp.asarray(w))
    run(jnp.ones((4, 4)))  # the same function runs with finite weights


def test_signed_weights_run():
    w = np.ones((4, 4))
    w[0, 1] = -1.0
    signed = nd.Network(
        nd.ReducedWongWang(), nd.DelayedLinear(), nd.DelayGraph(w, np.ones((4, 4)), signed=True)
    )
    _sim(signed)


def test_negative_and_nan_delays():
    d = np.full((4, 4), 3.0)
    d[2, 0] = -1.0
    with pytest.raises(ValueError, match=r"DelayGraph\.delays must be >= 0.*\(2, 0\)"):
        _net(delays=d)
    # Put in after construction (eqx.tree_at skips the check): refused when the run starts.
    net = eqx.tree_at(lambda n: n.graph.delays, _net(), jnp.asarray(d))
    at = r"\(at \[target, source\] = \(2, 0\)\)"
    with pytest.raises(Exception, match=r"delays contain negative entries " + at):
        _sim(net)
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


# --- issue 12: non-finite values --------------------------------------------------------


@pytest.mark.parametrize("where", ["state", "past", "continuation", "continued-buffer"])
def test_nonfinite_history(where):
    net = _net()
    if where == "state":
        history = np.full((1, 4), 0.3)
        history[0, 2] = np.nan
    elif where == "past":
        history = np.full((6, 1, 4), 0.3)
        history[-2, 0, 1] = np.inf  # a row the delay buffer reads
    elif where == "continuation":
        history = _sim(net).final
        history = eqx.tree_at(lambda s: s.y, history, history.y.at[0, 0].set(jnp.nan))
    else:
        history = _sim(net).final
        assert history.is_finite()
        history = eqx.tree_at(lambda s: s.buffer, history,
                              history.buffer.at[1, 2, 0].set(-jnp.inf))
        assert not history.is_finite()
    with pytest.raises(Exception, match="history"):
        _sim(net, history=history)
    # Older rows than the buffer holds are ignored, NaN or not.
    past = np.full((9, 1, 4), 0.3)
    past[0] = np.nan
    assert np.all(np.isfinite(_sim(net, history=past, monitors={"r": nd.Raw()})["r"]))


def test_nonfinite_parameters_are_named():
    # A Python number is static: refused at trace time.
    with pytest.raises(ValueError, match=r"ReducedWongWang\.w must be finite"):
        _sim(_net(dynamics=nd.ReducedWongWang(w=float("nan"))))
    # Arrays are checked at runtime, once, before the loop.
    with pytest.raises(Exception, match=r"DelayedLinear\.G contains NaN or inf"):
        _sim(_net(coupling=nd.DelayedLinear(G=jnp.asarray(np.inf))))
    with pytest.raises(Exception, match=r"ReducedWongWang\.I_o contains NaN or inf"):
        _sim(_net(dynamics=nd.ReducedWongWang(I_o=jnp.array([0.3, np.nan, 0.3, 0.3]))))
    with pytest.raises(Exception, match=r"AdditiveNoise\.sigma contains NaN or inf"):
        _sim(_net(noise=nd.AdditiveNoise(jnp.asarray(np.nan))), key=jax.random.key(0))
    # Gradients through the checked parameters are unchanged (the check is an identity).
    def loss(G):
        sol = _sim(_net(coupling=nd.DelayedLinear(G=G)), monitors={"r": nd.Raw()})
        return jnp.sum(sol["r"] ** 2)

    # (Arrays, not Python floats: simulate's filter_jit would compile each float anew.)
    g = jax.grad(loss)(jnp.asarray(0.5))
    h = 1e-6
    fd = (loss(jnp.asarray(0.5 + h)) - loss(jnp.asarray(0.5 - h))) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


# --- issue 12: inputs that crashed deep in JAX ---------------------------------------------


def test_float32_history_with_x64_runs_in_the_network_dtype():
    h32 = np.linspace(0.1, 0.4, 4, dtype=np.float32)[None]
    sol = _sim(_net(), history=h32, monitors={"r": nd.Raw()})
    # The float64 network promotes the history: the run is the float64 run from the same
    # (exactly representable) values.
    ref = _sim(_net(), history=h32.astype(np.float64), monitors={"r": nd.Raw()})
    assert sol["r"].dtype == jnp.float64
    np.testing.assert_array_equal(sol["r"], ref["r"])
    past = np.repeat(h32[None], 5, axis=0)  # [rows, states, nodes] in float32
    np.testing.assert_array_equal(_sim(_net(), history=past, monitors={"r": nd.Raw()})["r"],
                                  ref["r"])


@pytest.mark.parametrize(
    "key",
    [
        0,
        np.uint32(3),
        jnp.zeros((), jnp.uint32),
        jnp.array([1.0, 2.0]),
        jax.random.split(jax.random.key(0), 3),
        jax.random.split(jax.random.PRNGKey(0), 3),
    ],
    ids=["int", "numpy-scalar", "0-d", "float", "batched", "batched-raw"],
)
def test_bad_keys(key):
    net = _net(noise=nd.AdditiveNoise(0.01))
    with pytest.raises(ValueError, match="single PRNG key.*vmap"):
        _sim(net, key=key)


def test_legacy_raw_key_is_accepted():
    net = _net(noise=nd.AdditiveNoise(0.01))
    raw = _sim(net, key=jax.random.PRNGKey(1), monitors={"r": nd.Raw()})["r"]
    typed = _sim(net, key=jax.random.wrap_key_data(jax.random.PRNGKey(1)),
                 monitors={"r": nd.Raw()})["r"]
    np.testing.assert_array_equal(raw, typed)


def test_sigma_of_wrong_shape():
    dyn = nd.Generic2dOscillator()
    net = nd.Network(dyn, nd.Linear(G=0.1), nd.DenseGraph(np.ones((4, 4))),
                     nd.AdditiveNoise(jnp.ones(3)))
    with pytest.raises(ValueError, match=r"sigma has shape \(3,\).*\('V', 'W'\)"):
        _sim(net, key=jax.random.key(0))
    net = eqx.tree_at(lambda n: n.noise, net, nd.MultiplicativeNoise(jnp.ones((2, 5))))
    with pytest.raises(ValueError, match=r"sigma has shape \(2, 5\).*nodes = 4"):
        _sim(net, key=jax.random.key(0))
    # Per-variable and per-node sigmas are fine.
    net = eqx.tree_at(lambda n: n.noise, net, nd.AdditiveNoise(jnp.ones((2, 4))))
    _sim(net, key=jax.random.key(0))


@pytest.mark.parametrize("history", [np.array([["a"] * 4]), [["0.3"] * 4]])
def test_string_history(history):
    with pytest.raises(ValueError, match="history must hold real numbers"):
        _sim(_net(), history=history)


def test_graph_without_nodes():
    empty = np.zeros((0, 0))
    with pytest.raises(ValueError, match="at least one node"):
        nd.DenseGraph(empty)
    with pytest.raises(ValueError, match="at least one node"):
        nd.DelayGraph(empty, empty)
    with pytest.raises(ValueError, match="n_nodes must be positive"):
        nd.SparseGraph.from_dense(empty)
    with pytest.raises(ValueError, match="n_nodes must be positive"):
        nd.SparseDelayGraph.from_dense(empty, empty)


def test_complex_inputs_are_refused():
    w, d = np.ones((4, 4)), np.full((4, 4), 3.0)
    with pytest.raises(ValueError, match="weights must be real"):
        nd.DelayGraph(w * (1 + 1j), d)
    with pytest.raises(ValueError, match="delays must be real"):
        nd.DelayGraph(w, d * (1 + 0j))
    with pytest.raises(ValueError, match="weights must be real"):
        nd.DenseGraph(w + 0j)
    with pytest.raises(ValueError, match="weights must be real"):
        nd.SparseGraph.from_dense(w + 0j)
    with pytest.raises(ValueError, match="weights must be real"):
        nd.SparseGraph(np.arange(3), np.arange(3), np.ones(3) + 1j, n_nodes=3)
    # Replaced with tree_at after construction: simulate checks again.
    net = eqx.tree_at(lambda n: n.graph.weights, _net(), jnp.ones((4, 4), complex))
    with pytest.raises(ValueError, match="weights must be real"):
        _sim(net)
    with pytest.raises(ValueError, match="history must hold real numbers"):
        _sim(_net(), history=np.full((1, 4), 0.3 + 0.1j))
    with pytest.raises(ValueError, match="real"):
        _sim(_net(), history=_sim(_net()).final.y.astype(complex))


# --- issue 12: gradients with respect to nearest-step delays ---------------------------------


def _delay_loss(interpolation):
    w = np.ones((3, 3)) - np.eye(3)

    def loss(d, G=0.5):
        coupling = nd.DelayedLinear(G=G, interpolation=interpolation)
        net = nd.Network(nd.Generic2dOscillator(), coupling, nd.DelayGraph(w, d, max_delay=5.0))
        sol = _sim(net, t1=20.0, dt=0.5, monitors={"r": nd.Raw()},
                   history=np.linspace(-1, 1, 12 * 2 * 3).reshape(12, 2, 3))
        return jnp.sum(sol["r"] ** 2)

    return loss, jnp.full((3, 3), 2.3)


@pytest.mark.slow
def test_gradient_through_nearest_delays_warns():
    loss, d = _delay_loss("nearest")
    with pytest.warns(nd.NearestDelayGradientWarning, match="interpolation='linear'"):
        g = jax.grad(loss)(d)
    assert np.all(g == 0.0)  # the derivative is what it is, but no longer silent
    # Plain runs, vmap over delays, and gradients with respect to other parameters do not
    # warn (pytest turns any warning into an error).
    loss(d)
    jax.vmap(loss)(jnp.stack([d, d + 0.1]))
    assert jax.grad(loss, argnums=1)(d, 0.5) != 0.0
    linear, _ = _delay_loss("linear")
    assert np.any(jax.grad(linear)(d) != 0.0)


# --- issue 12: step counter and memory --------------------------------------------------------


def test_step_counter_overflow():
    with pytest.raises(ValueError, match=r"steps; the step counter allows at most 2\*\*31"):
        _sim(_net(), t1=1e15)
    with pytest.raises(ValueError, match=r"2\*\*31"):
        _sim(_net(), t1=2**31 * 0.5, dt=0.5)
    with pytest.raises(ValueError, match="finite number of steps"):
        _sim(_net(), t0=-1e308, t1=1e308)
    with pytest.raises(ValueError, match="finite number of steps"):
        _sim(_net(), monitors={"m": nd.Raw(period=float("inf"))})
    first = _sim(_net())
    late = eqx.tree_at(lambda s: s.step, first.final, jnp.asarray(2**31 - 6, jnp.int32))
    with pytest.raises(Exception, match="step counter past 2"):
        _sim(_net(), t0=10.0, t1=20.0, history=late)
    late = eqx.tree_at(lambda s: s.step, first.final, jnp.asarray(2**31 - 11, jnp.int32))
    assert int(_sim(_net(), t0=10.0, t1=20.0, history=late).final.step) == 2**31 - 1


def test_samples_larger_than_memory_are_refused():
    n = 200
    net = nd.Network(nd.ReducedWongWang(), nd.Linear(G=0.1), nd.DenseGraph(np.ones((n, n))))
    # 2e9 steps x 200 nodes x 8 bytes: 3.2 TB of samples.
    with pytest.raises(ValueError, match=r"GB of samples.*'raw': 2000000000 samples"):
        _sim(net, t1=2e9, monitors={"raw": nd.Raw()})


# --- issue 12: continuation ---------------------------------------------------------------------


def test_continuation_checks_t0():
    net, monitors = _net(), {"raw": nd.Raw()}
    first = _sim(net, monitors=monitors)
    assert float(first.final.t) == 10.0
    with pytest.raises(Exception, match="t0 = 5.0"):
        _sim(net, t0=5.0, t1=15.0, history=first.final, monitors=monitors)
    second = _sim(net, t0=10.0, t1=20.0, history=first.final, monitors=monitors)
    np.testing.assert_allclose(second.ts["raw"], np.arange(11.0, 21.0))
    assert float(second.final.t) == 20.0


def test_continuation_keeps_monitors_by_name():
    net = _net()
    first = _sim(net, monitors={"raw": nd.Raw(), "avg": nd.TemporalAverage(period=2.0)})
    with pytest.raises(ValueError, match=r"monitor\(s\) \['avg'\]"):  # renamed
        _sim(net, t0=10.0, t1=20.0, history=first.final,
             monitors={"raw": nd.Raw(), "mean": nd.TemporalAverage(period=2.0)})
    with pytest.raises(ValueError, match=r"monitor\(s\) \['raw'\]"):  # removed
        _sim(net, t0=10.0, t1=20.0, history=first.final,
             monitors={"avg": nd.TemporalAverage(period=2.0)})
    with pytest.raises(ValueError, match="monitor 'raw'"):  # replaced by another kind
        _sim(net, t0=10.0, t1=20.0, history=first.final,
             monitors={"raw": nd.TemporalAverage(period=2.0),
                       "avg": nd.TemporalAverage(period=2.0)})
    # Added monitors start fresh; the others continue.
    more = _sim(net, t0=10.0, t1=20.0, history=first.final,
                monitors={"raw": nd.Raw(), "avg": nd.TemporalAverage(period=2.0),
                          "new": nd.Raw(period=5.0)})
    np.testing.assert_array_equal(more["new"], more["raw"][4::5])


def test_string_variables_are_one_name():
    gain = jnp.ones((2, 3))
    monitors = [
        nd.Raw(variables="y0"),
        nd.TemporalAverage(period=1.0, variables="y0"),
        nd.Bold(period=1.0, variables="y0"),
        nd.HrfBold(period=4.0, hrf_length=8.0, variables="y0"),
        nd.LeadField(gain, 1.0, variables="y0"),
    ]
    for m in monitors:
        assert m.variables == ("y0",), type(m).__name__
    assert nd.AdditiveNoise(0.1, apply_to="y0").apply_to == ("y0",)
    assert nd.MultiplicativeNoise(0.1, apply_to="y0").apply_to == ("y0",)
    net = nd.Network(nd.JansenRit(), nd.SigmoidalJansenRit(), nd.DenseGraph(np.ones((3, 3))))
    run = lambda v: _sim(net, t1=5.0, dt=0.5, monitors={"r": nd.Raw(variables=v)})["r"]  # noqa: E731
    np.testing.assert_array_equal(run("y0"), run(("y0",)))
    # (The test suite's type-checking hook refuses a number before the converter does.)
    with pytest.raises((ValueError, TypeError), match="variables"):
        nd.Raw(variables=3)
    with pytest.raises(ValueError, match="monitor variables must be"):
        nd.Raw(variables=())


# --- issue 12: delay ties are rounded as NumPy does ----------------------------------------------


def _ties(dt):
    """Delays whose quotient by dt is at, or an ulp from, a half-integer."""
    k = np.arange(0, 2000)
    d = (k + 0.5) * dt
    d = np.concatenate([d, np.nextafter(d, 0), np.nextafter(d, np.inf), [228.875 / 5.0]])
    return d


@pytest.mark.parametrize("dt", [0.05, 0.1, 0.025, 1 / 3])
@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_delay_ties_round_as_numpy(dt, kind):
    d = _ties(dt)
    n_rows = int(np.rint(d.max() / dt)) + 1
    if kind == "dense":
        m = int(np.ceil(np.sqrt(d.size)))
        delays = np.full(m * m, 1.0)
        delays[: d.size] = d
        graph = nd.DelayGraph(np.ones((m, m)), delays.reshape(m, m))
    else:
        graph = nd.SparseDelayGraph(np.zeros(d.size, int), np.zeros(d.size, int),
                                    np.ones(d.size), d, n_nodes=1)
    stored = np.asarray(graph.delays)  # the sparse constructor reorders the edges
    expected = n_rows - 1 - np.rint(stored / dt)

    def rows(g):
        return g.delay_index(dt, n_rows, "nearest").rows

    np.testing.assert_array_equal(rows(graph), expected)
    np.testing.assert_array_equal(jax.jit(rows)(graph), expected)
    # Under vmap over delays too (the divisor must not become a broadcast).
    batched = jax.vmap(lambda x: rows(eqx.tree_at(lambda g: g.delays, graph, x)))
    np.testing.assert_array_equal(jax.jit(batched)(jnp.stack([stored, stored])),
                                  np.stack([expected, expected]))
    # The tie of the issue: 228.875 mm at 5 mm/ms is 915.5 steps of 0.05 ms by
    # multiplication with 1/dt, but 915.4999... by division: NumPy and TVB read 915.
    if dt == 0.05:
        assert np.rint(228.875 / 5.0 / 0.05) == 915
        tie = stored == 228.875 / 5.0
        assert np.all(n_rows - 1 - np.asarray(rows(graph))[tie] == 915)


# --- issue 26: keys, list-valued parameters and negative delays ------------------------------


def test_raw_key_of_another_length_is_named():
    # jax.random.key_data of an "rbg" key is 4 uint32 words, where the default
    # implementation (threefry2x32) needs 2: JAX's own error was "invalid PRNG key data".
    data = jax.random.key_data(jax.random.key(0, impl="rbg"))
    assert data.dtype == jnp.uint32 and data.shape == (4,)
    net = _net(noise=nd.AdditiveNoise(0.01))
    with pytest.raises(ValueError, match=r"raw uint32 key .*shape \(2,\); got shape \(4,\)"
                                         r".*wrap_key_data"):
        _sim(net, key=data)
    # Wrapped with its implementation, the same data is a valid key.
    _sim(net, key=jax.random.wrap_key_data(data, impl="rbg"))


def test_key_data_of_the_default_implementation_is_a_legacy_key():
    net = _net(noise=nd.AdditiveNoise(0.01))
    typed = jax.random.key(7)
    a = _sim(net, key=typed, monitors={"r": nd.Raw()})["r"]
    b = _sim(net, key=jax.random.key_data(typed), monitors={"r": nd.Raw()})["r"]
    np.testing.assert_array_equal(a, b)


def test_list_parameters_are_arrays():
    # A list of per-region values is what one types; it ran into "unsupported operand
    # type(s) for +: ... and 'list'", reported as a shape mismatch.
    values = [0.30, 0.31, 0.32, 0.33]
    by_list = _net(dynamics=nd.ReducedWongWang(I_o=values))
    assert isinstance(by_list.dynamics.I_o, np.ndarray)
    np.testing.assert_array_equal(by_list.dynamics.I_o, values)
    by_array = _net(dynamics=nd.ReducedWongWang(I_o=np.array(values)))
    raw = {"r": nd.Raw()}
    want = _sim(by_array, monitors=raw)["r"]
    np.testing.assert_array_equal(_sim(by_list, monitors=raw)["r"], want)
    by_tuple = _net(dynamics=nd.ReducedWongWang(I_o=tuple(values)))
    np.testing.assert_array_equal(_sim(by_tuple, monitors=raw)["r"], want)
    # Put in after construction, with eqx.tree_at: simulate converts it too.
    edited = eqx.tree_at(lambda n: n.dynamics.I_o, by_array, values)
    np.testing.assert_array_equal(_sim(edited, monitors=raw)["r"], want)
    # Regions differ: the list is per region, not one value.
    assert np.ptp(np.asarray(want)[-1, 0]) > 0
    # A nested list: [states, nodes] noise amplitudes.
    sigma = [[0.01, 0.02, 0.03, 0.04]]
    key = jax.random.key(1)
    np.testing.assert_array_equal(
        _sim(_net(noise=nd.AdditiveNoise(sigma)), key=key, monitors=raw)["r"],
        _sim(_net(noise=nd.AdditiveNoise(np.array(sigma))), key=key, monitors=raw)["r"],
    )


def test_ragged_list_parameter_is_named():
    with pytest.raises(ValueError, match=r"ReducedWongWang\.I_o must be an array of real"):
        _net(dynamics=nd.ReducedWongWang(I_o=[[0.3], [0.3, 0.31]]))
    with pytest.raises(ValueError, match=r"AdditiveNoise\.sigma must be an array of real"):
        _net(noise=nd.AdditiveNoise([[0.01], [0.01, 0.02]]))


@pytest.mark.parametrize("kind", ["dense", "sparse", "lengths"])
def test_negative_delays_are_named(kind):
    w = np.ones((4, 4))
    d = np.full((4, 4), 3.0)
    d[1, 2], d[3, 0] = -2.0, -0.5
    build = {
        "dense": lambda d: nd.DelayGraph(w, d),
        "sparse": lambda d: nd.SparseDelayGraph.from_dense(w, d),
        "lengths": lambda d: nd.DelayGraph.from_lengths(w, d * 4.0, speed=4.0),
    }[kind]
    where = (r"\[target, source\] = \(1, 2\), \(3, 0\)" if kind == "sparse"
             else r"at \(1, 2\), \(3, 0\)")
    with pytest.raises(ValueError, match=r"Graph\.delays must be .*>= 0.*2 .*" + where):
        build(d)
    # All negative: the message was "max_delay must be non-negative, got -0.5".
    with pytest.raises(ValueError, match=r"Graph\.delays must be .*>= 0.*16 "):
        build(np.full((4, 4), -0.5))
    # Given max_delay does not hide them either.
    if kind == "dense":
        with pytest.raises(ValueError, match=r"DelayGraph\.delays must be >= 0"):
            nd.DelayGraph(w, d, max_delay=5.0)
    nan = d.copy()
    nan[1, 2], nan[3, 0] = np.nan, 3.0
    with pytest.raises(ValueError, match=r"Graph\.delays must be (finite|.*>= 0).*\(1, 2\)"):
        build(nan)


def test_fc_loss_checks_the_key_before_drawing_realisations():
    # With realisations > 1 the loss folds the key before simulate sees it: JAX's
    # "invalid PRNG key data" came first.
    data = jax.random.key_data(jax.random.key(0, impl="rbg"))
    loss = nd.FcLoss(np.eye(4), nd.Heun(), nd.Raw(), duration=20.0, realisations=2)
    with pytest.raises(ValueError, match=r"raw uint32 key .*got shape \(4,\)"):
        loss(_net(noise=nd.AdditiveNoise(0.01)), data)


def _rww_ei_net():
    return nd.Network(nd.ReducedWongWangExcInh(), nd.DelayedLinear(G=0.1),
                      nd.DelayGraph(np.ones((3, 3)), np.full((3, 3), 2.0)))


@pytest.mark.parametrize("make", [nd.Bold, nd.HrfBold])
def test_bold_without_variables_suggests_the_models_own_name(make):
    # ReducedWongWangExcInh has no 'S': the suggestion is its coupled variable, S_e.
    net = _rww_ei_net()
    assert net.dynamics.coupled_variables == ("S_e",)
    with pytest.raises(ValueError, match=r"monitor 'bold': .* ReducedWongWangExcInh has 2 "
                       r"\('S_e', 'S_i'\); pass e\.g\. variables=\('S_e',\)"):
        _sim(net, t1=8.0, monitors={"bold": make(period=4.0)})
    sol = _sim(net, t1=8.0, monitors={"bold": make(period=4.0, variables="S_e")})
    assert sol["bold"].shape == (2, 1, 3)


@pytest.mark.parametrize(
    "monitor, unknown, suggestion",
    [
        (nd.Bold(period=4.0, variables="S"), "['S']", "('S_e',)"),
        (nd.TemporalAverage(period=4.0, variables="s_i"), "['s_i']", "('S_i',)"),
        (nd.Raw(variables=("S_e", "V")), "['V']", "('S_e',)"),  # no close name: coupled
        (nd.Raw(variables=("S_e", "Si")), "['Si']", "('S_e', 'S_i')"),
    ],
)
def test_unknown_monitor_variable_suggests_the_models_own_names(monitor, unknown, suggestion):
    with pytest.raises(ValueError) as e:
        _sim(_rww_ei_net(), t1=8.0, monitors={"m": monitor})
    assert str(e.value) == (
        f"monitor 'm': unknown variable(s) {unknown}; ReducedWongWangExcInh's state variables "
        f"are ('S_e', 'S_i'): did you mean variables={suggestion}?"
    )


def test_bold_of_two_names_suggests_one_of_them():
    with pytest.raises(ValueError, match=r"pass one of them, e\.g\. variables=\('S_i',\)"):
        nd.Bold(variables=("S_i", "S_e"))


def test_duration_error_names_the_nearest_valid_durations():
    # The getting-started case: a 720 ms TR and a round 60 s run.
    with pytest.raises(ValueError) as e:
        _sim(_net(), t1=60_000.0, monitors={"bold": nd.Bold(period=720.0)})
    assert str(e.value) == (
        "the duration (60000.0 ms) is not a whole number of periods of monitor 'bold' "
        "(720.0 ms). Valid durations: the nearest are 59760.0 ms (83 periods) and 60480.0 ms "
        "(84 periods); nd.whole_periods(60000.0, 720.0) rounds a duration to whole periods."
    )
    # Shorter than one period: only the longer neighbour exists.
    with pytest.raises(ValueError, match=r"the shortest is 720\.0 ms \(1 period\);"):
        _sim(_net(), t1=500.0, monitors={"bold": nd.Bold(period=720.0)})


def test_duration_error_with_several_monitors_names_common_multiples():
    # 720 and 1000 ms: every monitor's periods fit in multiples of lcm = 18 000 ms.
    monitors = {"avg": nd.TemporalAverage(period=1000.0), "bold": nd.Bold(period=720.0)}
    with pytest.raises(ValueError) as e:
        _sim(_net(), t1=40_000.0, monitors=monitors)
    assert "monitor 'bold' (720.0 ms). Valid durations (whole periods of every monitor: " \
        "multiples of 18000.0 ms): the nearest are 36000.0 ms and 54000.0 ms; " \
        "nd.whole_periods(40000.0, 18000.0)" in str(e.value)


def test_duration_error_without_float_noise():
    # 0.1 ms steps: 597 600 steps of 0.1 ms are 59760.00000000001 ms in floating point.
    with pytest.raises(ValueError, match=r"the nearest are 72\.0 ms \(10 periods\) and "
                       r"79\.2 ms \(11 periods\)"):
        _sim(_net(), t1=75.0, dt=0.1, monitors={"m": nd.TemporalAverage(period=7.2)})


@pytest.mark.parametrize(
    "duration, rounding, expected",
    [
        (60_000.0, "nearest", 59_760.0),
        (60_000.0, "down", 59_760.0),
        (60_000.0, "up", 60_480.0),
        (60_200.0, "nearest", 60_480.0),
        (60_120.0, "nearest", 60_480.0),  # 83.5 periods: halves round up
        (60_480.0, "down", 60_480.0),  # already whole: unchanged whatever the rounding
        (60_480.0 * (1 + 1e-12), "up", 60_480.0),  # within simulate's tolerance
        (100.0, "down", 720.0),  # at least one period
        (20_000.0, "nearest", 20_160.0),
    ],
)
def test_whole_periods(duration, rounding, expected):
    assert nd.whole_periods(duration, 720.0, rounding=rounding) == expected


def test_whole_periods_gives_durations_simulate_accepts():
    t1 = nd.whole_periods(75.0, 7.2)
    assert t1 == pytest.approx(72.0, rel=1e-15)
    sol = _sim(_net(), t1=t1, dt=0.1, monitors={"m": nd.TemporalAverage(period=7.2)})
    assert sol["m"].shape == (10, 1, 4)


@pytest.mark.parametrize(
    "args, match",
    [
        ((0.0, 720.0), r"whole_periods\(duration\) must be a finite real number > 0 ms"),
        ((60_000.0, -1.0), r"whole_periods\(period\) must be a finite real number > 0 ms"),
        ((float("nan"), 720.0), r"whole_periods\(duration\) must be"),
        ((1e308, 1e-308), r"is not a finite number of periods"),
    ],
)
def test_whole_periods_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        nd.whole_periods(*args)


def test_whole_periods_bad_rounding(no_type_hook):
    with pytest.raises(ValueError, match=r"whole_periods\(rounding\) must be 'nearest', "
                       r"'down' or 'up', got 'round'"):
        nd.whole_periods(60_000.0, 720.0, rounding="round")
