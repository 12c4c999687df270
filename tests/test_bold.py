"""BOLD monitors: Balloon-Windkessel (``Bold``) and TVB's kernel convolution (``HrfBold``).

References: a fine-step NumPy RK4 of the published Balloon-Windkessel equations, their
analytical fixed point, the TVB fixture made by ``tests/fixtures/make_tvb_bold_fixture.py``
(see its docstring), finite differences for gradients.
"""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import netdyn as nd

FIXTURES = pathlib.Path(__file__).parent / "fixtures"

# Published parameters, written out independently of the monitor's defaults.
STEPHAN2007 = dict(  # SPM's hemodynamic priors, revised coefficients at 1.5 T, eps = 0.5
    kappa=0.64, gamma=0.32, tau=2.0, alpha=0.32, E0=0.4, V0=0.04,
    k1=4.3 * 40.3 * 0.4 * 0.04, k2=0.5 * 25.0 * 0.4 * 0.04, k3=0.5,
)
FRISTON2003 = dict(  # Friston et al. 2003, Table 1; classical coefficients
    kappa=0.65, gamma=0.41, tau=0.98, alpha=0.32, E0=0.34, V0=0.02,
    k1=7 * 0.34, k2=2.0, k3=2 * 0.34 - 0.2,
)
PRESETS = {"default": (nd.Bold, STEPHAN2007), "friston2003": (nd.Bold.friston2003, FRISTON2003)}


def _balloon_rhs(x, z, p):
    s, f, v, q = x
    return np.array([
        z - p["kappa"] * s - p["gamma"] * (f - 1.0),
        s,
        (f - v ** (1.0 / p["alpha"])) / p["tau"],
        (f * (1.0 - (1.0 - p["E0"]) ** (1.0 / f)) / p["E0"]
         - v ** (1.0 / p["alpha"]) * q / v) / p["tau"],
    ])


def _bold_signal(x, p):
    _, _, v, q = x
    return p["V0"] * (p["k1"] * (1 - q) + p["k2"] * (1 - q / v) + p["k3"] * (1 - v))


def _numpy_balloon(z, dt_ms, p, substeps):
    """RK4 with ``substeps`` substeps per step; input z[n] held over step n -> n + 1."""
    h = dt_ms / 1000.0 / substeps
    x = np.zeros((4, z.shape[1]))
    x[1:] = 1.0
    out = np.empty(z.shape)
    for n, zn in enumerate(z):
        for _ in range(substeps):
            k1 = _balloon_rhs(x, zn, p)
            k2 = _balloon_rhs(x + 0.5 * h * k1, zn, p)
            k3 = _balloon_rhs(x + 0.5 * h * k2, zn, p)
            k4 = _balloon_rhs(x + h * k3, zn, p)
            x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        out[n] = _bold_signal(x, p)
    return out


