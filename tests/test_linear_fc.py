"""``nd.linear_fc`` and ``nd.LinearFcLoss``: the analytic FC against systems assembled
independently in NumPy and solved by SciPy (a directed linear network with the Balloon
model linearised at rest; a feedback-inhibited Wong-Wang network with a non-rest Balloon
fixed point, Jacobians by finite differences), gradients against central differences,
the FC of a simulation, the errors, the stability barrier and the fitting layer."""


import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import scipy.linalg
import scipy.optimize

import netdyn as nd


def _fc_of(cov: np.ndarray) -> np.ndarray:
    d = np.sqrt(np.diag(cov))
    return cov / np.outer(d, d)


def _close(got, want, rtol: float) -> None:
    """Equal within ``rtol`` of ``want``'s largest entry."""
    want = np.asarray(want)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=rtol * np.abs(want).max())


def _balloon_params(bold) -> dict[str, float]:
    names = "kappa gamma tau alpha E0 V0 k1 k2 k3 input_scale input_offset".split()
    return {k: float(getattr(bold, k)) for k in names}


def _assemble_bold(a_n, q_n, row: int, n: int, blocks, k_column, c_rows):
    """The joint (neural + per-region Balloon) linear system: A, Q and the BOLD read-out C.
    ``a_n``, ``q_n``: the neural Jacobian and noise covariance (per ms, state-major);
    ``row``: the monitored state; ``blocks[i]`` the 4x4 Balloon Jacobian of region i (per
    ms), ``k_column[i]`` the 4 entries of d(dh/dt)/dx (per ms), ``c_rows[i]`` dBOLD/dh."""
    m = a_n.shape[0]
    size = m + 4 * n
    a = np.zeros((size, size))
    a[:m, :m] = a_n
    c = np.zeros((n, size))
    for i in range(n):
        h = slice(m + 4 * i, m + 4 * i + 4)
        a[h, h] = blocks[i]
        a[h, row * n + i] = k_column[i]
        c[i, h] = c_rows[i]
    q = np.zeros((size, size))
    q[:m, :m] = q_n
    return a, q, c


def _bold_covariance(a, q, c) -> np.ndarray:
    s = scipy.linalg.solve_continuous_lyapunov(a, -q)
    return c @ s @ c.T


# ---------------------------------------------------------------------------------------
# A directed linear network: dx/dt = diag(gamma) x + G W x + sigma dW, fixed point 0.

N = 5
_rng = np.random.default_rng(1)
W_LIN = _rng.uniform(0.0, 1.0, (N, N)) * (_rng.uniform(size=(N, N)) < 0.7)  # [target, source]
np.fill_diagonal(W_LIN, 0.0)
GAMMA = -_rng.uniform(0.05, 0.15, N)  # per ms
G_LIN = 0.04
SIGMA = np.array([[0.02, 0.03, 0.015, 0.025, 0.02]])  # per node: the FC depends on ratios
BOLD = nd.Bold(period=720.0, input_scale=2.0)
assert not np.allclose(W_LIN, W_LIN.T)


def _linear_net(G=G_LIN, weights=W_LIN, gamma=GAMMA, sigma=SIGMA):
    return nd.Network(dynamics=nd.LinearDynamics(gamma=jnp.asarray(gamma)),
                      coupling=nd.Linear(G=jnp.asarray(G)), graph=nd.DenseGraph(weights),
                      noise=nd.AdditiveNoise(sigma=jnp.asarray(sigma)))


@eqx.filter_jit
def _linear_fcs(network, bold):
    return (nd.linear_fc(network, bold), nd.linear_fc(network, nd.Raw()),
            nd.linear_fc(network, nd.TemporalAverage(period=4.0)))


def _linear_fcs_np(network, bold=BOLD):
    return jax.tree.map(np.asarray, _linear_fcs(network, bold))


def _abscissa(G, weights=W_LIN, gamma=GAMMA) -> float:
    return float(np.linalg.eigvals(np.diag(gamma) + G * weights).real.max())


