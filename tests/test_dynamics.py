"""Neural-mass dynamics: TVB's right-hand sides (float64 and float32), pytree behaviour,
gradients with respect to every parameter, analytical solutions (the noisy linear network's
covariance and FC from the Lyapunov equation).

``tests/fixtures/tvb_dfun.npz`` holds TVB's own ``dfun`` evaluated at random states and
coupling inputs (default, custom scalar and per-node parameters, and sets with a model option
changed); it is made by
``tests/fixtures/make_dynamics_fixtures.py`` with tvb-library 2.10, which documents the mapping
of TVB's arrays to netdyn's (drop TVB's trailing mode axis).
"""

import dataclasses
import math
import pathlib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
from helpers import ALL_DYNAMICS
from toy_networks import connectome

import netdyn as nd

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "tvb_dfun.npz"
MODELS = [
    "ReducedWongWang",
    "Generic2dOscillator",
    "SupHopf",
    "JansenRit",
    "MontbrioPazoRoxin",
    "Kuramoto",
    "ReducedWongWangExcInh",
    "LinearDynamics",
    "WilsonCowan",
    "LarterBreakspear",
    "CoombesByrne2D",
    "Epileptor",
]
PARAMETER_SETS = ["default", "custom", "per_node"]
# Every model with every parameter set, and the sets that also change a model option.
DFUN_CASES = [(m, s) for m in MODELS for s in PARAMETER_SETS] + [("WilsonCowan", "unshifted"),
                                                                  ("Epileptor", "modified")]


@pytest.fixture(scope="module")
def tvb():
    with np.load(FIXTURE) as data:
        return {k: data[k] for k in data.files}


def _ids(dynamics):
    return type(dynamics).__name__


def _parameters(dynamics):
    """Names of the model parameters (array leaves other than initial values)."""
    return [
        f.name
        for f in dataclasses.fields(dynamics)
        if not f.metadata.get("static", False) and not f.name.startswith("initial_")
    ]


def _tvb_params(tvb, model, which, kind="param"):
    """The parameters (``kind="param"``) or the static options (``"option"``) of a set."""
    prefix = f"{model}__{which}__{kind}__"
    return {k[len(prefix):]: v for k, v in tvb.items() if k.startswith(prefix)}


def _random_inputs(dynamics, n_nodes, seed=0):
    rng = np.random.default_rng(seed)
    y = np.asarray(dynamics.initial_state(n_nodes))
    y = y + 0.1 * rng.standard_normal(y.shape)
    c = 0.1 * rng.standard_normal((dynamics.n_coupling_inputs, n_nodes))
    return jnp.asarray(y), jnp.asarray(c)


# ---------------------------------------------------------------------------------------
# Against TVB's dfun
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("model,which", DFUN_CASES)
def test_vector_field_matches_tvb_dfun(tvb, model, which):
    params = _tvb_params(tvb, model, which)
    options = {k: v.item() for k, v in _tvb_params(tvb, model, which, "option").items()}
    dynamics = getattr(nd, model)(**{k: jnp.asarray(v) for k, v in params.items()}, **options)
    assert sorted(params) == sorted(_parameters(dynamics))
    y = tvb[f"{model}__{which}__y"]
    c = tvb[f"{model}__{which}__c"]
    ref = tvb[f"{model}__{which}__dfun"]
    out = np.asarray(dynamics.vector_field(0.0, jnp.asarray(y), jnp.asarray(c)))
    assert out.shape == ref.shape
    # Relative to each state's magnitude, so that near-cancelling entries don't dominate.
    scale = np.max(np.abs(ref), axis=1, keepdims=True)
    assert np.all(scale > 0)
    assert np.max(np.abs(out - ref) / scale) < 1e-12


