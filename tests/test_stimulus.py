"""External stimuli: pulse trains and sampled inputs added to the drift of a chosen state
variable, checked against analytic responses of a linear system, quadrature of the
convolution integral, numpy.interp and finite differences."""

import functools
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special

import netdyn as nd

TAU, TAU_V = 2.0, 5.0  # ms


class Decay(nd.AbstractDynamics):
    """Two independent leaky variables, dx/dt = -x / tau + c, dv/dt = -v / tau_v."""

    tau: float = TAU
    tau_v: float = TAU_V
    coupled_variables: tuple[str, ...] = eqx.field(default=("x",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("x", "v")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t, y, c):
        return jnp.stack([-y[0] / self.tau + c[0], -y[1] / self.tau_v])

    def initial_state(self, n_nodes):
        return jnp.zeros((2, n_nodes))


def _network(stimulus, n_nodes=4, dtype=np.float64):
    graph = nd.DenseGraph(np.zeros((n_nodes, n_nodes), dtype))
    return nd.Network(Decay(), nd.Linear(), graph, stimulus=stimulus)


def _run(net, solver=None, t1=10.0, dt=0.01, t0=0.0, history=None):
    sol = nd.simulate(net, solver or nd.RK4(), t0=t0, t1=t1, dt=dt,
                      monitors={"raw": nd.Raw()}, history=history)
    return np.asarray(sol.ts["raw"]), np.asarray(sol["raw"]), sol


def _step_response(t, at, tau=TAU):
    """Response of dx/dt = -x/tau + H(t - at), x(0) = 0."""
    return tau * (1.0 - np.exp(-np.maximum(t - at, 0.0) / tau))


def _train_response(t, onset, width, period, n_pulses, tau=TAU):
    return sum(
        _step_response(t, onset + k * period, tau) - _step_response(t, onset + k * period + width,
                                                                   tau)
        for k in range(n_pulses)
    )


def _convolved(profile, times, tau=TAU, breakpoints=()):
    """x(t) = int_0^t exp(-(t - s) / tau) profile(s) ds, by adaptive quadrature."""
    out = []
    for t in times:
        points = [p for p in breakpoints if 0 < p < t]
        value, _ = integrate.quad(lambda s: np.exp(-(t - s) / tau) * profile(s), 0.0, t,
                                  points=points or None, limit=400, epsabs=1e-13, epsrel=1e-12)
        out.append(value)
    return np.array(out)


def _off_edges(ts, edges):
    return np.min(np.abs(ts[:, None] - np.asarray(edges)[None]), axis=1) > 1e-9


PULSES = dict(onset=1.0, width=0.5, period=2.0, n_pulses=3)


@pytest.mark.parametrize("solver", [nd.Heun(), nd.RK4()], ids=["Heun", "RK4"])
def test_pulse_train_response_matches_the_analytic_linear_response(solver):
    weights = np.array([0.5, 2.0])
    stim = nd.PulseTrain("x", amplitude=1.5, regions=(1, 3), weights=weights, **PULSES)
    starts = PULSES["onset"] + PULSES["period"] * np.arange(PULSES["n_pulses"])
    edges = np.concatenate([starts, starts + PULSES["width"]])
    errors = []
    for dt in (0.02, 0.01):
        ts, ys, _ = _run(_network(stim), solver, dt=dt)
        unit = 1.5 * _train_response(ts, **PULSES)
        want = np.zeros((len(ts), 4))
        want[:, 1], want[:, 3] = 0.5 * unit, 2.0 * unit
        assert np.all(ys[:, 1] == 0.0)  # the unstimulated variable
        error = np.max(np.abs(ys[:, 0] - want), axis=1)
        on_edge = np.min(np.abs(ts[:, None] - edges[None]), axis=1) < 1e-9
        assert on_edge.sum() == len(edges)
        errors.append(np.max(error[~on_edge]))
        # At an edge itself the stage at the end of the step sees H(0) = 1/2 instead of
        # the left limit: an error of a * p * dt / 4 (Heun) or / 12 (RK4), undone by the
        # next step, whose first stage sees 1/2 instead of the right limit.
        assert np.max(error[on_edge]) < 1.5 * 2.0 * dt / 4 * 1.05
    # Off the edges, second order for both solvers: H(0) = 1/2 cancels the first-order
    # errors of the two steps around an edge on the grid.
    assert errors[1] < 2e-4
    assert errors[0] / errors[1] > 3.5


def test_region_specific_timing():
    onsets, widths = np.array([1.0, 2.0, 3.5]), np.array([0.5, 1.0, 0.25])
    stim = nd.PulseTrain("x", amplitude=1.0, onset=onsets, width=widths, period=4.0,
                         n_pulses=1)
    ts, ys, _ = _run(_network(stim, n_nodes=3), nd.RK4(), dt=0.01, t1=6.0)
    for i in range(3):
        want = _train_response(ts, onsets[i], widths[i], 4.0, 1)
        off = _off_edges(ts, [onsets[i], onsets[i] + widths[i]])
        np.testing.assert_allclose(ys[off, 0, i], want[off], atol=2e-5)


def test_smooth_pulses_match_quadrature_and_rk4_sees_the_stage_times():
    rise = 0.3
    stim = nd.PulseTrain("x", amplitude=0.7, rise_time=rise, **PULSES)
    scale = rise / (2 * np.log(9.0))

    def profile(s):
        starts = PULSES["onset"] + PULSES["period"] * np.arange(PULSES["n_pulses"])
        return 0.7 * np.sum(special.expit((s - starts) / scale)
                            - special.expit((s - starts - PULSES["width"]) / scale))

    errors = []
    for dt in (0.1, 0.05):
        ts, ys, _ = _run(_network(stim, n_nodes=2), nd.RK4(), dt=dt)
        want = _convolved(profile, ts[4::10])
        errors.append(np.max(np.abs(ys[4::10, 0, 0] - want)))
    # Fourth order: a stimulus read only at t_n (not at the stages) would give first order.
    assert errors[1] < 1e-6
    assert errors[0] / errors[1] > 12


def test_pulse_edges_rise_time_and_area():
    rise = 0.4
    stim = nd.PulseTrain("x", amplitude=1.0, onset=5.0, width=3.0, period=10.0,
                         rise_time=rise)
    at = lambda t: float(stim.profile(jnp.asarray(t)))  # noqa: E731
    assert at(5.0 - rise / 2) == pytest.approx(0.1, abs=1e-9)
    assert at(5.0 + rise / 2) == pytest.approx(0.9, abs=1e-9)
    assert at(5.0) == pytest.approx(0.5, abs=1e-9)
    assert at(8.0 + rise / 2) == pytest.approx(0.1, abs=1e-9)
    assert at(4.0) < 1e-4 and at(6.5) > 1 - 1e-4
    sharp = nd.PulseTrain("x", amplitude=1.0, onset=5.0, width=3.0, period=10.0)
    values = [float(sharp.profile(jnp.asarray(t))) for t in (4.99, 5.0, 5.01, 8.0, 15.0, 25.5)]
    assert values == [0.0, 0.5, 1.0, 0.5, 0.5, 1.0]  # unending train without n_pulses
    # On a rounded grid (0.1 * k is not exactly k / 10) an edge still gives 1/2.
    assert float(sharp.profile(jnp.asarray(0.1 * 50))) == 0.5
    assert float(sharp.profile(jnp.asarray(0.1 * 80))) == 0.5


@pytest.mark.parametrize("outside", ["zero", "hold"])
def test_sampled_stimulus_interpolates_like_numpy(outside):
    rng = np.random.default_rng(0)
    samples = rng.normal(size=(7, 3))
    start, period = 1.3, 0.7
    stim = nd.SampledStimulus("v", samples=samples, sampling_period=period, start=start,
                              amplitude=2.0, outside=outside)
    grid = start + period * np.arange(7)
    times = np.concatenate([np.linspace(-1.0, 7.0, 97), grid])
    got = np.stack([np.asarray(stim(jnp.asarray(t), 3)) for t in times])
    pad = dict(left=0.0, right=0.0) if outside == "zero" else {}
    want = np.stack([np.interp(times, grid, samples[:, i], **pad) for i in range(3)], axis=1)
    if outside == "zero":  # the jumps at the ends count half at the end times themselves
        for end in (0, -1):
            want[np.isclose(times, grid[end], rtol=0, atol=1e-12)] = 0.5 * samples[end]
    np.testing.assert_allclose(got, 2.0 * want, rtol=0, atol=1e-13)
    one = nd.SampledStimulus("v", samples=samples[:, 0], sampling_period=period, start=start,
                             outside=outside, regions=(2,))
    got = np.stack([np.asarray(one(jnp.asarray(t), 3)) for t in times])
    np.testing.assert_allclose(got[:, 2], want[:, 0], rtol=0, atol=1e-13)
    assert np.all(got[:, :2] == 0.0)


def test_sampled_stimulus_response_matches_quadrature():
    rng = np.random.default_rng(1)
    samples = rng.uniform(-1.0, 1.0, size=9)
    start, period = 0.5, 0.8
    stim = nd.SampledStimulus("v", samples=samples, sampling_period=period, start=start)
    grid = start + period * np.arange(9)
    ts, ys, _ = _run(_network(stim, n_nodes=2), nd.RK4(), dt=0.02)
    want = _convolved(lambda s: np.interp(s, grid, samples, left=0.0, right=0.0), ts[9::25],
                      tau=TAU_V, breakpoints=grid)
    np.testing.assert_allclose(ys[9::25, 1, 0], want, rtol=0, atol=1e-6)
    assert np.all(ys[:, 0] == 0.0)


def test_stimuli_add_up():
    samples = np.array([0.0, 1.0, -0.5, 0.25])
    stim = (
        nd.PulseTrain("x", amplitude=1.0, onset=1.0, width=1.0, period=3.0, n_pulses=1,
                      regions=(0,)),
        nd.PulseTrain("x", amplitude=-2.0, onset=2.0, width=0.5, period=3.0, n_pulses=2),
        nd.SampledStimulus("v", samples=samples, sampling_period=1.0, start=1.0,
                           outside="hold"),
    )
    ts, ys, _ = _run(_network(stim, n_nodes=2), nd.RK4(), dt=0.01)
    second = -2.0 * _train_response(ts, 2.0, 0.5, 3.0, 2)
    first = _train_response(ts, 1.0, 1.0, 3.0, 1)
    # Off the edges (at an edge itself, the error is of order dt: see the first test).
    off = _off_edges(ts, [1.0, 2.0, 2.5, 5.0, 5.5])
    np.testing.assert_allclose(ys[off, 0, 0], (first + second)[off], atol=2e-5)
    np.testing.assert_allclose(ys[off, 0, 1], second[off], atol=2e-5)
    grid = 1.0 + np.arange(4)
    want = _convolved(lambda s: np.interp(s, grid, samples), ts[::100], TAU_V, grid)
    np.testing.assert_allclose(ys[::100, 1, 0], want, atol=1e-6)


def _loss(net):
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=6.0, dt=0.02, monitors={"raw": nd.Raw()})
    return jnp.sum(sol["raw"][:, 0] ** 2) * 0.02


