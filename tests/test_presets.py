"""``nd.presets``: each preset equals the network built by hand from its documented values."""

import math
import re

import equinox as eqx
import jax
import numpy as np
import pytest

import netdyn as nd


def _connectome(n=5, seed=0):
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.0, 3.0, (n, n))  # directed: W[target, source]
    np.fill_diagonal(weights, 0.0)
    lengths = rng.uniform(10.0, 200.0, (n, n))
    return weights, lengths


def _assert_same(a, b):
    """Same classes, static fields and structure, and equal leaves."""
    leaves_a, tree_a = jax.tree.flatten(a)
    leaves_b, tree_b = jax.tree.flatten(b)
    assert tree_a == tree_b
    for x, y in zip(leaves_a, leaves_b):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-15, atol=0)


def test_reference_network_is_the_documented_workload():
    weights, lengths = _connectome()
    by_hand = nd.Network(
        dynamics=nd.ReducedWongWang(w=0.5, I_o=0.32, initial_S=0.3),
        coupling=nd.DelayedLinear(G=0.5),
        graph=nd.DelayGraph(weights=weights / weights.max(), delays=lengths / 4.0),
        noise=nd.AdditiveNoise(sigma=0.00283),
    )
    _assert_same(nd.presets.reference_network(weights, lengths), by_hand)
    # The documented TVB defaults the preset does not set.
    assert by_hand.dynamics.gamma == 0.641


def test_reference_network_defaults_to_the_embedded_connectome():
    data = nd.datasets.load("hcp")
    net = nd.presets.reference_network()
    w = np.asarray(data.weights)
    np.testing.assert_allclose(np.asarray(net.graph.weights), w / w.max(), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(net.graph.delays),
                               np.asarray(data.lengths) / 4.0, rtol=1e-15)
    with pytest.raises(ValueError, match="both weights and lengths"):
        nd.presets.reference_network(w, None)


def test_rww_preset_keeps_weights_as_given():
    weights, lengths = _connectome(seed=1)
    by_hand = nd.Network(
        dynamics=nd.ReducedWongWang(w=0.5, I_o=0.32, initial_S=0.3),
        coupling=nd.DelayedLinear(G=0.15, interpolation="linear"),
        graph=nd.DelayGraph(weights=weights, delays=lengths / 2.5),
        noise=nd.AdditiveNoise(sigma=0.001),
    )
    net = nd.presets.rww(weights, lengths, G=0.15, sigma=0.001, speed=2.5,
                         interpolation="linear")
    _assert_same(net, by_hand)


def test_hopf_preset_converts_seconds_to_ms():
    weights, lengths = _connectome(seed=2)
    # Deco et al. (2017): a = -0.02 /s, f = 0.05 Hz, G = 0.5 /s, sigma = 0.02 / sqrt(s).
    by_hand = nd.Network(
        dynamics=nd.SupHopf(a=-0.00002, omega=2 * math.pi * 0.00005),
        coupling=nd.DelayedDifference(G=0.0005),
        graph=nd.DelayGraph(weights=weights, delays=lengths / 4.0),
        noise=nd.AdditiveNoise(sigma=0.02 * math.sqrt(0.001)),
    )
    _assert_same(nd.presets.hopf(weights, lengths), by_hand)


def test_reference_simulation_arguments():
    weights, lengths = _connectome(seed=3)
    kwargs = nd.presets.reference_simulation(weights, lengths, duration=3000.0,
                                             remat=nd.Uniform(100))
    assert set(kwargs) == {"network", "solver", "t0", "t1", "dt", "monitors"}
    assert (kwargs["t0"], kwargs["t1"], kwargs["dt"]) == (0.0, 3000.0, 1.0)
    assert eqx.tree_equal(kwargs["solver"], nd.Heun(remat=nd.Uniform(100)))
    assert eqx.tree_equal(kwargs["monitors"]["bold"], nd.HrfBold(period=1000.0, interim=1.0))
    balloon = nd.presets.reference_simulation(weights, lengths, bold="balloon")
    assert eqx.tree_equal(balloon["monitors"]["bold"], nd.Bold(period=1000.0, variables="S"))
    # The arguments run as documented: three BOLD samples of 3 s.
    sol = nd.simulate(**kwargs, key=jax.random.key(0))
    assert sol["bold"].shape[0] == 3 and np.all(np.isfinite(np.asarray(sol["bold"])))


