"""Parameterisations (map-based, mean-free deviations, connectivity scaling), feedback
inhibition control and regional maps: values against NumPy formulas, gradients through a
simulation against central finite differences, FIC against an independent root finder and
against the rates a simulation settles to."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq
from toy_networks import connectome

import netdyn as nd

N = 6


def _rww(**dynamics):
    weights, delays = connectome(N)
    return nd.Network(
        dynamics=nd.ReducedWongWang(w=0.5, **dynamics),
        coupling=nd.DelayedLinear(G=0.4),
        graph=nd.DelayGraph(weights, delays),
        noise=nd.AdditiveNoise(sigma=0.01),
    )


def _loss(net, key):
    sol = nd.simulate(net, nd.Heun(remat=nd.Uniform(50)), t0=0.0, t1=200.0, dt=0.5,
                      monitors={"avg": nd.TemporalAverage(period=10.0)}, key=key)
    x = sol["avg"][:, 0]
    return jnp.mean(x**2) + jnp.mean(x[:, 0] * x[:, 3]), {}


def _maps():
    rng = np.random.default_rng(0)
    return np.stack([nd.maps.zscore(rng.standard_normal(N)), nd.maps.zscore(np.arange(N))])


def _compiled_gradient(net, where):
    """The leaves ``where`` selects and one compiled ``value_and_grad`` of ``_loss`` (on
    common noise) in them: the values of the differences come from the same program (a
    second program for the values alone cost as much to compile as the gradient's)."""
    key = jax.random.key(2)
    leaves = [jnp.asarray(x) for x in jax.tree.leaves(where(net))]

    def f(leaves):
        return _loss(eqx.tree_at(lambda n: jax.tree.leaves(where(n)), net, leaves), key)[0]

    return leaves, jax.jit(jax.value_and_grad(f))


def _assert_along(leaves, value_and_grad, d, step=1e-5):
    """The gradient along ``d`` (unit norm) against central differences at ``step`` and
    ``step / 2``, as ``nd.check_gradient`` takes them."""
    gradient = sum(float(jnp.sum(g * v)) for g, v in zip(value_and_grad(leaves)[1], d))

    def fd(h):
        plus = value_and_grad([x + h * v for x, v in zip(leaves, d)])[0]
        minus = value_and_grad([x - h * v for x, v in zip(leaves, d)])[0]
        return (float(plus) - float(minus)) / (2 * h)

    full, half = fd(step), fd(step / 2)
    assert abs(full - half) <= 0.05 * abs(half), (full, half)  # settled
    assert gradient == pytest.approx(half, rel=1e-4), (gradient, half)
    assert abs(gradient) > 1e-8  # the direction matters to the loss


def _random_direction(leaves, seed, only=None):
    """A random unit direction over ``leaves`` (over those numbered in ``only``: zero on
    the others)."""
    rng = np.random.default_rng(seed)
    d = [rng.normal(size=x.shape) * (only is None or k in only) for k, x in enumerate(leaves)]
    norm = np.sqrt(sum(float(np.sum(v * v)) for v in d))
    return [jnp.asarray(v / norm) for v in d]


def _assert_gradient_matches(net, where, seed=1, step=1e-5):
    leaves, value_and_grad = _compiled_gradient(net, where)
    _assert_along(leaves, value_and_grad, _random_direction(leaves, seed), step)


def test_map_parameter_value_is_the_formula():
    maps = _maps()
    p = nd.MapParameter(0.32, maps, coefficients=[0.1, -0.05], names=("noise", "rank"))
    expected = 0.32 * (1.0 + 0.1 * maps[0] - 0.05 * maps[1])
    np.testing.assert_allclose(p.value(), expected, rtol=1e-15)
    assert p.names == ("noise", "rank")
    # One map may be given as a vector; coefficients default to the homogeneous model.
    q = nd.MapParameter(0.5, maps[1])
    assert q.names == ("map0",)
    np.testing.assert_array_equal(q.value(), np.full(N, 0.5))


def test_a_parameterisation_simulates_as_its_value():
    maps = _maps()
    p = nd.MapParameter(0.32, maps, coefficients=[0.02, 0.01])
    with_map = _rww(I_o=p)
    with_array = _rww(I_o=p.value())
    key = jax.random.key(0)

    def run(net):  # the whole trajectory, from a short plain run (compiled for each form)
        return nd.simulate(net, nd.Heun(), t0=0.0, t1=50.0, dt=0.5,
                           monitors={"raw": nd.Raw()}, key=key)["raw"]

    a, b = run(with_map), run(with_array)
    assert float(jnp.std(a[:, 0])) > 0
    np.testing.assert_array_equal(a, b)


def _nested_gain():
    """Input log-gains along the maps: log g_i = sum_k c_k M_ki (an absolute map with
    baseline 0)."""
    return nd.MapParameter(0.0, _maps(), coefficients=[0.3, -0.2], relative=False)


def _hopf(a):
    """Stuart-Landau nodes with a regional bifurcation parameter ``a`` (slow: 20 ms
    periods on a 200 ms run, damped near the bifurcation)."""
    weights, delays = connectome(N)
    return nd.Network(
        dynamics=nd.SupHopf(a=a, omega=0.3),
        coupling=nd.DelayedDifference(G=0.2),
        graph=nd.DelayGraph(weights, delays),
        noise=nd.AdditiveNoise(sigma=0.05),
    )


@pytest.fixture(scope="module")
def parameterised():
    """One RWW network with three parameterisations at once (a map-based I_o, mean-free
    deviations of w, per-edge log-gains of the weights), its leaves and one compiled
    gradient in all of them: each parameterisation is then checked along its own leaves,
    without compiling a program for each."""
    rng = np.random.default_rng(4)
    net = _rww()
    net = eqx.tree_at(
        lambda n: (n.dynamics.I_o, n.dynamics.w, n.graph.weights), net,
        (nd.MapParameter(0.33, _maps(), coefficients=[0.01, -0.02]),
         nd.RegionalDeviation(jnp.asarray(0.5), jnp.asarray(0.05 * rng.standard_normal(N))),
         nd.EdgeScaling(net.graph.weights, jnp.asarray(0.1 * rng.standard_normal((N, N))))))
    where = lambda n: (n.dynamics.I_o.baseline, n.dynamics.I_o.coefficients,  # noqa: E731
                       n.dynamics.w.deviations, n.graph.weights.log_gain)
    return _compiled_gradient(net, where)


@pytest.mark.parametrize("kind, only", [("map", (0, 1)), ("deviation", (2,)), ("edge", (3,))])
def test_gradient_through_a_parameterisation_matches_finite_differences(parameterised, kind,
                                                                        only):
    leaves, value_and_grad = parameterised
    _assert_along(leaves, value_and_grad, _random_direction(leaves, 1, only))


# InputScaling's gradient: also through the "hopf" case (test_parameterisations_nest_and_
# resolve_innermost_first's log-gains along a map), in the default run.
@pytest.mark.parametrize("kind", [pytest.param("input", marks=pytest.mark.slow), "hopf"])
def test_gradient_through_a_parameterisation_of_its_own_matches_finite_differences(kind):
    if kind == "hopf":
        # Heterogeneous Hopf: each region's distance from its bifurcation along two maps;
        # in the same network (one compiled gradient) the nested input gains of
        # test_parameterisations_nest_and_resolve_innermost_first. Each checked along its
        # own leaves.
        net = _hopf(nd.MapParameter(-0.05, _maps(), coefficients=[0.4, -0.3]))
        net = eqx.tree_at(lambda n: n.graph.weights, net,
                          nd.InputScaling(net.graph.weights, _nested_gain()))
        where = lambda n: (n.dynamics.a.baseline, n.dynamics.a.coefficients,  # noqa: E731
                           n.graph.weights.log_gain.coefficients)
        leaves, value_and_grad = _compiled_gradient(net, where)
        for only in ((0, 1), (2,)):
            _assert_along(leaves, value_and_grad, _random_direction(leaves, 1, only))
        return
    else:
        net = _rww()
        net = eqx.tree_at(lambda n: n.graph.weights, net, nd.InputScaling(
            net.graph.weights, jnp.asarray(0.1 * np.random.default_rng(4).standard_normal(N))))
        where = lambda n: n.graph.weights.log_gain  # noqa: E731
    _assert_gradient_matches(net, where)


def test_deviations_are_mean_free_and_keep_the_baseline():
    d = nd.RegionalDeviation(jnp.asarray(0.3), jnp.asarray([1.0, 2.0, 6.0]))
    np.testing.assert_allclose(d.value(), [0.3 - 2.0, 0.3 - 1.0, 0.3 + 3.0], rtol=1e-15)
    g = jax.grad(lambda d: jnp.sum(d.value() * jnp.asarray([1.0, 0.0, 0.0])))(d)
    # Moving every deviation together changes nothing: the gradient sums to zero.
    assert float(jnp.sum(g.deviations)) == pytest.approx(0.0, abs=1e-15)


def test_connectivity_scaling_formulas_and_the_structural_mask():
    weights, _ = connectome(N)
    g = np.random.default_rng(1).standard_normal(N)
    np.testing.assert_allclose(nd.InputScaling(jnp.asarray(weights), jnp.asarray(g)).value(),
                               np.exp(g)[:, None] * weights, rtol=1e-14)
    G = np.random.default_rng(2).standard_normal((N, N))
    e = nd.EdgeScaling(jnp.asarray(weights), jnp.asarray(G))
    np.testing.assert_allclose(e.value(), np.exp(G) * weights, rtol=1e-14)
    grad = jax.grad(lambda e: jnp.sum(e.value() ** 2))(e).log_gain
    assert np.all(np.asarray(grad)[weights == 0] == 0)
    assert np.all(np.asarray(grad)[weights > 0] > 0)


def _resolved_loss(net, key):
    """A loss of the resolved parameters alone (the gradient through a simulation of a
    map-based I_o: test_gradient_through_a_parameterisation_matches_finite_differences)."""
    return jnp.sum((nd.resolve_parameters(net).dynamics.I_o - jnp.linspace(0.3, 0.36, N))
                   ** 2), {}


def test_fit_trains_map_coefficients():
    net = _rww(I_o=nd.MapParameter(0.33, _maps()))
    fitted, history = nd.fit(net, _resolved_loss, __import__("optax").sgd(1e-1),
                             where=lambda n: n.dynamics.I_o.coefficients, steps=2,
                             key=jax.random.key(0), progress=False)
    assert isinstance(fitted.dynamics.I_o, nd.MapParameter)
    assert not np.allclose(fitted.dynamics.I_o.coefficients, 0.0)
    np.testing.assert_array_equal(fitted.dynamics.I_o.maps, net.dynamics.I_o.maps)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: nd.MapParameter(0.3, np.ones((2, 3)), coefficients=[1.0]), "coefficients"),
        (lambda: nd.MapParameter(0.3, np.ones((2, 3)), names=("a",)), "names"),
        (lambda: nd.MapParameter(0.3, np.full(3, np.nan)), "finite"),
        (lambda: nd.MapParameter(0.3, np.ones((2, 3, 1))), "maps"),
        (lambda: nd.MapParameter(jnp.ones(2), np.ones((1, 2))), "baseline"),
        (lambda: nd.RegionalDeviation(0.3, jnp.ones((2, 2))), "deviations"),
        (lambda: nd.InputScaling(jnp.ones((3, 3)), jnp.ones(4)), r"log_gain.*\(3,\)"),
        (lambda: nd.EdgeScaling(jnp.ones((3, 3)), jnp.ones(3)), r"log_gain.*\(3, 3\)"),
        (lambda: nd.InputScaling(jnp.ones((3, 2)), jnp.ones(3)), "square"),
    ],
)
def test_bad_parameterisations_are_refused(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_a_map_of_the_wrong_length_names_the_model():
    net = _rww(I_o=nd.MapParameter(0.33, np.ones((1, N + 1))))
    with pytest.raises(ValueError, match="ReducedWongWang parameters do not fit"):
        _loss(net, jax.random.key(0))


# ---------------------------------------------------------------------------------------
# Feedback inhibition control
# ---------------------------------------------------------------------------------------


def _exc_inh(G=0.3, **dynamics):
    weights, delays = connectome(N)
    return nd.Network(
        dynamics=nd.ReducedWongWangExcInh(G=1.0, J_i=nd.FeedbackInhibition(), **dynamics),
        coupling=nd.DelayedLinear(G=G),
        graph=nd.DelayGraph(weights, delays),
    )


def _numpy_fic(weights, G, target=3.0, I_o=0.382, lamda=0.0):
    """FIC from TVB's equations with SciPy's brentq, node by node (independent of netdyn)."""
    a_e, b_e, d_e, g_e, t_e, w_p, J_N, W_e = 310.0, 125.0, 0.16, 0.641e-3, 100.0, 1.4, 0.15, 1.0
    a_i, b_i, d_i, g_i, t_i, W_i, G_model = 615.0, 177.0, 0.087, 1e-3, 10.0, 0.7, 1.0

    def H(a, b, d, x):
        u = a * x - b
        return u / (1.0 - np.exp(-d * u))

    s_e = g_e * t_e * target / (1.0 + g_e * t_e * target)
    x_e = brentq(lambda x: H(a_e, b_e, d_e, x) - target, 0.0, 2.0, xtol=1e-15)
    J = []
    for i in range(weights.shape[0]):
        c = G * weights[i].sum() * s_e
        drive = J_N * s_e + W_i * I_o + lamda * G_model * J_N * c
        s_i = brentq(lambda s: s - t_i * g_i * H(a_i, b_i, d_i, drive - s), 0.0, 1.0,
                     xtol=1e-15)
        J.append((w_p * J_N * s_e + W_e * I_o + G_model * J_N * c - x_e) / s_i)
    return np.asarray(J)


@pytest.mark.parametrize("lamda", [0.0, 0.5])
def test_fic_matches_an_independent_root_finder(lamda):
    net = _exc_inh(G=0.3, lamda=lamda)
    J_i = nd.resolve_parameters(net).dynamics.J_i
    expected = _numpy_fic(np.asarray(net.graph.weights), 0.3, lamda=lamda)
    np.testing.assert_allclose(J_i, expected, rtol=1e-10)
    assert np.ptp(expected) > 0.05  # regions differ: the in-strengths do


def test_fic_network_settles_at_the_target_rate():
    net = _exc_inh(G=0.3)
    m = nd.resolve_parameters(net).dynamics
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=4000.0, dt=0.5,
                      monitors={"raw": nd.Raw(period=500.0)})
    y = np.asarray(sol["raw"])[-1]
    c = 0.3 * np.asarray(net.graph.weights) @ y[0]
    x_e = m.w_p * m.J_N * y[0] - np.asarray(m.J_i) * y[1] + m.W_e * m.I_o + m.G * m.J_N * c
    np.testing.assert_allclose(np.asarray(m.rate_e(x_e)), 3.0, rtol=1e-6)