@pytest.mark.parametrize("model,which", DFUN_CASES)
def test_vector_field_float32_matches_tvb_dfun(tvb, model, which):
    # Everything in float32 (parameters drawn over TVB's ranges): finite, float32 and
    # within float32 round-off of TVB's float64 dfun (at most 4e-7 of each state's scale).
    f32 = jnp.float32
    params = _tvb_params(tvb, model, which)
    options = {k: v.item() for k, v in _tvb_params(tvb, model, which, "option").items()}
    dynamics = getattr(nd, model)(**{k: jnp.asarray(v, f32) for k, v in params.items()},
                                  **options)
    y = jnp.asarray(tvb[f"{model}__{which}__y"], f32)
    c = jnp.asarray(tvb[f"{model}__{which}__c"], f32)
    out = dynamics.vector_field(f32(0.0), y, c)
    assert out.dtype == f32
    ref = tvb[f"{model}__{which}__dfun"]
    scale = np.max(np.abs(ref), axis=1, keepdims=True)
    assert np.max(np.abs(np.asarray(out, np.float64) - ref) / scale) < 1e-5


@pytest.mark.parametrize("model", MODELS)
def test_structure_matches_tvb(tvb, model):
    dynamics = getattr(nd, model)()
    names = tuple(str(s) for s in tvb[f"{model}__state_names"])
    assert dynamics.state_names == names
    assert dynamics.coupled_variables == tuple(names[i] for i in tvb[f"{model}__cvar"])
    assert dynamics.n_coupling_inputs == int(tvb[f"{model}__n_coupling_inputs"])
    lo, hi = tvb[f"{model}__state_lo"], tvb[f"{model}__state_hi"]
    for name, low, high in zip(names, lo, hi):
        bounded = np.isfinite(low) or np.isfinite(high)
        assert (name in dynamics.state_bounds) == bounded
        if bounded:
            assert dynamics.state_bounds[name] == (low, high)


@pytest.mark.parametrize("model", MODELS)
def test_defaults_match_tvb(tvb, model):
    dynamics = getattr(nd, model)()
    for name, value in _tvb_params(tvb, model, "default").items():
        assert float(getattr(dynamics, name)) == float(value), name