def _feed(monitor, x, dt, every=None):
    """Drive a monitor with ``x[n]`` (the watched variable after step n + 1).

    Returns the signal after every step (``every=None``, ``Bold`` only) or the samples
    emitted every ``every`` steps.
    """
    state = monitor.init(jnp.zeros((1, x.shape[1])), dt)
    if every is None:
        def body(s, xn):
            s = monitor.update(s, xn[None], dt)
            return s, monitor.emit(s, dt)[1][0]

        return np.asarray(jax.lax.scan(body, state, jnp.asarray(x))[1])

    def period(s, xs):
        s = jax.lax.scan(lambda s, xn: (monitor.update(s, xn[None], dt), None), s, xs)[0]
        return monitor.emit(s, dt)

    xs = jnp.asarray(x).reshape((-1, every) + x.shape[1:])
    return np.asarray(jax.lax.scan(period, state, xs)[1])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_balloon_matches_fine_numpy_rk4(preset):
    make, params = PRESETS[preset]
    rng = np.random.default_rng(0)
    dt, n = 1.0, 3000
    t = np.arange(1, n + 1) * dt / 1000.0
    # Smooth drive plus step-to-step noise, different for each of 3 nodes.
    z = (0.4 + 0.3 * np.sin(2 * np.pi * 0.5 * t[:, None] + np.arange(3))
         + 0.05 * rng.standard_normal((n, 3)))
    got = _feed(make(period=dt), z, dt)
    ref = _numpy_balloon(z, dt, params, substeps=2)  # still finer than the monitor's one
    assert np.abs(ref).max() > 1e-3  # a real response
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
    # Recorded: 1.1e-13 (default) and 3.8e-14 (friston2003) relative to the largest value:
    # one RK4 step per ms is already converged.
    assert np.abs(got - ref).max() < 1e-12 * np.abs(ref).max()


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_balloon_steady_state(preset):
    make, p = PRESETS[preset]
    z0 = np.array([0.0, 0.3, 1.2])
    f = 1.0 + z0 / p["gamma"]
    v = f ** p["alpha"]
    q = v * (1.0 - (1.0 - p["E0"]) ** (1.0 / f)) / p["E0"]
    expected = _bold_signal(np.stack([0 * f, f, v, q]), p)
    # From rest, 200 s of constant input (dt = 10 ms) settle to the fixed point.
    got = _feed(make(period=10.0), np.tile(z0, (20_000, 1)), 10.0)
    np.testing.assert_allclose(got[-1], expected, rtol=0, atol=1e-10)
    # initial="steady" starts there.
    monitor = make(period=10.0, initial="steady")
    state = monitor.init(jnp.asarray(z0)[None], 10.0)
    np.testing.assert_allclose(monitor.emit(state, 10.0)[1][0], expected, rtol=0, atol=1e-14)
    state = monitor.update(state, jnp.asarray(z0)[None], 10.0)
    np.testing.assert_allclose(monitor.emit(state, 10.0)[1][0], expected, rtol=0, atol=1e-14)


def test_bold_pulse_peaks_after_4_to_6_seconds():
    dt = 1.0
    z = np.zeros((30_000, 1))
    z[:100] = 1.0  # 100 ms pulse
    y = _feed(nd.Bold(period=dt), z, dt)[:, 0]
    t_peak = (np.argmax(y) + 1) * dt / 1000.0
    assert 4.0 <= t_peak <= 6.0, t_peak
    assert y.max() > 0 and y[-1] < 0.01 * y.max()  # back to baseline


def test_bold_input_scale_and_offset():
    z = np.full((2000, 2), 0.7)
    scaled = _feed(nd.Bold(period=1.0, input_scale=2.0, input_offset=0.2), z, 1.0)
    plain = _feed(nd.Bold(period=1.0), 2.0 * (z - 0.2), 1.0)
    np.testing.assert_allclose(scaled, plain, rtol=1e-14, atol=1e-16)


# --- HrfBold against TVB ------------------------------------------------------------


def _volterra_kernel(t_s, tau_s, tau_f):
    omega = np.sqrt(1.0 / tau_f - 1.0 / (4.0 * tau_s**2))
    return np.exp(-0.5 * t_s / tau_s) * np.sin(omega * t_s) / (3.0 * omega)


@pytest.fixture(scope="module")
def tvb_bold():
    return np.load(FIXTURES / "tvb_bold.npz")


def _hrf_monitor(data, suffix):
    return nd.HrfBold(
        period=float(data["period"]),
        variables=str(data["variable"]),
        hrf_length=float(data["hrf_length" + suffix]),
        interim=float(data["interim"]),
        tau_s=float(data["tau_s"]),
        tau_f=float(data["tau_f"]),
        k_1=float(data["k_1"]),
        V_0=float(data["V_0"]),
    )


def test_hrf_bold_defaults_are_tvb(tvb_bold):
    default = nd.HrfBold(variables="V")
    assert default.period == 2000.0  # TVB's Bold.period default
    for name in ("hrf_length", "interim", "tau_s", "tau_f", "k_1", "V_0"):
        assert getattr(default, name) == float(tvb_bold[name]), name