def _balloon_at_rest(p) -> np.ndarray:
    """The Balloon's Jacobian (per s) at rest (s, f, v, q) = (0, 1, 1, 1), by hand."""
    kappa, gamma, tau, alpha, e0 = (p[k] for k in ("kappa", "gamma", "tau", "alpha", "E0"))
    dq_df = 1.0 + (1.0 - e0) * np.log(1.0 - e0) / e0
    return np.array([
        [-kappa, -gamma, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0 / tau, -1.0 / (alpha * tau), 0.0],
        [0.0, dq_df / tau, -(1.0 / alpha - 1.0) / tau, -1.0 / tau],
    ])


def test_linear_network_against_scipy():
    bold_fc, raw_fc, average_fc = _linear_fcs_np(_linear_net())
    a_n = np.diag(GAMMA) + G_LIN * W_LIN
    q_n = np.diag(SIGMA[0] ** 2)  # per ms: the increments are sigma sqrt(dt) z
    p = _balloon_params(BOLD)
    assert p["input_offset"] == 0.0  # x* = 0 puts the Balloon at rest
    blocks = [_balloon_at_rest(p) / 1000.0] * N  # per ms
    k_column = [np.array([p["input_scale"], 0.0, 0.0, 0.0]) / 1000.0] * N
    c_row = p["V0"] * np.array([0.0, 0.0, p["k2"] - p["k3"], -(p["k1"] + p["k2"])])
    cov = _bold_covariance(*_assemble_bold(a_n, q_n, 0, N, blocks, k_column, [c_row] * N))
    _close(bold_fc.covariance, cov, 1e-8)
    np.testing.assert_allclose(bold_fc.fc, _fc_of(cov), rtol=0, atol=1e-8)
    neural = scipy.linalg.solve_continuous_lyapunov(a_n, -q_n)
    for out in (raw_fc, average_fc):
        _close(out.covariance, neural, 1e-8)
        np.testing.assert_allclose(out.fc, _fc_of(neural), rtol=0, atol=1e-8)
    # The neural FC is not the BOLD FC (the Balloon filters the fast fluctuations).
    assert np.abs(raw_fc.fc - bold_fc.fc).max() > 0.05
    for out in (bold_fc, raw_fc):
        np.testing.assert_array_equal(out.fixed_point, np.zeros((1, N)))
        np.testing.assert_allclose(out.jacobian, a_n, rtol=0, atol=1e-15)
        assert out.residual == 0.0
        assert out.abscissa == pytest.approx(_abscissa(G_LIN), rel=1e-12)


def test_feed_forward_chain_of_identical_nodes_against_scipy():
    # W strictly lower triangular (each region drives the next ones only) and one gamma:
    # the Jacobian diag(gamma) + G W is one Jordan block. It is stable and its FC exists,
    # but it has no eigendecomposition: method="eig" must refuse (its residual check)
    # rather than return a wrong FC, and method="doubling" must get it right.
    weights = np.tril(np.random.default_rng(2).uniform(0.5, 1.0, (N, N)), -1)
    gamma = np.full(N, -0.1)
    net = _linear_net(G=0.05, weights=weights, gamma=gamma)
    neural = scipy.linalg.solve_continuous_lyapunov(np.diag(gamma) + 0.05 * weights,
                                                     -np.diag(SIGMA[0] ** 2))
    with pytest.raises(eqx.EquinoxRuntimeError, match="method='doubling'"):
        eqx.filter_jit(nd.linear_fc)(net, nd.Raw()).fc.block_until_ready()
    raw = eqx.filter_jit(lambda n: nd.linear_fc(n, nd.Raw(), method="doubling"))(net)
    np.testing.assert_allclose(raw.fc, _fc_of(neural), rtol=0, atol=1e-8)
    assert float(raw.lyapunov_residual) < 1e-12
    bold = eqx.filter_jit(lambda n: nd.linear_fc(n, BOLD, method="doubling"))(net)
    assert np.all(np.isfinite(np.asarray(bold.fc))) and float(bold.lyapunov_residual) < 1e-10
    loss = nd.LinearFcLoss(_fc_of(neural), nd.Raw())  # the loss: NaN, not a wrong value
    assert np.isnan(float(eqx.filter_jit(loss)(net, None)[0]))


def test_bold_under_the_suites_rank_promotion():
    jax.eval_shape(lambda net: nd.linear_fc(net, BOLD).fc, _linear_net())


# ---------------------------------------------------------------------------------------
# The feedback-inhibited two-population Wong-Wang network (nd.presets.rww_ei_fic).