# ---------------------------------------------------------------------------------------
# Pytree behaviour, for every dynamics
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_shapes_and_initial_state(dynamics):
    n = 5
    y0 = dynamics.initial_state(n)
    assert y0.shape == (len(dynamics.state_names), n)
    assert y0.dtype == jnp.float64
    for name, row in zip(dynamics.state_names, np.asarray(y0)):
        low, high = dynamics.state_bounds.get(name, (-np.inf, np.inf))
        assert np.all((row >= low) & (row <= high))
    y, c = _random_inputs(dynamics, n)
    dy = dynamics.vector_field(0.0, y, c)
    assert dy.shape == (len(dynamics.state_names), n)
    assert dy.dtype == jnp.float64
    assert np.all(np.isfinite(np.asarray(dy)))
    assert dynamics.vector_field(0.0, y0, jnp.zeros_like(c)).shape == y0.shape


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_initial_fields_set_initial_state(dynamics):
    initial = [f.name for f in dataclasses.fields(dynamics) if f.name.startswith("initial_")]
    for name in initial:
        row = dynamics.state_names.index(name[len("initial_"):])
        edited = eqx.tree_at(lambda d: getattr(d, name), dynamics, jnp.arange(4.0))
        np.testing.assert_array_equal(edited.initial_state(4)[row], np.arange(4.0))


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_every_parameter_changes_vector_field(dynamics):
    y, c = _random_inputs(dynamics, 4)
    base = np.asarray(dynamics.vector_field(0.0, y, c))
    for name in _parameters(dynamics):
        value = float(getattr(dynamics, name))
        edited = eqx.tree_at(lambda d: getattr(d, name), dynamics, value + 0.1 * (abs(value) + 1))
        out = np.asarray(edited.vector_field(0.0, y, c))
        assert np.max(np.abs(out - base)) > 1e-9 * (np.max(np.abs(base)) + 1), name


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_jit_vmap_over_parameter(dynamics):
    y, c = _random_inputs(dynamics, 3)
    name = _parameters(dynamics)[0]
    value = float(getattr(dynamics, name))
    values = value * jnp.array([0.9, 1.0, 1.1]) + jnp.array([-0.01, 0.0, 0.01])

    @jax.jit
    @jax.vmap
    def batched(p):
        return eqx.tree_at(lambda d: getattr(d, name), dynamics, p).vector_field(0.0, y, c)

    out = np.asarray(batched(values))
    assert out.shape == (3, len(dynamics.state_names), 3)
    for k, p in enumerate(np.asarray(values)):
        one = eqx.tree_at(lambda d: getattr(d, name), dynamics, float(p))
        np.testing.assert_allclose(out[k], one.vector_field(0.0, y, c), rtol=1e-14, atol=1e-15)
    assert not np.allclose(out[0], out[2])


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_per_region_parameters(dynamics):
    n = 4
    y, c = _random_inputs(dynamics, n, seed=1)
    names = _parameters(dynamics)
    # Node k gets every parameter shifted by 5 % k: node 0 keeps the defaults.
    defaults = {p: float(getattr(dynamics, p)) for p in names}
    vectors = {p: v + 0.05 * np.arange(n) * (abs(v) + 1) for p, v in defaults.items()}

    def leaves(d):
        return [getattr(d, p) for p in names]

    regional = eqx.tree_at(leaves, dynamics, [jnp.asarray(vectors[p]) for p in names])
    out = np.asarray(regional.vector_field(0.0, y, c))
    for k in range(n):
        node = eqx.tree_at(leaves, dynamics, [float(vectors[p][k]) for p in names])
        col = node.vector_field(0.0, y[:, k : k + 1], c[:, k : k + 1])
        np.testing.assert_allclose(out[:, k : k + 1], col, rtol=1e-14, atol=1e-15)


# ---------------------------------------------------------------------------------------
# Analytical solutions
# ---------------------------------------------------------------------------------------


def _uncoupled(dynamics, n):
    return nd.Network(dynamics, nd.Linear(G=0.0), nd.DenseGraph(np.zeros((n, n))))


def test_sup_hopf_limit_cycle():
    # Uncoupled: r' = r (a - r^2), phi' = omega, so r(t)^2 = a / (1 + (a / r0^2 - 1) e^{-2at}).
    a, t1, dt = 0.25, 60.0, 0.005
    omega = np.array([0.5, 1.0, 1.5, 2.0])
    r0 = np.array([0.05, 0.3, 0.8, 1.2])
    phi0 = np.array([0.0, 1.0, 2.0, 3.0])
    y0 = np.stack([r0 * np.cos(phi0), r0 * np.sin(phi0)])
    dynamics = nd.SupHopf(a=a, omega=jnp.asarray(omega))
    sol = nd.simulate(_uncoupled(dynamics, 4), nd.RK4(), t0=0.0, t1=t1, dt=dt,
                      history=jnp.asarray(y0), monitors={"raw": nd.Raw(period=1.0)})
    t = np.asarray(sol.ts["raw"])[:, None]
    r = np.sqrt(a / (1.0 + (a / r0**2 - 1.0) * np.exp(-2.0 * a * t)))
    phi = phi0 + omega * t
    raw = np.asarray(sol["raw"])
    # RK4's global error is 4.8e-9 here (1.2e-6 at dt = 0.02: fourth order).
    np.testing.assert_allclose(raw[:, 0], r * np.cos(phi), rtol=0, atol=2e-8)
    np.testing.assert_allclose(raw[:, 1], r * np.sin(phi), rtol=0, atol=2e-8)
    np.testing.assert_allclose(np.hypot(raw[-1, 0], raw[-1, 1]), math.sqrt(a), rtol=1e-9)