@pytest.mark.parametrize("suffix", ["", "_short"])
def test_hrf_bold_on_tvb_raw_matches_tvb(tvb_bold, suffix):
    """TVB's raw output fed through the monitor reproduces TVB's Bold samples."""
    data = tvb_bold
    monitor = _hrf_monitor(data, suffix)
    dt = float(data["dt"])
    got = _feed(monitor, data["raw_V_f64"], dt, every=round(monitor.period / dt))
    ref = data["bold" + suffix + "_f64"]
    assert got.shape == ref.shape == (12, 1, 5)
    # Recorded: 4.9e-15 (default kernel) and 6.0e-15 (short): sums of 5000 products.
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("suffix", ["", "_short"])
def test_hrf_bold_in_simulate_matches_tvb(tvb_bold, suffix):
    data = tvb_bold
    dt, t0, n = float(data["dt"]), float(data["t0"]), int(data["n_steps"])
    graph = nd.DelayGraph.from_lengths(data["weights"], data["tract_lengths"],
                                       float(data["speed"]))
    np.testing.assert_array_equal(np.rint(np.asarray(graph.delays) / dt), data["idelays"])
    net = nd.Network(nd.Generic2dOscillator(), nd.DelayedLinear(G=float(data["coupling_a"])),
                     graph)
    sol = nd.simulate(net, nd.Heun(), t0=t0, t1=t0 + n * dt, dt=dt, history=data["history"],
                      monitors={"bold": _hrf_monitor(data, suffix)})
    np.testing.assert_allclose(sol.ts["bold"], data["bold_times"], rtol=1e-12)
    ref = data["bold" + suffix + "_f64"]
    # Recorded: 4.9e-15 and 6.0e-15; and 2.6e-9 against stock TVB.
    np.testing.assert_allclose(sol["bold"], ref, rtol=0, atol=1e-11)
    # Stock TVB keeps its delay buffer in float32 (fixtures/README.md, section 3).
    np.testing.assert_allclose(sol["bold"], data["bold" + suffix], rtol=0, atol=1e-7)


def test_hrf_bold_constant_input_with_initial_fill():
    """A constant signal c with ``fill="initial"``: y = k1 V0 (c sum_j G(j Delta) - 1)."""
    monitor = nd.HrfBold(period=100.0, hrf_length=8000.0, fill="initial")
    c = np.array([0.2, 1.5])
    kernel = _volterra_kernel(np.arange(2000) * 0.004, 0.8, 0.4)
    expected = 5.6 * 0.02 * (c * kernel.sum() - 1.0)
    dt = 0.5
    state = monitor.init(jnp.asarray(c)[None], dt)
    for _ in range(3):
        state = jax.lax.fori_loop(
            0, 200, lambda i, s: monitor.update(s, jnp.asarray(c)[None], dt), state
        )
        state, sample = monitor.emit(state, dt)
        np.testing.assert_allclose(sample[0], expected, rtol=1e-13)


def test_hrf_bold_checks():
    with pytest.raises(ValueError, match="whole number of interim"):
        nd.HrfBold(period=1002.0)
    with pytest.raises(ValueError, match="whole number of interim"):
        nd.HrfBold(hrf_length=1001.0)
    with pytest.raises(ValueError, match="whole number of steps"):
        nd.HrfBold(period=1000.0).init(jnp.zeros((1, 3)), 3.0)
    with pytest.raises(ValueError, match="warmup"):
        nd.HrfBold(warmup=-1.0)