_rng = np.random.default_rng(0)
W_RWW = _rng.uniform(0.0, 1.0, (N, N)) * (_rng.uniform(size=(N, N)) < 0.5)
W_RWW = W_RWW + W_RWW.T
np.fill_diagonal(W_RWW, 0.0)
W_RWW /= W_RWW.max()
LENGTHS = _rng.uniform(50.0, 150.0, (N, N))
LENGTHS = (LENGTHS + LENGTHS.T) / 2
np.fill_diagonal(LENGTHS, 0.0)
I_O = 0.382 * (1.0 + 0.02 * _rng.normal(size=N))  # per-region background current (nA)
MAP = _rng.normal(size=N)
MAP = (MAP - MAP.mean()) / MAP.std()
W_P_BASE, COEFFICIENT = 1.4, 0.03  # w_p = 1.4 (1 + 0.03 map): per region
G_RWW, SIGMA_RWW = 0.43, 0.01
RWW_BOLD = nd.Bold(period=720.0, variables=("S_e",))
TARGET = np.corrcoef(np.random.default_rng(9).normal(size=(30, N)).T)
WFC = np.random.default_rng(10).normal(size=(N, N))

_RWW_BASE = eqx.tree_at(
    lambda m: (m.dynamics.I_o, m.dynamics.w_p),
    nd.presets.rww_ei_fic(W_RWW, LENGTHS, G=G_RWW, sigma=SIGMA_RWW),
    (jnp.asarray(I_O), nd.MapParameter(W_P_BASE, MAP[None], coefficients=[COEFFICIENT])))
RWW_PARAMS = (jnp.asarray(G_RWW), jnp.asarray(I_O), jnp.asarray([COEFFICIENT]))


def _rww_at(params):
    where = lambda m: (m.coupling.G, m.dynamics.I_o, m.dynamics.w_p.coefficients)  # noqa: E731
    return eqx.tree_at(where, _RWW_BASE, tuple(params))


_RWW_LOSS = nd.LinearFcLoss(TARGET, RWW_BOLD, metric="rmse")


def _rww_scalar(params):
    """A scalar of the analytic BOLD FC (the rmse against a fixed FC plus a random linear
    functional of the FC), and the ``LinearFc`` itself."""
    out = nd.linear_fc(_rww_at(params), RWW_BOLD)
    return _RWW_LOSS.loss_of_fc(out.fc)[0] + jnp.sum(jnp.asarray(WFC) * out.fc), out


# One compiled function for the value, its gradient and the LinearFc.
_rww = jax.jit(jax.value_and_grad(_rww_scalar, has_aux=True))


def _rww_fc(params) -> nd.LinearFc:
    return jax.tree.map(np.asarray, _rww(params)[0][1])


class _Wong:
    """The two-population Wong-Wang drift, written from the model's docstring in NumPy,
    for this network without delays (state-major y = [S_E (nodes), S_I (nodes)])."""

    def __init__(self, J_i, G=G_RWW, i_o=I_O, coefficient=COEFFICIENT):
        m = nd.ReducedWongWangExcInh()
        self.p = {k: float(getattr(m, k)) for k in (
            "a_e b_e d_e gamma_e tau_e J_N W_e a_i b_i d_i gamma_i tau_i W_i I_ext lamda"
            .split())}
        self.G_model = 1.0  # rww_ei_fic's own model scale
        self.J_i, self.G, self.i_o = np.asarray(J_i), G, i_o
        self.w_p = W_P_BASE * (1.0 + coefficient * MAP)

    @staticmethod
    def rate(a, b, d, x):
        u = a * x - b
        return u / (1.0 - np.exp(-d * u))

    def currents(self, y):
        p, s_e, s_i = self.p, y[:N], y[N:]
        long_range = self.G_model * p["J_N"] * self.G * (W_RWW @ s_e)
        x_e = (self.w_p * p["J_N"] * s_e - self.J_i * s_i + p["W_e"] * self.i_o + long_range
               + p["I_ext"])
        x_i = p["J_N"] * s_e - s_i + p["W_i"] * self.i_o + p["lamda"] * long_range
        return x_e, x_i

    def rate_e(self, y):
        return self.rate(self.p["a_e"], self.p["b_e"], self.p["d_e"], self.currents(y)[0])

    def __call__(self, y):
        p, s_e, s_i = self.p, y[:N], y[N:]
        x_i = self.currents(y)[1]
        ds_e = -s_e / p["tau_e"] + (1.0 - s_e) * p["gamma_e"] * self.rate_e(y)
        ds_i = -s_i / p["tau_i"] + p["gamma_i"] * self.rate(p["a_i"], p["b_i"], p["d_i"], x_i)
        return np.concatenate([ds_e, ds_i])