def test_kuramoto_free_rotation():
    omega = np.array([0.3, 1.0, 2.5])
    theta0 = np.array([0.0, 1.0, -2.0])
    dynamics = nd.Kuramoto(omega=jnp.asarray(omega))
    sol = nd.simulate(_uncoupled(dynamics, 3), nd.RK4(), t0=0.0, t1=20.0, dt=0.1,
                      history=jnp.asarray(theta0[None]), monitors={"raw": nd.Raw()})
    t = np.asarray(sol.ts["raw"])[:, None]
    np.testing.assert_allclose(np.asarray(sol["raw"])[:, 0], theta0 + omega * t,
                               rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_epileptor_seizes_above_the_critical_excitability(dtype):
    # With y1 = c - d x1^2 relaxed, x1's resting branch is x1' = -x1^3 - 2 x1^2 + 4.1 - z
    # (x1 < 0): its knee is at x1 = -4/3, z_k = 4.1 - 32/27. The rest state (z = 4 (x1 -
    # x0)) is stable while it lies left of the knee: x0 < -4/3 - z_k / 4 = -2.062. Above,
    # the node discharges (x1 > 0). Uncoupled nodes over TVB's range of x0, 4 s at TVB's
    # dt of 0.05 ms from the default initial state, in float32 and float64: finite, and
    # seizing exactly above the critical value, the sooner the more excitable.
    x0 = np.array([-3.0, -2.5, -2.2, -2.12, -2.0, -1.8, -1.6, -1.0])
    critical = -4.0 / 3.0 - (4.1 - 32.0 / 27.0) / 4.0
    n = len(x0)
    dynamics = nd.Epileptor(x0=jnp.asarray(x0, dtype))
    net = nd.Network(dynamics, nd.Linear(G=0.0), nd.DenseGraph(np.zeros((n, n), dtype)))
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=4000.0, dt=0.05,
                      history=dynamics.initial_state(n).astype(dtype),
                      monitors={"raw": nd.Raw(period=1.0)})
    raw = np.asarray(sol["raw"])
    assert raw.dtype == dtype
    assert np.all(np.isfinite(raw))
    x1 = raw[:, 0]
    np.testing.assert_array_equal(np.any(x1 > 0.0, axis=0), x0 > critical)
    onset = np.argmax(x1 > 0.0, axis=0)[x0 > critical]  # ms
    assert np.all(np.diff(onset) < 0)  # the more excitable, the sooner


# ---------------------------------------------------------------------------------------
# Gradients with respect to every parameter
# ---------------------------------------------------------------------------------------