@pytest.mark.parametrize("make", [nd.Bold, nd.HrfBold])
def test_bold_monitors_watch_exactly_one_variable(make):
    with pytest.raises(ValueError, match="exactly one state variable"):
        make(variables=("V", "W"))
    assert make(variables="V").variables == ("V",)
    net = nd.Network(nd.Generic2dOscillator(), nd.Linear(G=0.1), nd.DenseGraph(np.ones((3, 3))))
    with pytest.raises(ValueError, match="exactly one state variable"):
        nd.simulate(net, nd.Heun(), t0=0.0, t1=8.0, dt=1.0, monitors={"b": make(period=4.0)})
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=8.0, dt=1.0,
                      monitors={"b": make(period=4.0, variables="V")})
    assert sol["b"].shape == (2, 1, 3)


def test_bold_continuation_joins_exactly(getkey):
    """Monitor state is carried across runs: two halves give the samples of one run (both
    monitors in the same runs: one compiled program for each piece)."""
    rng = np.random.default_rng(1)
    w = rng.uniform(0, 1, (4, 4))
    graph = nd.DelayGraph(w, rng.uniform(2, 20, (4, 4)))
    net = nd.Network(nd.ReducedWongWang(), nd.DelayedLinear(G=0.3), graph,
                     nd.AdditiveNoise(sigma=0.01))
    monitors = {"Bold": nd.Bold(period=100.0),
                "HrfBold": nd.HrfBold(period=100.0, hrf_length=1000.0)}
    key = getkey()
    whole = nd.simulate(net, nd.Heun(), t0=0.0, t1=2000.0, dt=0.5, monitors=monitors, key=key)
    first = nd.simulate(net, nd.Heun(), t0=0.0, t1=1200.0, dt=0.5, monitors=monitors, key=key)
    second = nd.simulate(net, nd.Heun(), t0=1200.0, t1=2000.0, dt=0.5, monitors=monitors,
                         key=key, history=first.final)
    for name in monitors:
        joined = np.concatenate([first[name], second[name]])
        assert len(joined) >= 5, name
        np.testing.assert_allclose(joined, whole[name], rtol=0, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(np.concatenate([first.ts[name], second.ts[name]]),
                                   whole.ts[name], err_msg=name)


# --- gradients through a delayed simulation -------------------------------------------


def _fc_loss_setup(n=10):
    """RMSE between the FC of 5 s of BOLD (20 samples) and a target FC, as a function of
    G; the run continues a 5 s warm-up at G = 0.5 (hemodynamic transient)."""
    rng = np.random.default_rng(7)
    w = rng.uniform(0.0, 1.0, (n, n)) * (rng.random((n, n)) < 0.6)
    np.fill_diagonal(w, 0.0)
    graph = nd.DelayGraph.from_lengths(w / w.max(), rng.uniform(10.0, 120.0, (n, n)), 4.0)
    target = np.corrcoef(rng.standard_normal((40, n)).T)
    key = jax.random.key(3)
    monitors = {"bold": nd.Bold(period=250.0)}

    def run(G, t0, history):
        net = nd.Network(nd.ReducedWongWang(w=0.5, I_o=0.32, initial_S=0.3),
                         nd.DelayedLinear(G=G), graph, nd.AdditiveNoise(sigma=0.00283))
        return nd.simulate(net, nd.Heun(), t0=t0, t1=t0 + 5_000.0, dt=1.0, key=key,
                           monitors=monitors, history=history)

    warm = run(0.5, 0.0, None).final

    def loss(G):
        return nd.rmse(nd.fc(run(G, 5_000.0, warm)["bold"]), target)

    return loss


# With -m slow (its vmapped gradient alone is a 10 s compile): the gradient through Bold
# of a delayed run against finite differences is in the default run in
# test_burn_in.py::test_burn_in_gradient_is_the_derivative_of_the_whole_run, and gradients
# of a delayed run under vmap in test_batched.py::test_derivatives_of_and_under_a_batch.
@pytest.mark.slow
def test_grad_of_fc_loss_through_bold_matches_finite_differences_under_vmap():
    """d loss / dG through 5 s of delayed RWW + Bold, batched over G with ``vmap``."""
    loss = _fc_loss_setup()
    G, eps = 0.5, 1e-5  # FD error ~ eps^2
    Gs = jnp.array([G - eps, G, G + eps])
    values, grads = jax.jit(jax.vmap(jax.value_and_grad(loss)))(Gs)
    # vmap gives what one run gives.
    np.testing.assert_allclose(values[1], jax.jit(loss)(G), rtol=1e-12)
    fd = (values[2] - values[0]) / (2 * eps)
    assert np.all(np.isfinite(values)) and abs(fd) > 1e-4
    # Recorded: 4.6e-9 relative (|fd| = 4.4e-3).
    np.testing.assert_allclose(grads[1], fd, rtol=1e-5)


def test_hrf_bold_gradient_saves_no_history_per_step():
    """No ``[L, nodes]`` window history (what TVB stores) is a per-step residual."""
    n = 10
    rng = np.random.default_rng(2)
    graph = nd.DelayGraph(rng.uniform(0, 0.1, (n, n)), rng.uniform(1, 20, (n, n)))
    monitor = nd.HrfBold(period=500.0, hrf_length=4000.0)  # L = 1000 windows

    def temp_bytes(t1):
        def loss(G):
            net = nd.Network(nd.ReducedWongWang(), nd.DelayedLinear(G=G), graph)
            sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=t1, dt=1.0, monitors={"b": monitor})
            return jnp.sum(sol["b"] ** 2)

        compiled = jax.jit(jax.grad(loss)).lower(0.5).compile()
        return compiled.memory_analysis().temp_size_in_bytes

    # One compiled gradient: all its temporary memory over its steps bounds what each step
    # adds from above (the rest, the monitor's own window buffer included, is >= 0).
    per_step = temp_bytes(4000.0) / 4000
    history_bytes = monitor.length * n * 8
    # Recorded: 304 B/step added (the step's inputs, an [E] weight row) against 80 kB.
    assert per_step < history_bytes / 20, (per_step, history_bytes)