FIELDS = ("amplitude", "onset", "width", "period")


def test_gradient_through_smooth_pulses_matches_finite_differences():
    # The four timing and amplitude fields in one compiled loss and gradient.
    stim = nd.PulseTrain("x", amplitude=1.3, onset=1.1, width=0.6, period=1.7, n_pulses=2,
                         rise_time=0.25, regions=(0, 1), weights=np.array([1.0, -0.5]))
    net = _network(stim, n_nodes=3)
    where = lambda n: tuple(getattr(n.stimulus, f) for f in FIELDS)  # noqa: E731
    values = jnp.asarray([float(v) for v in where(net)])
    # The values of the differences from the gradient's own program: one compile.
    value_and_grad = jax.jit(jax.value_and_grad(lambda p: _loss(eqx.tree_at(where, net,
                                                                            tuple(p)))))
    grad = value_and_grad(values)[1]
    h = 1e-5
    for i, field in enumerate(FIELDS):
        e = jnp.zeros(len(FIELDS)).at[i].set(h)
        fd = (value_and_grad(values + e)[0] - value_and_grad(values - e)[0]) / (2 * h)
        assert abs(float(fd)) > 1e-3, field  # the parameter matters
        np.testing.assert_allclose(grad[i], fd, rtol=1e-6, err_msg=field)