GRADIENT_CASES = {
    # a model off its defaults where every parameter matters, and its history's ranges
    "ReducedWongWang": (nd.ReducedWongWang(), {"S": (0.1, 0.6)}),
    "Generic2dOscillator": (nd.Generic2dOscillator(), {"V": (-1.0, 1.0), "W": (-1.0, 1.0)}),
    "SupHopf": (nd.SupHopf(a=-0.2), {"x": (-0.5, 0.5), "y": (-0.5, 0.5)}),
    "JansenRit": (nd.JansenRit(), {"y0": (-0.5, 0.5), "y1": (0.0, 20.0), "y2": (0.0, 10.0),
                                   "y3": (-5.0, 5.0), "y4": (-50.0, 50.0),
                                   "y5": (-50.0, 50.0)}),
    # r well above its bound at 0 (the clip would put a kink into the loss); J = 5: at the
    # default 15 the loss curves so strongly in J that the differences at the test's step
    # are off by 5e-5 (they converge to the gradient at smaller steps: 9e-8 at h = 1.5e-5)
    "MontbrioPazoRoxin": (nd.MontbrioPazoRoxin(J=5.0), {"r": (0.8, 1.5), "V": (-0.3, 0.5)}),
    "Kuramoto": (nd.Kuramoto(omega=0.2), {"theta": (0.0, 6.0)}),
    "LinearDynamics": (nd.LinearDynamics(gamma=-0.8), {"x": (-1.0, 1.0)}),
    "WilsonCowan": (nd.WilsonCowan(P=0.5), {"E": (0.0, 0.6), "I": (0.0, 0.4)}),
    "LarterBreakspear": (nd.LarterBreakspear(),
                         {"V": (-0.4, 0.3), "W": (0.1, 0.6), "Z": (0.1, 0.2)}),
    "CoombesByrne2D": (nd.CoombesByrne2D(), {"r": (0.1, 0.5), "V": (-1.0, 0.0)}),
    # Coupling gains on, and x1, x2 on both sides of their thresholds (0, -0.25) so that
    # slope and aa matter. The loss is only piecewise smooth (the vector field's
    # derivatives jump at those thresholds); tt = 0.2 and r = 0.01 keep 20 ms of the
    # seizing network mild: the differences agree to 2e-9 (at tt = 1 and r = 3.5e-4 the
    # gradients reach 3e3, and the differences are off by up to 5e-2).
    "Epileptor": (nd.Epileptor(x0=-1.9, slope=0.2, tt=0.2, r=0.01, Kvf=0.6, Ks=-0.5, Kf=0.4),
                  {"x1": (-2.0, 1.0), "y1": (-12.0, 0.0), "z": (2.5, 4.5), "x2": (-1.5, 0.0),
                   "y2": (0.0, 1.5), "g": (-0.5, 0.5)}),
    # Slow and below the onset of convection (rho < 1): the 20 ms test run stays smooth.
    "Lorenz": (nd.Lorenz(sigma=0.5, rho=0.8, beta=0.3),
               {"x": (-1.0, 1.0), "y": (-1.0, 1.0), "z": (0.0, 2.0)}),
}


# The coupling of each model's loss: DelayedLinear(G=0.5) unless named here.
GRADIENT_COUPLINGS = {"JansenRit": nd.DelayedSigmoidalJansenRit(G=0.5)}


def _delayed_loss(dynamics, ranges, names, n=4, steps=200, dt=0.1):
    """A loss of the parameters ``names`` (a vector): a fixed random projection of a
    delayed network's trajectory from a random history."""
    coupling = GRADIENT_COUPLINGS.get(type(dynamics).__name__, nd.DelayedLinear(G=0.5))
    weights, delays = connectome(n)
    rng = np.random.default_rng(0)
    history = np.stack([rng.uniform(*ranges[s], (40, n)) for s in dynamics.state_names], 1)
    probe = rng.standard_normal((steps, len(dynamics.state_names), n))

    def loss(p):
        d = eqx.tree_at(lambda d: [getattr(d, k) for k in names], dynamics, list(p))
        net = nd.Network(d, coupling, nd.DelayGraph(weights, delays))
        sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=steps * dt, dt=dt, history=history,
                          monitors={"raw": nd.Raw()})
        return jnp.sum(sol["raw"] * probe)

    return loss