# I_o and w_p with -m slow: I_o enters the root problem as G does (the drive), w_p only the
# closed form after it; the G and target-rate cases cover both paths in the default run.
@pytest.mark.parametrize("where", [
    lambda n: n.coupling.G,
    pytest.param(lambda n: n.dynamics.I_o, marks=pytest.mark.slow),
    lambda n: n.dynamics.J_i.target_rate,
    pytest.param(lambda n: n.dynamics.w_p, marks=pytest.mark.slow),
])
def test_fic_gradient_matches_finite_differences(where):
    net = _exc_inh(G=0.3)
    net = eqx.tree_at(where, net, jnp.asarray(where(net), dtype=float))
    f = lambda n: jnp.sum(nd.resolve_parameters(n).dynamics.J_i * jnp.arange(1.0, N + 1))  # noqa: E731
    check = nd.check_gradient(lambda n, key: (f(n), {}), net, where, step=1e-5)
    assert check.gradient == pytest.approx(check.finite_difference_half, rel=1e-7)


def test_fic_needs_the_exc_inh_model():
    weights, delays = connectome(N)
    net = nd.Network(nd.ReducedWongWang(I_o=nd.FeedbackInhibition()), nd.DelayedLinear(),
                     nd.DelayGraph(weights, delays))
    with pytest.raises(ValueError, match="FeedbackInhibition sets J_i of a "
                                         "ReducedWongWangExcInh"):
        nd.resolve_parameters(net)