def test_warmup_samples_are_discarded():
    net = nd.Network(nd.ReducedWongWang(), nd.Linear(G=0.1), nd.DenseGraph(np.ones((3, 3))))
    # The same monitor with and without a warm-up, side by side in one run.
    monitors = {"bold": nd.Bold(period=1000.0, warmup=2000.0), "full": nd.Bold(period=1000.0)}
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=5000.0, dt=1.0, monitors=monitors)
    np.testing.assert_allclose(sol.ts["bold"], [3000.0, 4000.0, 5000.0])
    assert sol["bold"].shape == (3, 1, 3)
    np.testing.assert_allclose(sol.ts["full"], [1000.0, 2000.0, 3000.0, 4000.0, 5000.0])
    np.testing.assert_array_equal(sol["bold"], sol["full"][2:])
    # A continuation keeps every sample: the warm-up belongs to the fresh run.
    more = nd.simulate(net, nd.Heun(), t0=5000.0, t1=7000.0, dt=1.0, history=sol.final,
                       monitors=monitors)
    np.testing.assert_allclose(more.ts["bold"], [6000.0, 7000.0])
    with pytest.raises(ValueError, match="warmup"):
        nd.simulate(net, nd.Heun(), t0=0.0, t1=2000.0, dt=1.0,
                    monitors={"bold": nd.Bold(period=1000.0, warmup=2000.0)})


# --- a coarser hemodynamic step (``integration_step``) ---------------------------------


def _integration_step_setup(n=4):
    rng = np.random.default_rng(5)
    w = rng.uniform(0, 1, (n, n))
    graph = nd.DelayGraph(w, rng.uniform(2, 20, (n, n)))
    net = nd.Network(nd.ReducedWongWang(), nd.DelayedLinear(G=0.3), graph,
                     nd.AdditiveNoise(sigma=0.02))
    return net