def test_sharp_pulses_give_amplitude_gradients_and_zero_timing_gradients():
    stim = nd.PulseTrain("x", amplitude=1.3, onset=1.1, width=0.6, period=1.7, n_pulses=2)
    net = _network(stim, n_nodes=2)
    # The loss and its gradient from one compiled program (eagerly, each part compiles).
    value, grads = jax.jit(jax.value_and_grad(_loss))(net)
    grads = grads.stimulus
    # The loss is quadratic in the amplitude of a linear response: dL/da = 2 L / a.
    assert float(grads.amplitude) == pytest.approx(2 * float(value) / 1.3, rel=1e-12)
    assert float(grads.onset) == 0.0 and float(grads.width) == 0.0


def test_gradient_through_sampled_samples_and_start():
    samples = jnp.array([0.0, 1.0, 0.5, -0.3, 0.2])
    stim = nd.SampledStimulus("x", samples=samples, sampling_period=0.9, start=0.71,
                              outside="hold")
    net = _network(stim, n_nodes=2)
    where = lambda n: (n.stimulus.samples, n.stimulus.start)  # noqa: E731
    # One compiled program for the gradient and the values of the differences.
    value_and_grad = jax.jit(jax.value_and_grad(
        lambda s, t: _loss(eqx.tree_at(where, net, (s, t))), argnums=(0, 1)))

    def loss(s, t):
        return value_and_grad(s, t)[0]

    start = jnp.asarray(0.71)  # the sample times fall between the solver's stage times
    g_samples, g_start = value_and_grad(samples, start)[1]
    h = 1e-6
    e = jnp.zeros(5).at[2].set(h)
    fd = (loss(samples + e, start) - loss(samples - e, start)) / (2 * h)
    np.testing.assert_allclose(g_samples[2], fd, rtol=1e-6)
    fd = (loss(samples, start + h) - loss(samples, start - h)) / (2 * h)
    assert abs(float(fd)) > 1e-3
    np.testing.assert_allclose(g_start, fd, rtol=1e-5)


