"""``FcLoss``: burn-in, noise realisations and the FCD term. Exact continuation, gradients
against finite differences of the same objective, no tape for the burn-in, a stationarity
test against the analytic Ornstein-Uhlenbeck moments of a Stuart-Landau node below its
Hopf bifurcation, and the FCD term against a NumPy loop."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_networks import hopf

import netdyn as nd

N = 4
DT = 0.5
MONITOR = nd.Bold(period=50.0, variables=("x",))
# Gradients are taken under jax.jit: differentiating the loss eagerly compiles its parts
# once more each (forward, linearised, transposed), about twice the time.


def _network(G=0.3):
    return hopf(N, 1, G=G, a=-0.1, omega=0.2, sigma=0.05, max_delay=6.0)


def _loss(**kw):
    kw = {"duration": 500.0, "dt": DT, "metric": "1-r+mean", **kw}
    target = np.corrcoef(np.random.default_rng(2).normal(size=(N, 40)))
    return nd.FcLoss(target, nd.Heun(remat=nd.Uniform(100)), MONITOR, **kw)


def test_burn_in_continues_one_long_run_exactly():
    # G as an array (as the finite differences below pass it): one compiled 700 ms run.
    net, key = _network(G=jnp.asarray(0.3)), jax.random.key(3)
    loss = _loss(burn_in=180.0)  # rounded up to 200 ms, whole BOLD periods
    assert loss.burn_in_simulated == 200.0
    signal = loss.signal(net, key)
    long = nd.simulate(net, nd.Heun(), t0=0.0, t1=700.0, dt=DT, monitors={"s": MONITOR},
                       key=key)
    np.testing.assert_array_equal(np.asarray(signal), np.asarray(long["s"][4:, 0]))


# With -m slow (a third realisation, a burn-in each): the average over realisations of
# independent keys is checked in the default run by
# test_fcd_term_adds_the_wasserstein_distance_of_fcd_values.
@pytest.mark.slow
def test_realisations_average_fc_of_independent_keys():
    net, key = _network(), jax.random.key(4)
    loss = _loss(burn_in=100.0, realisations=3)
    single = _loss(burn_in=100.0)
    fcs = [np.corrcoef(np.asarray(single.signal(net, jax.random.fold_in(key, b))).T)
           for b in range(3)]
    np.testing.assert_allclose(np.asarray(loss.simulated_fc(net, key)), np.mean(fcs, 0),
                               atol=1e-12)
    assert not np.allclose(fcs[0], fcs[1])


# "rmse" with -m slow: its metric's gradient is checked in the default run by
# test_burn_in_gradient_is_the_derivative_of_the_whole_run, the truncation by "1-r+mean".
@pytest.mark.parametrize("metric", ["1-r+mean", pytest.param("rmse", marks=pytest.mark.slow)])
def test_truncated_gradient_matches_finite_differences_of_the_frozen_objective(metric):
    # The burn-in is outside the gradient by design (stop_gradient on its final state):
    # the objective differentiated is the measured run's loss from the burn-in state
    # reached at the current parameters, held fixed. Finite differences of exactly that,
    # written with plain `simulate` calls and numpy's corrcoef.
    net, key = _network(), jax.random.key(5)
    loss = _loss(burn_in=200.0, realisations=2, metric=metric, burn_in_gradient=False)
    G = 0.3
    g = jax.jit(jax.grad(lambda G: loss(eqx.tree_at(lambda n: n.coupling.G, net, G), key)[0]))(
        jnp.asarray(G))
    keys = [jax.random.fold_in(key, b) for b in range(2)]
    warm = [nd.simulate(net, nd.Heun(), t0=0.0, t1=200.0, dt=DT, monitors={"signal": MONITOR},
                        key=k).final for k in keys]
    target = np.asarray(loss.target)
    iu = np.triu_indices(N, 1)

    def frozen_objective(G):
        moved = eqx.tree_at(lambda n: n.coupling.G, net, G)
        fcs = [np.corrcoef(np.asarray(nd.simulate(
            moved, nd.Heun(), t0=200.0, t1=700.0, dt=DT, monitors={"signal": MONITOR}, key=k,
            history=w)["signal"][:, 0]).T) for k, w in zip(keys, warm)]
        f = np.mean(fcs, 0)[iu]
        if metric == "rmse":
            return np.sqrt(np.mean((f - target[iu]) ** 2))
        r = np.corrcoef(f, target[iu])[0, 1]
        return 1 - r + abs(f.mean() - target[iu].mean())

    h = 1e-4  # smaller steps meet the float64 rounding of the 1000-step runs
    # Arrays, not Python floats (static under simulate's filter_jit): one compiled run.
    fd = (frozen_objective(jnp.asarray(G + h)) - frozen_objective(jnp.asarray(G - h))) / (2 * h)
    assert abs(fd) > 1e-3  # the test can fail: the objective depends on G
    np.testing.assert_allclose(float(g), fd, rtol=5e-5)


# With -m slow: its paths, the truncated gradient and the whole run's, are checked exactly
# in the default run by test_truncated_gradient_matches_finite_differences_of_the_frozen_
# objective and test_burn_in_gradient_is_the_derivative_of_the_whole_run.
@pytest.mark.slow
def test_truncated_gradient_approaches_full_gradient_for_long_runs():
    # What the stop_gradient leaves out is the effect of G on the state the measured run
    # starts from; it fades with the system's memory (here ~10 ms of relaxation, 5 ms
    # averaging) against a 2 s measured run, so the truncated gradient is within a few
    # per cent of the derivative of the whole (burn-in + run) objective.
    net, key = _network(), jax.random.key(7)
    monitor = nd.TemporalAverage(period=5.0, variables=("x",))
    loss = nd.FcLoss(_loss().target, nd.Heun(), monitor, duration=2000.0, dt=DT,
                     metric="rmse", burn_in=200.0, burn_in_gradient=False)

    def f(G):
        return loss(eqx.tree_at(lambda n: n.coupling.G, net, G), key)[0]

    def full(G):
        moved = eqx.tree_at(lambda n: n.coupling.G, net, G)
        sol = nd.simulate(moved, nd.Heun(), t0=0.0, t1=2200.0, dt=DT,
                          monitors={"s": monitor}, key=key)
        return nd.rmse(nd.fc(sol["s"][40:]), loss.target)

    g = float(jax.jit(jax.grad(f))(jnp.asarray(0.3)))
    h = 1e-5
    fd = float((full(jnp.asarray(0.3 + h)) - full(jnp.asarray(0.3 - h))) / (2 * h))
    assert abs(fd) > 1e-3
    np.testing.assert_allclose(g, fd, rtol=0.05)


def test_burn_in_gradient_is_the_derivative_of_the_whole_run():
    # burn_in_gradient=True: the derivative of the whole objective (burn-in and measured
    # run as one simulation), against its central finite differences.
    net, key = _network(), jax.random.key(8)
    loss = _loss(burn_in=200.0, metric="rmse", burn_in_gradient=True)
    target = np.asarray(loss.target)
    iu = np.triu_indices(N, 1)

    def whole(G):
        moved = eqx.tree_at(lambda n: n.coupling.G, net, G)
        sol = nd.simulate(moved, nd.Heun(), t0=0.0, t1=700.0, dt=DT,
                          monitors={"s": MONITOR}, key=key)
        f = np.corrcoef(np.asarray(sol["s"][4:, 0]).T)[iu]
        return np.sqrt(np.mean((f - target[iu]) ** 2))

    g = jax.jit(jax.grad(lambda G: loss(eqx.tree_at(lambda n: n.coupling.G, net, G), key)[0]))(
        jnp.asarray(0.3))
    h = 1e-4
    fd = (whole(jnp.asarray(0.3 + h)) - whole(jnp.asarray(0.3 - h))) / (2 * h)
    assert abs(fd) > 1e-3
    np.testing.assert_allclose(float(g), fd, rtol=5e-5)


# The gradient is taken with respect to the whole network, nearest-step delays included.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::netdyn.NearestDelayGradientWarning")
def test_truncated_burn_in_records_no_tape():
    # With burn_in_gradient=False, gradient memory does not grow with the burn-in: it runs
    # outside the tape.
    net = _network()

    # A plain Heun run and a temporal average (without a burn-in's stop_gradient, its
    # 6000 steps would be on the tape next to the measured run's 600).
    def memory(burn_in):
        loss = nd.FcLoss(_loss().target, nd.Heun(), nd.TemporalAverage(period=50.0,
                         variables=("x",)), duration=300.0, dt=DT, burn_in=burn_in,
                         burn_in_gradient=False)
        return nd.gradient_memory(lambda n, k: loss(n, k)[0], net, jax.random.key(0)).temp_bytes

    short, long = memory(100.0), memory(3000.0)
    assert long <= short * 1.05 + 4096, (short, long)


def test_burn_in_removes_transient_of_known_relaxation_time():
    # Uncoupled Stuart-Landau nodes with a = -0.05 /ms, omega = 0, started at x = 0.01:
    # at this amplitude the cubic term is ~1e-4 of a, so each coordinate is an
    # Ornstein-Uhlenbeck process, E x(t) = x0 exp(a t), Var x(t) = s^2 (1 - exp(2 a t)) / (2|a|)
    # with s the noise amplitude. Relaxation time 20 ms: a 300 ms burn-in (15 of them)
    # leaves exp(-15) of the initial offset.
    a, s, x0, R = -0.05, 0.002, 0.01, 512
    net = nd.Network(
        dynamics=nd.SupHopf(a=a, omega=0.0, initial_x=x0),
        coupling=nd.Linear(G=0.0),
        graph=nd.DenseGraph(np.zeros((3, 3))),
        noise=nd.AdditiveNoise(sigma=s),
    )
    raw = nd.Raw(period=10.0, variables=("x",))

    def first_samples(burn_in):
        loss = nd.FcLoss(np.eye(3), nd.Heun(), raw, duration=100.0, dt=0.1, burn_in=burn_in)
        keys = jax.random.split(jax.random.key(6), R)
        return np.asarray(jax.vmap(lambda k: loss.signal(net, k))(keys))  # [R, 10, 3]

    t = 10.0 * np.arange(1, 11)
    sd = s / np.sqrt(2 * abs(a))
    fresh = first_samples(0.0)
    mean = fresh.mean(axis=(0, 2))
    se = sd / np.sqrt(R * 3)
    # Without burn-in the samples carry the transient, as the analytic mean says ...
    np.testing.assert_allclose(mean, x0 * np.exp(a * t), atol=5 * se)
    assert mean[0] > 20 * se
    # ... and after the burn-in they are stationary: zero mean, stationary variance.
    burnt = first_samples(300.0)
    np.testing.assert_allclose(burnt.mean(axis=(0, 2)), 0.0, atol=5 * se)
    var = burnt.var(axis=(0, 2))
    np.testing.assert_allclose(var, sd**2, rtol=0.25)


def test_fc_loss_rejects_bad_settings():
    with pytest.raises(ValueError, match="burn_in"):
        _loss(burn_in=-1.0)
    with pytest.raises(ValueError, match="realisations"):
        _loss(realisations=0)
    with pytest.raises(ValueError, match="metric"):
        _loss(metric="r")


def _fcd_numpy(x, window, step):
    """FCD of ``x`` [time, nodes] by a plain loop: correlation of windowed FC triangles."""
    iu = np.triu_indices(x.shape[1], 1)
    starts = range(0, x.shape[0] - window + 1, step)
    tri = np.array([np.corrcoef(x[s:s + window].T)[iu] for s in starts])
    m = np.corrcoef(tri)
    return m[np.triu_indices(len(tri), 1)]


@pytest.mark.slow
def test_fcd_term_adds_the_wasserstein_distance_of_fcd_values():
    # Against a NumPy oracle: FCD by a loop, W2 between equal-size samples = RMS of the
    # differences of the sorted values. (No burn-in: the FCD term reads the measured runs
    # alone, and each burn-in would be one more compiled run.)
    net, key = _network(), jax.random.key(9)
    plain = _loss(realisations=2, duration=1000.0)
    x = [np.asarray(plain.signal(net, jax.random.fold_in(key, b))) for b in range(2)]
    rng = np.random.default_rng(3)
    window, step = 8, 2
    n_values = 2 * len(_fcd_numpy(x[0], window, step))
    target = np.tanh(rng.normal(0.3, 0.4, n_values))
    with_fcd = _loss(realisations=2, duration=1000.0, fcd_target=target,
                     fcd_window=(window, step), fcd_weight=0.5)
    loss0, _ = plain(net, key)
    # The FC compared: the mean of the realisations' FCs, each with its own key.
    np.testing.assert_allclose(np.asarray(plain.simulated_fc(net, key)),
                               np.mean([np.corrcoef(xi.T) for xi in x], 0), atol=1e-12)
    assert not np.allclose(x[0], x[1])
    # The loss, its metrics and its gradient from one compiled program.
    (loss1, metrics), g = jax.jit(jax.value_and_grad(
        lambda G: with_fcd(eqx.tree_at(lambda n: n.coupling.G, net, G), key), has_aux=True))(
        jnp.asarray(0.3))
    sim = np.sort(np.concatenate([_fcd_numpy(xi, window, step) for xi in x]))
    w2 = np.sqrt(np.mean((sim - np.sort(target)) ** 2))
    np.testing.assert_allclose(float(metrics["fcd_distance"]), w2, rtol=1e-9)
    np.testing.assert_allclose(float(loss1), float(loss0) + 0.5 * w2, rtol=1e-9)
    assert np.isfinite(float(g))
    with pytest.raises(ValueError, match="fcd_window"):
        _loss(duration=500.0, fcd_target=target, fcd_window=(40, 1))
    # The KS form: logistic-smoothed CDFs (h = 0.02) compared on 256 evenly spaced points.
    with_ks = _loss(realisations=2, duration=1000.0, fcd_target=target,
                    fcd_window=(window, step), fcd_weight=0.5, fcd_metric="ks")
    z = np.linspace(min(sim.min(), target.min()), max(sim.max(), target.max()), 256)

    def cdf(v):
        return np.mean(1.0 / (1.0 + np.exp(-(z[:, None] - v[None, :]) / 0.02)), axis=1)

    ks = np.max(np.abs(cdf(sim) - cdf(target)))
    loss2, metrics = with_ks(net, key)
    np.testing.assert_allclose(float(metrics["fcd_distance"]), ks, rtol=1e-9)
    np.testing.assert_allclose(float(loss2), float(loss0) + 0.5 * ks, rtol=1e-9)
    with pytest.raises(ValueError, match="fcd_metric must be 'w2' or 'ks'"):
        _loss(duration=500.0, fcd_target=target, fcd_window=(8, 2), fcd_metric="kl")