def test_bold_integration_step_matches_numpy_on_block_means(getkey):
    """One RK4 step of ``integration_step`` ms per block, driven by the mean of the states
    after the block's steps: the NumPy reference on the run's own raw signal."""
    net, dt, block, period = _integration_step_setup(), 0.5, 10, 100.0
    monitors = {"raw": nd.Raw(), "bold": nd.Bold(period=period, integration_step=block * dt),
                "every_step": nd.Bold(period=period)}
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=3000.0, dt=dt, monitors=monitors,
                      key=getkey())
    x = np.asarray(sol["raw"])[:, 0]  # S after each step
    means = x.reshape(-1, block, x.shape[1]).mean(axis=1)
    ref = _numpy_balloon(means, block * dt, STEPHAN2007, substeps=1)
    per_sample = int(period / (block * dt))
    expected = ref[per_sample - 1::per_sample]
    got = np.asarray(sol["bold"])[:, 0]
    assert np.abs(expected).max() > 1e-4  # a real response
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    # Close to integrating every step (the hemodynamics are slow next to 5 ms).
    every = np.asarray(sol["every_step"])[:, 0]
    assert np.abs(got - every).max() < 1e-3 * np.abs(every).max()
    assert np.abs(got - every).max() > 0  # but not the same computation


def test_bold_integration_step_batched_and_continued(getkey):
    """The batch-last loop and a continuation give the plain, whole run's samples."""
    net, dt = _integration_step_setup(), 1.0
    monitors = {"bold": nd.Bold(period=200.0, integration_step=20.0)}
    keys = jax.random.split(getkey(), 3)

    def run(key, t0, t1, history=None, batch_last=False):
        return nd.simulate(net, nd.Heun(), t0=t0, t1=t1, dt=dt, monitors=monitors, key=key,
                           history=history, batch_last=batch_last)

    whole = jax.vmap(lambda k: run(k, 0.0, 2000.0)["bold"])(keys)
    batched = jax.vmap(lambda k: run(k, 0.0, 2000.0, batch_last=True)["bold"])(keys)
    np.testing.assert_allclose(batched, whole, rtol=0, atol=1e-14)
    first = run(keys[0], 0.0, 1200.0)
    second = run(keys[0], 1200.0, 2000.0, history=first.final)
    np.testing.assert_allclose(np.concatenate([first["bold"], second["bold"]]), whole[0],
                               rtol=0, atol=1e-14)


def test_bold_integration_step_gradient_matches_finite_differences(getkey):
    net, key = _integration_step_setup(), getkey()
    monitors = {"bold": nd.Bold(period=100.0, integration_step=10.0)}

    def loss(G):
        n = nd.Network(net.dynamics, nd.DelayedLinear(G=G), net.graph, net.noise)
        sol = nd.simulate(n, nd.Heun(remat=nd.Uniform(50)), t0=0.0, t1=2000.0, dt=1.0,
                          monitors=monitors, key=key)
        return jnp.sum(sol["bold"] ** 2)

    g = float(jax.jit(jax.grad(loss))(0.3))
    h = 1e-5
    fd = (float(loss(0.3 + h)) - float(loss(0.3 - h))) / (2 * h)
    assert g == pytest.approx(fd, rel=1e-6)


def test_bold_integration_step_errors(no_type_hook):
    with pytest.raises(ValueError, match="not a whole number of integration_step"):
        nd.Bold(period=720.0, integration_step=7.0)
    with pytest.raises(ValueError, match="positive number of ms"):
        nd.Bold(period=720.0, integration_step=-1.0)
    with pytest.raises(ValueError, match="needs a period"):
        nd.Bold(period=None, integration_step=10.0)
    net = _integration_step_setup()
    with pytest.raises(ValueError, match="integration_step .* not a whole number of dt"):
        nd.simulate(net, nd.Heun(), t0=0.0, t1=720.0, dt=1.2, key=jax.random.key(0), monitors={
            "b": nd.Bold(period=720.0, integration_step=10.0)})