def _delayed_network(stimulus):
    weights = np.array([[0.0, 0.0], [0.8, 0.0]])  # W[target, source]: 0 -> 1 only
    graph = nd.DelayGraph(weights, np.array([[0.0, 0.0], [1.5, 0.0]]))
    return nd.Network(Decay(), nd.DelayedLinear(G=1.0), graph, stimulus=stimulus)


def test_continuation_sees_the_pulse_at_global_time():
    stim = nd.PulseTrain("x", amplitude=2.0, onset=6.0, width=1.0, period=4.0, n_pulses=2,
                         regions=(0,))
    net = _delayed_network(stim)
    ts, whole, _ = _run(net, nd.Heun(), t1=12.0, dt=0.05)
    _, first, sol = _run(net, nd.Heun(), t1=5.0, dt=0.05)
    _, second, _ = _run(net, nd.Heun(), t0=5.0, t1=12.0, dt=0.05, history=sol.final)
    np.testing.assert_array_equal(np.concatenate([first, second]), whole)
    assert np.all(first == 0.0)  # no input before the onset, in the first piece
    want = 2.0 * _train_response(ts, 6.0, 1.0, 4.0, 2)
    off = _off_edges(ts, [6.0, 7.0, 10.0, 11.0])
    np.testing.assert_allclose(whole[off, 0, 0], want[off], atol=3e-4)
    # The target responds 1.5 ms (the delay) after the source.
    moved = ts[np.argmax(np.abs(whole[:, 0, 1]) > 1e-12)]
    assert moved == pytest.approx(6.0 + 1.5 + 0.05, abs=1e-9)