def test_hopf_units_are_one_table_read_both_ways():
    # In per second, Hz and per sqrt(s): a -0.05 /s, f 0.04 Hz, G 0.7 /s, sigma 0.01.
    w, lengths = _connectome()
    net = nd.presets.hopf(w, lengths, G=0.7, sigma=0.01, a=-0.05, frequency=0.04)
    # Independently: per ms, rad/ms, and a Wiener increment over 1 ms of variance 1e-3 s.
    expected = {"coupling.G": 0.7e-3, "noise.sigma": 0.01 * math.sqrt(1e-3),
                "dynamics.a": -0.05e-3, "dynamics.omega": 2 * math.pi * 0.04 / 1000}
    given = {"coupling.G": 0.7, "noise.sigma": 0.01, "dynamics.a": -0.05,
             "dynamics.omega": 0.04}
    for name, value in expected.items():
        leaf = net
        for part in name.split("."):
            leaf = getattr(leaf, part)
        np.testing.assert_allclose(np.asarray(leaf), value, rtol=1e-12)
        # The table netdyn fit --model hopf reads its options and reports its values by.
        np.testing.assert_allclose(np.asarray(leaf) / nd.presets.HOPF_UNITS[name],
                                   given[name], rtol=1e-12)


def test_models_table_builds_the_presets_with_their_defaults_and_units():
    w, lengths = _connectome()
    hopf = nd.presets.MODELS["hopf"]
    # The defaults of netdyn fit --model hopf, in per second and per sqrt(s).
    _assert_same(hopf.network(w, lengths, speed=2.0),
                 nd.presets.hopf(w, lengths, G=0.5, sigma=0.02, speed=2.0))
    _assert_same(nd.presets.MODELS["rww"].network(w, lengths, G=0.2),
                 nd.presets.rww(w, lengths, G=0.2, sigma=0.00283))
    assert hopf.factor("coupling.G") == 1e-3 and hopf.factor("dynamics.a[3]") == 1e-3
    assert hopf.factor("dynamics.omega") == pytest.approx(2 * math.pi / 1000, rel=1e-15)
    assert nd.presets.MODELS["rww"].factor("coupling.G") == 1.0
    # 0.5 /s is 5e-4 /ms in the network.
    assert hopf.in_preset_units("coupling.G", 5e-4) == pytest.approx(0.5, rel=1e-15)
    # Every parameter with a range is a field of the preset's dynamics.
    for name, preset in nd.presets.MODELS.items():
        net = preset.network(w, lengths)
        assert all(hasattr(net.dynamics, p) for p in preset.bounds), name
        assert preset.crossing in ("rising", "falling")
    assert [n for n, p in nd.presets.MODELS.items() if p.analytic] == ["rww-ei-fic"]
    monitor = nd.presets.MODELS["rww-ei-fic"].signal(720.0, 0.0)
    assert isinstance(monitor, nd.Bold) and monitor.period == 720.0
    assert monitor.integration_step == 10.0


@pytest.mark.parametrize("tr,dt,step", [
    (720.0, 1.0, 10.0), (2000.0, 1.0, 10.0), (645.0, 1.0, 5.0), (720.0, 0.5, 10.0),
    (720.0, 0.3, 9.6), (1.0, 1.0, None), (7.0, 1.0, 7.0), (13.0, 1.0, None),
])
def test_balloon_step_is_the_longest_whole_step_dividing_the_period(tr, dt, step):
    from netdyn._presets.models import balloon_step

    got = balloon_step(tr, dt)
    assert got == (None if step is None else pytest.approx(step, rel=1e-12))
    if got is not None:  # the preset's monitor accepts it, and a run with it works
        bold = nd.presets.MODELS["rww"].signal(tr, 0.0, dt)
        assert bold.integration_step == got and bold.advance_every(dt) == round(got / dt)