# ---------------------------------------------------------------------------------------
# Maps
# ---------------------------------------------------------------------------------------


def test_in_strength_map_is_the_zscored_row_sum():
    weights, _ = connectome(N)
    s = weights.sum(axis=1)
    np.testing.assert_allclose(nd.maps.in_strength(weights), (s - s.mean()) / s.std(),
                               rtol=1e-13)


def test_fc_gradient_recovers_a_one_dimensional_ordering():
    # Regions on a line, FC falling with distance: the principal gradient is the position
    # (a diffusion map of a one-dimensional manifold is monotone along it).
    rng = np.random.default_rng(0)
    t = rng.permutation(np.linspace(0.0, 1.0, 40))
    fc = np.exp(-((t[:, None] - t[None, :]) ** 2) / 0.05)
    g = nd.maps.fc_gradient(fc, sparsity=0.7)
    order = np.argsort(t)
    assert np.all(np.diff(g[order]) > 0) or np.all(np.diff(g[order]) < 0)
    assert g.mean() == pytest.approx(0.0, abs=1e-12) and g.std() == pytest.approx(1.0)
    # The second gradient of a line is the second harmonic: one extreme at each end, the
    # other in the middle (U-shaped along the line), and uncorrelated with the first.
    g2 = nd.maps.fc_gradient(fc, sparsity=0.7, component=2)
    along = g2[order]
    assert np.sign(along[0]) == np.sign(along[-1]) != np.sign(along[len(along) // 2])
    assert abs(np.corrcoef(g, g2)[0, 1]) < 0.1


def test_a_map_file_is_read_with_or_without_its_name(tmp_path):
    values = np.array([0.5, 1.5, 2.0, 4.0])
    expected = (values - values.mean()) / values.std()  # z-scored by hand
    named = tmp_path / "myelin.csv"
    named.write_text("T1w/T2w,\n0.5,\n1.5,\n2.0,\n4.0\n")
    plain = tmp_path / "thickness.txt"
    plain.write_text("0.5 1.5\t2.0\n4.0")
    name, got = nd.maps.read(named, n_regions=4)
    assert name == "T1w/T2w"
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    name, got = nd.maps.read(plain, 4)
    assert name == "thickness"
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    for text, message in (("1 2 3", "3 values for 4 regions"), ("1 2 x 4", "'x' is not a "
                          "number"), ("2 2 2 2", "constant")):
        plain.write_text(text)
        with pytest.raises(ValueError, match=f"{plain}: .*{message}"):
            nd.maps.read(plain, 4)
    with pytest.raises(ValueError, match="cannot read the file"):
        nd.maps.read(tmp_path / "missing.txt", 4)


def test_maps_refuse_bad_input():
    with pytest.raises(ValueError, match="constant"):
        nd.maps.zscore(np.ones(5))
    with pytest.raises(ValueError, match="square"):
        nd.maps.in_strength(np.ones((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        nd.maps.fc_gradient(np.full((4, 4), np.nan))
    with pytest.raises(ValueError, match="sparsity"):
        nd.maps.fc_gradient(np.eye(4), sparsity=1.0)
    with pytest.raises(ValueError, match="component must be an int from 1 to 3"):
        nd.maps.fc_gradient(np.eye(4), component=4)


def test_parameterisations_nest_and_resolve_innermost_first():
    # Input gains along a map: log g_i = sum_k c_k M_ki (an absolute map with baseline 0).
    weights, _ = connectome(N)
    maps = _maps()
    net = eqx.tree_at(lambda n: n.graph.weights, _rww(), nd.InputScaling(weights,
                                                                         _nested_gain()))
    resolved = nd.resolve_parameters(net).graph.weights
    expected = np.exp(0.3 * maps[0] - 0.2 * maps[1])[:, None] * weights
    np.testing.assert_allclose(resolved, expected, rtol=1e-14)
    # Its gradient through a simulation: in the "hopf" case of
    # test_gradient_through_a_parameterisation_of_its_own_matches_finite_differences.


def test_fic_refuses_an_unreachable_target_rate():
    # Too little excitation everywhere (I_o = 0.2 nA): no J_i >= 0 gives 3 Hz.
    net = _exc_inh(G=0.3, I_o=0.2)
    with pytest.raises(Exception, match="too weak to reach the target rate"):
        nd.resolve_parameters(net).dynamics.J_i.block_until_ready()


def test_maps_from_spec_stacks_the_named_maps(tmp_path):
    rng = np.random.default_rng(0)
    w = rng.uniform(0.0, 1.0, (5, 5))
    fc = np.corrcoef(rng.normal(size=(5, 40)))
    (tmp_path / "m.txt").write_text("myelin\n1 2 3 4 6\n")
    maps = nd.maps.from_spec(f"in-strength, fc-gradient,{tmp_path / 'm.txt'}", w, fc)
    assert maps.names == ("in-strength", "fc-gradient", "myelin")
    s = w.sum(axis=1)  # independently: z-scored in-strength and file values
    np.testing.assert_allclose(maps.values[0], (s - s.mean()) / s.std(), rtol=1e-12)
    np.testing.assert_allclose(maps.values[1], nd.maps.fc_gradient(fc), rtol=1e-12)
    v = np.array([1, 2, 3, 4, 6.0])
    np.testing.assert_allclose(maps.values[2], (v - v.mean()) / v.std(), rtol=1e-12)
    with pytest.raises(ValueError, match="names in-strength twice"):
        nd.maps.from_spec("in-strength,in-strength", w, fc)
    with pytest.raises(ValueError, match="give at least one map"):
        nd.maps.from_spec(" , ", w, fc)