@functools.cache
def _remat_loss():
    """The loss of a delayed run with a smooth pulse, and its gradient with respect to
    the amplitude and onset, compiled once per solver; the network; the parameters."""
    stim = nd.PulseTrain("x", amplitude=1.0, onset=2.0, width=1.0, period=3.0,
                         rise_time=0.2, regions=(0,))
    net = _delayed_network(stim)
    where = lambda n: (n.stimulus.amplitude, n.stimulus.onset)  # noqa: E731

    @eqx.filter_jit
    @functools.partial(jax.value_and_grad, has_aux=True)
    def loss(params, solver):
        sol = nd.simulate(eqx.tree_at(where, net, params), solver, t0=0.0, t1=9.0, dt=0.05,
                          monitors={"raw": nd.Raw()})
        return jnp.sum(sol["raw"] ** 2), sol["raw"]

    return loss, (jnp.asarray(1.0), jnp.asarray(2.0))


# Nested levels (a second checkpointed schedule, its own compile) with ``pytest -m slow``:
# Uniform(7)'s blocks already run the stimulus at times inside checkpointed blocks.
@pytest.mark.parametrize(
    "remat", [nd.Uniform(7), pytest.param(nd.Nested(5, 25, 200), marks=pytest.mark.slow)],
    ids=str)
def test_forward_and_gradient_do_not_depend_on_the_remat_strategy(remat):
    loss, params = _remat_loss()
    (_, want), want_grad = loss(params, nd.Heun())
    assert np.max(np.abs(want[:, 0, 1])) > 0.1  # the input reached the other node
    (_, got), grad = loss(params, nd.Heun(remat=remat))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


def test_vmap_over_the_amplitude():
    stim = nd.PulseTrain("x", amplitude=1.0, **PULSES)
    net = _network(stim, n_nodes=2)
    amplitudes = jnp.array([0.5, -1.0, 3.0])

    def run(a):
        sol = nd.simulate(eqx.tree_at(lambda n: n.stimulus.amplitude, net, a), nd.RK4(),
                          t0=0.0, t1=8.0, dt=0.01, monitors={"raw": nd.Raw()})
        return sol["raw"][:, 0]

    ys = np.asarray(jax.vmap(run)(amplitudes))
    ts = 0.01 * np.arange(1, 801)
    off = _off_edges(ts, [1.0, 1.5, 3.0, 3.5, 5.0, 5.5])
    for a, y in zip(np.asarray(amplitudes), ys):
        want = a * _train_response(ts, **PULSES)
        np.testing.assert_allclose(y[off], np.stack([want, want], axis=1)[off],
                                   atol=1e-5 * abs(a))


def test_float32_state_with_float64_parameters():
    stim = nd.PulseTrain("x", amplitude=jnp.asarray(1.0, jnp.float64), **PULSES,
                         weights=jnp.ones(2, jnp.float64))
    # A float32 network and state: the stimulus is computed in the state's type.
    _, ys, _ = _run(_network(stim, n_nodes=2, dtype=np.float32), t1=4.0, dt=0.01,
                    history=jnp.zeros((2, 2), jnp.float32))
    assert ys.dtype == np.float32
    ts = 0.01 * np.arange(1, 401)
    off = _off_edges(ts, [1.0, 1.5, 3.0, 3.5])
    np.testing.assert_allclose(ys[off, 0, 0], _train_response(ts, **PULSES)[off], atol=1e-5)


@pytest.mark.parametrize(
    ("stimulus", "match"),
    [
        (nd.PulseTrain("w", amplitude=1.0, **PULSES), r"'w'.*\('x', 'v'\)"),
        (nd.PulseTrain("x", amplitude=1.0, weights=np.ones(3), **PULSES),
         r"weights has shape \(3,\).*\(4,\)"),
        (nd.PulseTrain("x", amplitude=1.0, regions=(0, 2), weights=np.ones(3), **PULSES),
         r"weights has shape \(3,\).*\(2,\)"),
        (nd.PulseTrain("x", amplitude=1.0, regions=(1, 4), **PULSES), r"regions \[4\]"),
        (nd.PulseTrain("x", amplitude=1.0, regions=(1, -3), **PULSES), "twice"),
        (nd.PulseTrain("x", amplitude=np.ones(4), **PULSES), r"amplitude .* shape \(4,\)"),
        (nd.PulseTrain("x", amplitude=1.0, onset=np.ones(3), width=0.5, period=2.0),
         r"onset has shape \(3,\).*\(4,\)"),
        (nd.SampledStimulus("x", samples=np.ones((5, 3)), sampling_period=1.0),
         r"samples has shape \(5, 3\).*nodes = 4"),
    ],
)
def test_bad_stimuli_are_refused_at_trace_time(stimulus, match):
    with pytest.raises(ValueError, match=match):
        _run(_network(stimulus), t1=1.0)