def test_select_makes_the_named_parameters_ready_to_fit():
    w, lengths = _connectome()
    preset = nd.presets.MODELS["rww-ei-fic"]
    net = preset.network(w, lengths, G=0.4)
    maps = nd.maps.from_spec("in-strength", w, np.corrcoef(w))
    where, bounds, fitted = nd.presets.select(net, "G, I_o, w_p:global, J_N:maps, input-gain",
                                              preset.bounds, maps)
    assert where.names == ("G", "I_o", "w_p", "J_N", "input-gain")
    assert where.mapped == ("J_N",)
    G, I_o, w_p, c, gains = where(fitted)
    # Independently: G as built, I_o one value per region at its default, w_p one value,
    # J_N along the one map with its coefficient at 0, the log-gains per region at 0.
    assert float(G) == 0.4 and np.shape(G) == ()
    np.testing.assert_array_equal(I_o, np.full(5, float(net.dynamics.I_o)))
    assert float(w_p) == float(net.dynamics.w_p) and np.shape(w_p) == ()
    np.testing.assert_array_equal(c, [0.0])
    np.testing.assert_array_equal(gains, np.zeros(5))
    assert isinstance(fitted.dynamics.J_N, nd.MapParameter)
    assert isinstance(fitted.graph.weights, nd.InputScaling)
    assert isinstance(bounds[0], nd.Positive) and bounds[1] == preset.bounds["I_o"]
    assert (bounds[3].lower, bounds[3].upper) == (-1.0, 1.0)
    assert (bounds[4].lower, bounds[4].upper) == (-2.0, 2.0)
    # The learning rate's share of each: the per-region I_o and log-gains take all of it,
    # the values that move every region at once (G, w_p, J_N's coefficient) a fifth.
    assert where.step_scales(fitted) == (0.2, 1.0, 0.2, 0.2, 1.0)
    assert where.step_scales(fitted, global_step=0.5) == (0.5, 1.0, 0.5, 0.5, 1.0)
    only_global, _, net_global = nd.presets.select(net, "G,w_p:global", preset.bounds)
    assert only_global.step_scales(net_global) is None  # one kind of leaf: all 1
    for spec, message in (("G,nope", "'nope': unknown parameter for this model"),
                          ("G,G", "'G,G' names G twice"),
                          ("I_o:regional", "the suffixes are ':global' and ':maps'"),
                          ("sigma:maps", "only parameters of the dynamics"),
                          ("I_o:maps", "no maps given"),
                          ("input-gain:global", "input-gain is per region")):
        with pytest.raises(ValueError, match=f"^{re.escape('x ')}.*{re.escape(message)}"):
            nd.presets.select(net, spec, preset.bounds, context="x ")


def test_preset_scan_start_is_the_commands_scan_of_G():
    # The rww preset's scan: 5 values of G over [G0 / 3, 3 G0] = [0.05, 0.45] on its
    # falling side, one realisation: nd.scan_start with that grid, by hand.
    w, lengths = _connectome()
    preset = nd.presets.MODELS["rww"]
    net = preset.network(w, lengths)
    target = 0.3 * np.ones((5, 5)) + 0.7 * np.eye(5)
    loss = nd.FcLoss(target, nd.Heun(), preset.signal(720.0, 0.0), duration=7_200.0,
                     dt=1.0, burn_in=0.0, realisations=2)
    key = jax.random.key(0)
    found = preset.scan_start(loss, net, grid=5, bisect=2, key=key)
    by_hand = nd.scan_start(loss.replace(realisations=1), net, lambda n: n.coupling.G,
                            np.linspace(0.15 / 3, 3 * 0.15, 5), key=key, iterations=2,
                            side="falling")
    np.testing.assert_allclose(found.search.values[:5], [0.05, 0.15, 0.25, 0.35, 0.45],
                               rtol=1e-15)
    np.testing.assert_array_equal(found.search.values, by_hand.search.values)
    np.testing.assert_array_equal(found.search.results["loss"], by_hand.search.results["loss"])
    assert (found.start, found.bracket, found.level) == (by_hand.start, by_hand.bracket,
                                                         by_hand.level)