def _jacobian_fd(f, y, h=1e-6):
    return np.stack([(f(y + h * e) - f(y - h * e)) / (2 * h) for e in np.eye(y.size)], axis=1)


def _balloon(p, hs, z):
    """The Balloon's vector field (per s), from nd.Bold's docstring."""
    s, f, v, q = hs
    outflow = v ** (1.0 / p["alpha"])
    extraction = (1.0 - (1.0 - p["E0"]) ** (1.0 / f)) / p["E0"]
    return np.array([z - p["kappa"] * s - p["gamma"] * (f - 1.0), s,
                     (f - outflow) / p["tau"], (f * extraction - outflow * q / v) / p["tau"]])


def _bold_signal(p, hs):
    _, _, v, q = hs
    return p["V0"] * (p["k1"] * (1 - q) + p["k2"] * (1 - q / v) + p["k3"] * (1 - v))


@pytest.mark.slow
def test_rww_fic_fixed_point_jacobian_and_bold_covariance():
    out = _rww_fc(RWW_PARAMS)
    J_i = np.asarray(nd.resolve_parameters(_rww_at(RWW_PARAMS)).dynamics.J_i)
    wong = _Wong(J_i)
    y = out.fixed_point.reshape(-1)
    # (a) Feedback inhibition: every region's excitatory rate at 3 Hz, so that
    # S_E* = gamma_E tau_E r / (1 + gamma_E tau_E r); S_I* solves its own balance.
    np.testing.assert_allclose(wong.rate_e(y), 3.0, rtol=1e-10)
    gtr = wong.p["gamma_e"] * wong.p["tau_e"] * 3.0
    np.testing.assert_allclose(y[:N], gtr / (1 + gtr), rtol=1e-12)
    p = wong.p
    for i in range(N):
        drive = p["J_N"] * y[i] + p["W_i"] * I_O[i]
        s_i = scipy.optimize.brentq(lambda s: s - p["tau_i"] * p["gamma_i"] * wong.rate(
            p["a_i"], p["b_i"], p["d_i"], drive - s), 1e-6, 1.0, xtol=1e-15)
        assert y[N + i] == pytest.approx(s_i, rel=1e-10)
    # (b) A fixed point of the drift (and of the NumPy drift).
    assert out.residual < 1e-16
    assert np.abs(wong(y)).max() < 1e-15
    # (c) The Jacobian against central differences of the NumPy drift (error ~1e-11).
    jac = _jacobian_fd(wong, y)
    _close(out.jacobian, jac, 1e-8)
    assert out.abscissa == pytest.approx(np.linalg.eigvals(jac).real.max(), rel=1e-7)
    assert -5e-3 < out.abscissa < -5e-4  # stable, close enough to matter
    # (d) The BOLD covariance: each region's Balloon linearised numerically at its own
    # fixed point for the drive z = S_E* (f = 1 + z / gamma, v = f^alpha, ...).
    bp = _balloon_params(RWW_BOLD)
    blocks, k_column, c_rows = [], [], []
    for i in range(N):
        z = bp["input_scale"] * (y[i] - bp["input_offset"])
        f = 1.0 + z / bp["gamma"]
        v = f ** bp["alpha"]
        h0 = np.array([0.0, f, v, v * (1.0 - (1.0 - bp["E0"]) ** (1.0 / f)) / bp["E0"]])
        assert np.abs(_balloon(bp, h0, z)).max() < 1e-14
        blocks.append(_jacobian_fd(lambda h: _balloon(bp, h, z), h0) / 1000.0)
        k_column.append((_balloon(bp, h0, z + 1e-6) - _balloon(bp, h0, z - 1e-6)) / 2e-6
                        * bp["input_scale"] / 1000.0)
        c_rows.append(_jacobian_fd(lambda h: np.atleast_1d(_bold_signal(bp, h)), h0)[0])
    q_n = SIGMA_RWW**2 * np.eye(2 * N)  # AdditiveNoise on S_E and S_I
    cov = _bold_covariance(*_assemble_bold(jac, q_n, 0, N, blocks, k_column, c_rows))
    _close(out.covariance, cov, 1e-6)
    np.testing.assert_allclose(out.fc, _fc_of(cov), rtol=0, atol=1e-6)