def test_bad_construction_is_refused():
    with pytest.raises(ValueError, match="width <= period"):
        nd.PulseTrain("x", amplitude=1.0, onset=0.0, width=3.0, period=2.0)
    with pytest.raises(ValueError, match="rise_time"):
        nd.PulseTrain("x", amplitude=1.0, rise_time=0.0, **PULSES)
    with pytest.raises(ValueError, match="n_pulses"):
        nd.PulseTrain("x", amplitude=1.0, onset=0.0, width=1.0, period=2.0, n_pulses=0)
    with pytest.raises(ValueError, match="at least two samples"):
        nd.SampledStimulus("x", samples=np.ones(1), sampling_period=1.0)
    with pytest.raises((ValueError, TypeError), match="outside"):
        nd.SampledStimulus("x", samples=np.ones(3), sampling_period=1.0, outside="wrap")
    with pytest.raises((ValueError, TypeError), match="AbstractStimulus"):
        _network("not a stimulus")


def test_nan_amplitude_stops_the_run():
    stim = nd.PulseTrain("x", amplitude=1.0, **PULSES)
    net = eqx.tree_at(lambda n: n.stimulus.amplitude, _network(stim), jnp.nan)
    with pytest.raises(Exception, match="PulseTrain.amplitude is not finite"):
        _run(net, t1=1.0)
    net = eqx.tree_at(lambda n: n.stimulus.weights, _network(stim), jnp.array([1, 2, np.inf, 0]))
    with pytest.raises(Exception, match="PulseTrain.weights is not finite"):
        _run(net, t1=1.0)


@pytest.mark.parametrize(
    ("timing", "match"),
    [
        # A negative width would invert the pulse, period 0 gives no stimulus at all, a
        # width larger than the period a wrong sum: each array is checked entry by entry.
        (dict(width=np.array([0.5, -0.5]), period=2.0),
         r"PulseTrain.width must be > 0 everywhere; 1 entries are not \(at 1, e.g. -0.5\)"),
        (dict(width=0.5, period=np.array([2.0, 0.0, 1.0])),
         r"PulseTrain.period must be > 0 everywhere; 1 entries are not \(at 1, e.g. 0\)"),
        (dict(width=np.array([0.5, 3.0]), period=2.0),
         r"width <= period everywhere; 1 entries are not \(first at 1: width=3, period=2\)"),
        (dict(width=np.array([0.5, 1.0]), period=np.array([2.0, 0.8])),
         r"width <= period everywhere; 1 entries are not \(first at 1: width=1, period=0.8\)"),
        (dict(width=np.array([0.5, np.nan]), period=2.0), r"PulseTrain.width must be finite"),
        (dict(width=0.5, period=np.array([np.inf, 2.0])), r"PulseTrain.period must be finite"),
        (dict(width=np.ones(3), period=np.full(4, 2.0)),
         r"width \(3,\) and period \(4,\) must be scalars or arrays of one shape"),
    ],
)
def test_array_timing_is_checked_elementwise(timing, match):
    with pytest.raises(ValueError, match=match):
        nd.PulseTrain("x", amplitude=1.0, onset=0.0, **timing)