@pytest.mark.parametrize("model", list(GRADIENT_CASES))
def test_parameter_gradients_match_finite_differences(model):
    dynamics, ranges = GRADIENT_CASES[model]
    names = _parameters(dynamics)
    loss = _delayed_loss(dynamics, ranges, names)
    p0 = np.array([float(getattr(dynamics, k)) for k in names])
    # One compiled program for the gradient and the values the differences take (a second
    # one, for the values alone, cost as much to compile as all the evaluations).
    value_and_grad = jax.jit(jax.value_and_grad(loss))
    grad = np.asarray(value_and_grad(jnp.asarray(p0))[1])
    assert np.all(np.isfinite(grad))

    def value(p):
        return value_and_grad(jnp.asarray(p))[0]

    def central(h):
        steps = h * np.eye(len(names))
        return np.array([(float(value(p0 + e)) - float(value(p0 - e))) / (2 * h_k)
                         for e, h_k in zip(steps, h)])

    # Central differences at h and h/2, Richardson-extrapolated (error O(h^4)): they
    # agree with the gradient to about 5e-10 for every parameter of LinearDynamics and
    # WilsonCowan, 2e-7 for LarterBreakspear (whose thresholds and widths of order 0.15,
    # e.g. TCa and d_Ca, need steps below 1e-3: with h = 1e-3 the error is 1.5e-3).
    h = 1e-3 * np.maximum(np.abs(p0), 0.1)
    fd = (4.0 * central(h / 2) - central(h)) / 3.0
    assert np.all(np.abs(fd) > 1e-3)  # every parameter moves the loss
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=0)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
@pytest.mark.parametrize("model", list(GRADIENT_CASES))
def test_parameter_gradients_finite_at_extreme_inputs(model, dtype):
    # Saturated responses (coupling input of +-1e4): no overflow in value or gradient.
    dynamics, _ = GRADIENT_CASES[model]
    names = _parameters(dynamics)
    k, n = len(dynamics.state_names), 3
    y = jnp.asarray(np.linspace(-1.0, 1.0, k * n).reshape(k, n), dtype)
    c = jnp.asarray(np.array([-1e4, 0.0, 1e4]) * np.ones((dynamics.n_coupling_inputs, 1)),
                    dtype)
    p0 = jnp.asarray([float(getattr(dynamics, p)) for p in names], dtype)

    def field(p):
        d = eqx.tree_at(lambda d: [getattr(d, q) for q in names], dynamics, list(p))
        return d.vector_field(dtype(0.0), y, c)

    value, jac = jax.jit(lambda p: (field(p), jax.jacobian(field)(p)))(p0)  # one program
    assert np.all(np.isfinite(np.asarray(value)))
    assert jac.dtype == dtype
    assert np.all(np.isfinite(np.asarray(jac)))


# ---------------------------------------------------------------------------------------
# The noisy linear network: stationary covariance and FC in closed form
# ---------------------------------------------------------------------------------------


def _correlation(c):
    d = jnp.sqrt(jnp.diag(c))
    return c / jnp.outer(d, d)


def _sampling_covariance(A, S, period, n_samples):
    """Bartlett's covariance ``K[i,j,k,l]`` of the entries of the sample covariance of
    ``n_samples`` samples, ``period`` apart, of the stationary Gaussian process $\\dot x =
    A x + \\text{noise}$ with covariance ``S``: $\\frac{1}{N} \\sum_m [R_{ik}(m) R_{jl}(m) +
    R_{il}(m) R_{jk}(m)]$, with $R(m) = e^{A m \\Delta} S$ and $R(-m) = R(m)^\\top$."""
    decay = -np.max(np.linalg.eigvals(A).real)
    lags = int(np.ceil(40.0 / (decay * period)))  # e^-40: the sum has converged
    step = scipy.linalg.expm(A * period)
    R = [S]
    for _ in range(lags):
        R.append(step @ R[-1])
    R = np.array(R)
    R = np.concatenate([np.transpose(R[:0:-1], (0, 2, 1)), R])
    return (np.einsum("mik,mjl->ijkl", R, R) + np.einsum("mil,mjk->ijkl", R, R)) / n_samples