def test_rww_fic_gradients_against_central_differences():
    # Through the fixed point, feedback inhibition's J_i, the Jacobian, the Balloon and the
    # block Lyapunov solve: the coupling G, the per-region I_o and a map coefficient of w_p.
    grad = _rww(RWW_PARAMS)[1]
    value = lambda params: float(_rww(params)[0][0])  # noqa: E731
    rng = np.random.default_rng(3)
    for which, step in ((0, 1e-5), (1, 1e-5), (2, 1e-4)):
        d = rng.normal(size=np.shape(RWW_PARAMS[which]))
        d = d / np.linalg.norm(d) if d.ndim else 1.0
        shift = lambda h: tuple(  # noqa: E731
            x + h * jnp.asarray(d) if k == which else x for k, x in enumerate(RWW_PARAMS))
        fd = (value(shift(step)) - value(shift(-step))) / (2 * step)
        along = float(jnp.sum(grad[which] * jnp.asarray(d)))
        assert abs(fd) > 1e-3, which  # every parameter matters
        np.testing.assert_allclose(along, fd, rtol=1e-5, err_msg=str(which))


# ---------------------------------------------------------------------------------------
# Against a simulation.

def test_linear_network_against_simulation():
    # Heun, dt = 0.5 ms (|lambda| dt < 0.08: the scheme's stationary covariance is within
    # ~0.5 % of the SDE's), 400 s sampled every 5 ms after 5 s. The slowest mode decays
    # in tau = -1 / abscissa = 23 ms: the correlations of two such series have a standard
    # error below (1 - rho^2) / sqrt(N_eff) <= 1 / sqrt(N_eff), with N_eff = T / (2 tau)
    # ~ 8700 effectively independent samples (Bartlett: sum_k rho(k dt)^2 ~ tau / dt
    # for an exponential autocorrelation; halved for safety). 5 standard errors: 0.054,
    # against FC entries of 0.06-0.33 (the FC of the transposed network is 0.19 away).
    # The variances: relative error sqrt(2 / N_eff), 5 of them: 0.076.
    duration, burn = 400_000.0, 5_000.0
    net = _linear_net()
    sol = eqx.filter_jit(lambda net, key: nd.simulate(
        net, nd.Heun(), t0=0.0, t1=duration, dt=0.5, monitors={"raw": nd.Raw(period=5.0)},
        key=key))(net, jax.random.key(3))
    x = np.asarray(sol["raw"])[int(burn / 5.0):, 0, :]
    _, raw_fc, _ = _linear_fcs_np(net)
    n_eff = (duration - burn) / (2 * (-1.0 / _abscissa(G_LIN)))
    np.testing.assert_allclose(np.corrcoef(x.T), raw_fc.fc, rtol=0, atol=5 / np.sqrt(n_eff))
    np.testing.assert_allclose(np.var(x, axis=0), np.diag(raw_fc.covariance),
                               rtol=5 * np.sqrt(2 / n_eff))


# ---------------------------------------------------------------------------------------
# Errors.

def _rww_plain():
    return nd.presets.rww_ei_fic(W_RWW, LENGTHS, G=G_RWW)


@pytest.mark.parametrize("make,monitor,match", [
    (lambda: eqx.tree_at(lambda n: n.noise, _linear_net(), None,
                         is_leaf=lambda x: x is None), nd.Raw(), "no noise"),
    (lambda: eqx.tree_at(lambda n: n.stimulus, _linear_net(), nd.PulseTrain(
        "x", amplitude=1.0, onset=10.0, width=5.0, period=50.0), is_leaf=lambda x: x is None),
     nd.Raw(), "stimulus"),
    (_linear_net, nd.HrfBold(period=720.0), "HrfBold"),
    (_linear_net, nd.LeadField(np.ones((2, N)), 10.0), "LeadField"),
    (_rww_plain, nd.Raw(), r"exactly one state variable.*'S_e', 'S_i'"),
    (_rww_plain, nd.TemporalAverage(period=10.0, variables=("S_e", "S_i")),
     "exactly one state variable"),
    (_rww_plain, nd.Raw(variables=("V",)), "'V'.*not a state variable"),
], ids=["no noise", "stimulus", "HrfBold", "LeadField", "all of two variables",
        "two variables", "unknown variable"])