def test_traced_or_edited_timing_is_checked_when_the_run_starts():
    stim = nd.PulseTrain("x", amplitude=1.0, **PULSES)
    net = _network(stim, n_nodes=2)
    # Width and period both edited to arrays in each case: one compiled run.
    timing = lambda n: (n.stimulus.width, n.stimulus.period)  # noqa: E731
    period = jnp.full(2, PULSES["period"])
    with pytest.raises(Exception, match="PulseTrain.width must be > 0 everywhere"):
        _run(eqx.tree_at(timing, net, (jnp.array([0.5, -0.5]), period)), t1=1.0)
    with pytest.raises(Exception, match="PulseTrain needs 0 < width <= period everywhere"):
        _run(eqx.tree_at(timing, net, (jnp.array([0.5, 2.5]), period)), t1=1.0)
    width = jnp.full(2, PULSES["width"])
    with pytest.raises(Exception, match="PulseTrain needs 0 < width <= period everywhere"):
        _run(eqx.tree_at(timing, net, (width, jnp.array([2.0, 0.0]))), t1=1.0)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: nd.SampledStimulus("x", samples=np.ones(3), sampling_period=float("inf")),
         "SampledStimulus.sampling_period must be a finite real number > 0 ms, got inf"),
        (lambda: nd.SampledStimulus("x", samples=np.ones(3), sampling_period=float("nan")),
         "SampledStimulus.sampling_period must be a finite real number > 0 ms, got nan"),
        (lambda: nd.SampledStimulus("x", samples=np.array([0.0, np.nan, 1.0]),
                                    sampling_period=1.0),
         r"SampledStimulus.samples must be finite; it has 1 NaN or infinite entries \(at 1\)"),
        (lambda: nd.SampledStimulus("x", samples=np.ones(3), sampling_period=1.0,
                                    start=float("inf")),
         "SampledStimulus.start must be a finite real number, got inf"),
        (lambda: nd.PulseTrain("x", amplitude=float("nan"), **PULSES),
         "PulseTrain.amplitude must be a finite real number, got nan"),
        (lambda: nd.PulseTrain("x", amplitude=1.0, onset=np.array([0.0, -np.inf]), width=0.5,
                               period=2.0), "PulseTrain.onset must be finite"),
        (lambda: nd.PulseTrain("x", amplitude=1.0, weights=np.array([1.0, np.nan]), **PULSES),
         "PulseTrain.weights must be finite"),
        (lambda: nd.PulseTrain("x", amplitude=1.0, rise_time=float("inf"), **PULSES),
         r"PulseTrain.rise_time must be a finite real number > 0 ms \(or None for sharp"),
        (lambda: nd.PulseTrain("x", amplitude=1.0, onset=0.0, width=1.0, period=2.0,
                               n_pulses=True), "PulseTrain.n_pulses must be a positive integer"),
    ],
)
def test_non_finite_stimulus_fields_are_refused_at_construction(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_complex_parameter_is_refused_not_cut_to_its_real_part():
    stim = nd.PulseTrain("x", amplitude=1.0, **PULSES)
    net = eqx.tree_at(lambda n: n.stimulus.amplitude, _network(stim), jnp.asarray(1.0 + 2.0j))
    with pytest.raises(ValueError, match=r"PulseTrain.amplitude must be real, got a complex"):
        _run(net, t1=1.0)
    # Complex samples (the constructor's annotation refuses them under the import hook;
    # an edited field gets past it): refused before the run, not cut to the real part.
    stim = nd.SampledStimulus("x", samples=np.zeros(3), sampling_period=1.0)
    net = eqx.tree_at(lambda n: n.stimulus.samples, _network(stim),
                      jnp.array([0.0, 1.0 + 1.0j, 0.0]))
    with pytest.raises(ValueError, match=r"SampledStimulus.samples must be real"):
        _run(net, t1=1.0)


def test_lists_of_numbers_are_arrays_and_checked_alike():
    with pytest.raises(ValueError, match=r"PulseTrain.width must be > 0 everywhere; 1 entries"):
        nd.PulseTrain("x", amplitude=1.0, onset=0.0, width=[0.5, -0.5], period=2.0)
    listed = nd.PulseTrain("x", amplitude=1.0, onset=[0.0, 1.0], width=[0.5, 1], period=2.0)
    for t in (0.25, 0.75, 1.25, 2.1):  # node 0: on in [0, 0.5] + 2k; node 1: [1, 2] + 2k
        want = [float((t % 2.0) < 0.5), float(1.0 < t < 2.0)]
        np.testing.assert_array_equal(np.asarray(listed.profile(jnp.asarray(t))), want)
    sampled = nd.SampledStimulus("x", samples=[0.0, 2.0, 0.0], sampling_period=1.0)
    assert float(sampled.profile(jnp.asarray(0.5))) == 1.0