def test_linear_network_covariance_and_fc_solve_the_lyapunov_equation():
    # dx = A x dt + sigma dW, A = diag(gamma) + G W (no delays): the stationary covariance
    # S solves A S + S A^T + sigma^2 I = 0. 32 runs of 1000 ms, started in the stationary
    # law, sampled every 0.5 ms: 64,000 samples, some 500 correlation times per run.
    n, G, sigma, dt, period, runs, t1 = 5, 1.5, 0.2, 0.05, 0.5, 32, 1000.0
    weights, _ = connectome(n)
    gamma = np.array([-1.0, -1.3, -0.8, -1.1, -0.9])
    A = np.diag(gamma) + G * weights  # eigenvalues -0.22 ... -1.2 (1/ms)
    S = scipy.linalg.solve_continuous_lyapunov(A, -sigma**2 * np.eye(n))
    net = nd.Network(nd.LinearDynamics(gamma=jnp.asarray(gamma)), nd.Linear(G=G),
                     nd.DenseGraph(weights), noise=nd.AdditiveNoise(sigma=sigma))
    y0 = np.random.default_rng(0).multivariate_normal(np.zeros(n), S, size=runs)

    @jax.jit
    @jax.vmap
    def run(key, y0):
        sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=t1, dt=dt, history=y0[None],
                          monitors={"raw": nd.Raw(period=period)}, key=key)
        return sol["raw"][:, 0]

    x = np.asarray(run(jax.random.split(jax.random.key(1), runs), jnp.asarray(y0)))
    samples = x.reshape(-1, n)
    C = samples.T @ samples / len(samples)  # the mean is 0

    # Heun's own stationary covariance (x' = M x + N xi, exact for this linear SDE)
    # differs from S by O(dt^2): 4e-4 of S, under a tenth of the sampling error.
    M = np.eye(n) + dt * A + (dt * A) @ (dt * A) / 2
    N = np.eye(n) + dt * A / 2
    P = scipy.linalg.solve_discrete_lyapunov(M, sigma**2 * dt * N @ N.T)
    K = _sampling_covariance(A, S, period, len(samples))
    sd = np.sqrt(np.einsum("ijij->ij", K))  # about 1.5 % of sqrt(S_ii S_jj)
    assert np.max(np.abs(P - S) / sd) < 0.1
    # Every entry within 4.5 standard errors (a false alarm for any of the 15 distinct
    # entries has probability 1e-4); the run's largest is 1.4.
    assert np.max(np.abs(C - S) / sd) < 4.5

    # FC: the correlations, standard errors by the delta method (about 0.006; the FC
    # spans 0.06 to 0.6): within 4.5 of them too (the run's largest is 1.6).
    J = np.asarray(jax.jacobian(_correlation)(jnp.asarray(S)))
    sd_fc = np.sqrt(np.einsum("abij,ijkl,abkl->ab", J, K, J))
    fc, expected = np.asarray(_correlation(jnp.asarray(C))), np.asarray(_correlation(S))
    off = ~np.eye(n, dtype=bool)
    assert np.max(np.abs(fc - expected)[off] / sd_fc[off]) < 4.5


def test_lorenz_against_a_numpy_heun_loop():
    # Three Lorenz nodes with instantaneous linear coupling through x (re-evaluated at
    # both Heun stages), per-node rho: netdyn against a plain NumPy loop of the published
    # equations.
    rng = np.random.default_rng(7)
    w = rng.uniform(0.0, 1.0, (3, 3))
    np.fill_diagonal(w, 0.0)
    rho, G, dt, steps = np.array([24.0, 28.0, 31.0]), 0.3, 0.002, 500
    y0 = rng.uniform(-1.0, 1.0, (3, 3)) + np.array([[0.0], [0.0], [10.0]])

    def f(y):
        x, v, z = y
        return np.stack([10.0 * (v - x) + G * w @ x, x * (rho - z) - v, x * v - 8 / 3 * z])

    ref, y = [], y0.copy()
    for _ in range(steps):
        k1 = f(y)
        k2 = f(y + dt * k1)
        y = y + 0.5 * dt * (k1 + k2)
        ref.append(y)
    net = nd.Network(nd.Lorenz(rho=jnp.asarray(rho)), nd.Linear(G=G), nd.DenseGraph(w))
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=steps * dt, dt=dt, history=jnp.asarray(y0),
                      monitors={"raw": nd.Raw(period=dt)})
    np.testing.assert_allclose(np.asarray(sol["raw"]), np.asarray(ref), rtol=1e-11,
                               atol=1e-11)