def test_trace_time_errors(make, monitor, match):
    with pytest.raises(ValueError, match=match):
        nd.linear_fc(make(), monitor)


def test_wrong_initial_shape():
    with pytest.raises(ValueError, match=r"initial must have shape.*\(2, 5\).*\(5,\)"):
        nd.linear_fc(_rww_plain(), nd.Raw(variables="S_e"), initial=np.full(N, 0.1))
    loss = nd.LinearFcLoss(TARGET, nd.Raw(variables="S_e"), initial=np.full((N, 2), 0.1))
    with pytest.raises(ValueError, match=r"initial must have shape"):
        loss(_rww_plain(), None)
    with pytest.raises(ValueError, match="target FC has shape"):
        nd.LinearFcLoss(TARGET[:3, :3], nd.Raw(variables="S_e"))(_rww_plain(), None)


# ---------------------------------------------------------------------------------------
# The stability barrier, and LinearFcLoss in the fitting layer (on the linear network).

RAW_LOSS = nd.LinearFcLoss(TARGET, nd.Raw(), metric="rmse")  # max_abscissa -5e-4, weight 10
_raw_loss = eqx.filter_jit(lambda loss, net, key: loss(net, key))
_raw_residuals = eqx.filter_jit(lambda loss, net, key: loss.residuals(net, key))


def _g_at_abscissa(alpha: float) -> float:
    return scipy.optimize.brentq(lambda g: _abscissa(g) - alpha, 0.0, 1.0, xtol=1e-15)


def test_unstable_network_raises_while_the_loss_pays_a_barrier():
    g_unstable = _g_at_abscissa(0.02)
    with pytest.raises(eqx.EquinoxRuntimeError, match="not stable"):
        _linear_fcs_np(_linear_net(G=g_unstable))
    value, metrics = _raw_loss(RAW_LOSS, _linear_net(G=g_unstable), None)
    assert float(metrics["abscissa"]) == pytest.approx(0.02, rel=1e-8)
    assert np.isnan(value) or np.isfinite(value)
    barrier = 10.0 * ((0.02 + 5e-4) / 5e-4) ** 2
    assert float(metrics["barrier"]) == pytest.approx(barrier, rel=1e-8)
    if np.isfinite(value):
        assert value >= barrier


def test_barrier_is_zero_in_the_trusted_range_and_grows_steeply_beyond():
    alphas = [-0.01, -6e-4, -4e-4, -2.5e-4, -1e-4]
    barriers, values = [], []
    for alpha in alphas:
        value, metrics = _raw_loss(RAW_LOSS, _linear_net(G=_g_at_abscissa(alpha)), None)
        assert float(metrics["abscissa"]) == pytest.approx(alpha, rel=1e-7)
        barriers.append(float(metrics["barrier"]))
        values.append(float(value))
        raw_fc = _linear_fcs_np(_linear_net(G=_g_at_abscissa(alpha)))[1].fc
        fc_part = float(RAW_LOSS.loss_of_fc(jnp.asarray(raw_fc))[0])
        assert values[-1] == pytest.approx(fc_part + barriers[-1], rel=1e-9)
    assert barriers[:2] == [0.0, 0.0]
    want = [10.0 * ((a + 5e-4) / 5e-4) ** 2 for a in alphas[2:]]  # 0.4, 5.6, 25.6
    np.testing.assert_allclose(barriers[2:], want, rtol=1e-6)
    # Steep: 4e-4 per ms beyond max_abscissa, it outweighs the whole FC loss.
    assert barriers[-1] > max(values[:2])


def test_loss_contract_and_ignored_key():
    assert isinstance(RAW_LOSS, nd.AbstractLoss) and isinstance(RAW_LOSS, nd.AbstractFcLoss)
    assert RAW_LOSS.stochastic is False and type(RAW_LOSS).stochastic is False
    assert nd.FcLoss.stochastic is True
    net = _linear_net()
    a = _raw_loss(RAW_LOSS, net, jax.random.key(0))
    b = _raw_loss(RAW_LOSS, net, jax.random.key(1))
    assert float(a[0]) == float(b[0]) and float(a[0]) > 0.0
    assert set(a[1]) >= {"abscissa", "barrier", "fc_r", "rmse"}
    _, raw_fc, _ = _linear_fcs_np(net)
    np.testing.assert_array_equal(_raw_residuals(RAW_LOSS, net, None),
                                  raw_fc.fc[np.triu_indices(N, k=1)])


def test_check_gradient_agrees():
    start = _linear_net(G=0.05)
    check = nd.check_gradient(RAW_LOSS, start, lambda n: n.coupling.G, step=1e-4, rtol=1e-5)
    assert check.settled and check.agree, check
    assert abs(check.gradient) > 1e-2


def test_identifiability_gets_a_fisher_matrix_without_being_told():
    # The loss's own residuals (the FC's upper triangle) give the Gauss-Newton information
    # J^T J; its Hessian (forward over reverse mode through the Lyapunov solve) and gradient.
    # All against central differences of the compiled FC and loss, in (G, gamma).
    where = lambda n: (n.coupling.G, n.dynamics.gamma)  # noqa: E731
    x0 = np.concatenate([[0.05], GAMMA])
    # G as a Python float, as in the tests above (jnp.asarray of it is weakly typed): the
    # compiled FCs and loss are theirs (a NumPy scalar would compile both anew).
    at = lambda x: _linear_net(G=float(x[0]), gamma=x[1:])  # noqa: E731
    out = nd.identifiability(RAW_LOSS, at(x0), where)
    assert out.fisher is not None and out.names[:2] == ("coupling.G", "dynamics.gamma[0]")
    iu = np.triu_indices(N, k=1)
    fc = lambda x: _linear_fcs_np(at(x))[1].fc[iu]  # noqa: E731
    loss = lambda x: float(_raw_loss(RAW_LOSS, at(x), None)[0])  # noqa: E731
    basis = np.eye(x0.size)
    h = 1e-6
    jac = np.stack([(fc(x0 + h * e) - fc(x0 - h * e)) / (2 * h) for e in basis], axis=1)
    np.testing.assert_allclose(out.fisher, jac.T @ jac, rtol=1e-6)
    gradient = [(loss(x0 + h * e) - loss(x0 - h * e)) / (2 * h) for e in basis]
    np.testing.assert_allclose(out.gradient, gradient, rtol=1e-6)
    h = 2e-5  # second differences: truncation ~(h / 0.03)^2 ~ 5e-7, rounding ~1e-16 / h^2
    hessian = np.array([[(loss(x0 + h * (a + b)) - loss(x0 + h * (a - b))
                          - loss(x0 - h * (a - b)) + loss(x0 - h * (a + b))) / (4 * h * h)
                         for b in basis] for a in basis])
    _close(out.hessian, hessian, 1e-5)


@pytest.mark.slow
def test_fit_recovers_the_coupling_of_the_rww_fic_network():
    # The target is the analytic BOLD FC at G = 0.43; the fit starts at 0.30.
    target = _rww_fc(RWW_PARAMS).fc
    loss = nd.LinearFcLoss(target, RWW_BOLD, metric="rmse")
    start = _rww_at((jnp.asarray(0.30),) + RWW_PARAMS[1:])
    fitted, history = nd.fit(start, loss, nd.backtrack(optax.adam(0.02)),
                             where=lambda m: m.coupling.G, steps=40, keep="best")
    assert abs(float(fitted.coupling.G) - G_RWW) < 1e-3
    assert np.nanmin(history.loss) < 1e-3 < history.loss[0]


# ---------------------------------------------------------------------------------------
# float32.

def test_float32_agrees_with_float64():
    want = _linear_fcs_np(_linear_net())
    with jax.enable_x64(False):
        got = _linear_fcs_np(_linear_net())
    for g, w in zip(got, want):
        assert g.fc.dtype == np.float32 and g.covariance.dtype == np.float32
        np.testing.assert_allclose(g.fc, w.fc, rtol=0, atol=1e-4)
        np.testing.assert_allclose(g.covariance, w.covariance, rtol=1e-4)
