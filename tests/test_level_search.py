"""``level_search``: the start of a fit where the mean FC meets the data's, checked on
closed forms and, on a small simulated network, against a brute-force fine grid."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import netdyn as nd


def _closed(f):
    """``fn`` for ``level_search`` from a NumPy function of G."""
    return lambda g: {"level": f(np.asarray(g)), "loss": np.abs(f(np.asarray(g)))}


# A level shaped like the RWW model's mean FC: flat below a critical G_c, a jump, then a
# decay above it; it meets 0.307 on the falling side at G_c + tau log(0.55 / 0.257).
GC, TAU = 0.2205, 0.0015


def _rww_like(g):
    return np.where(g < GC, 0.05, 0.05 + 0.55 * np.exp(-(g - GC) / TAU))


def test_finds_the_falling_crossing_of_a_narrow_peak():
    found = nd.level_search(_closed(_rww_like), np.linspace(0.05, 0.45, 17), 0.307,
                            iterations=12)
    exact = GC + TAU * np.log(0.55 / 0.257)
    lo, hi = sorted(found.bracket)
    assert lo <= exact <= hi and hi - lo < 1e-5
    # The coarse grid misses the band (its best point is 0.225, level 0.22), the peak
    # search reaches it, the bisection narrows the crossing.
    assert "peak" in found.stage and found.stage[-12:] == ("bisect",) * 12
    assert found.values.shape == found.results["loss"].shape == (len(found.stage),)


def test_rising_side_of_a_peak_when_asked():
    # A smooth peak at 0.3 that meets 0.5 at 0.3 -+ 0.1 sqrt(log 2).
    peak = lambda g: np.exp(-(((g - 0.3) / 0.1) ** 2))  # noqa: E731
    half = 0.1 * np.sqrt(np.log(2.0))
    falling = nd.level_search(_closed(peak), np.linspace(0.0, 1.0, 11), 0.5, iterations=14)
    rising = nd.level_search(_closed(peak), np.linspace(0.0, 1.0, 11), 0.5, iterations=14,
                             side="rising")
    for found, exact in ((falling, 0.3 + half), (rising, 0.3 - half)):
        lo, hi = sorted(found.bracket)
        assert lo <= exact <= hi and hi - lo < 1e-4
    # Only a falling crossing (a level that starts above the target): none to rise through.
    decay = lambda g: np.exp(-g)  # noqa: E731
    assert nd.level_search(_closed(decay), np.linspace(0.0, 2.0, 9), 0.5,
                           side="rising").bracket is None


def test_rising_crossing_of_a_monotone_level():
    found = nd.level_search(_closed(np.tanh), np.linspace(0.05, 0.45, 9), 0.307, iterations=10)
    lo, hi = sorted(found.bracket)
    assert lo <= np.arctanh(0.307) <= hi and hi - lo == pytest.approx(0.05 / 2**10)


def test_extends_beyond_the_edge_towards_the_level():
    found = nd.level_search(_closed(np.tanh), np.linspace(0.05, 0.25, 5), 0.5, iterations=10)
    assert found.stage.count("extend") == 4  # one geometric extension, to 3 x 0.25
    lo, hi = sorted(found.bracket)
    assert lo <= np.arctanh(0.5) <= hi
    # Downwards, on a level that rises as G falls.
    found = nd.level_search(_closed(lambda g: np.tanh(0.1 / g)), np.linspace(0.3, 0.5, 5), 0.5)
    lo, hi = sorted(found.bracket)
    assert "extend" in found.stage and lo <= 0.1 / np.arctanh(0.5) <= hi


@pytest.mark.parametrize("target", [1.5, -0.5])
def test_no_crossing_when_the_level_is_never_or_always_reached(target):
    found = nd.level_search(_closed(np.tanh), np.linspace(0.05, 0.25, 5), target)
    assert found.bracket is None


def test_a_diverged_neighbour_brackets_nothing():
    # A peak at 0.1; on its right the point 0.2 diverged, so 0.2-0.3 is no bracket of the
    # falling crossing, and the rising one, between 0.0 and 0.1, is bisected instead.
    def f(g):
        return np.where(np.isclose(g, 0.2), np.nan, np.exp(-(((g - 0.1) / 0.08) ** 2)))

    found = nd.level_search(_closed(f), np.linspace(0.0, 0.4, 5), 0.5, iterations=8,
                            peak_iterations=0)
    lo, hi = sorted(found.bracket)
    assert lo <= 0.1 - 0.08 * np.sqrt(np.log(2)) <= hi <= 0.1


def test_diverged_points_are_below_every_target():
    def f(g):
        return np.where(g > 0.3, np.nan, np.tanh(10 * g))

    found = nd.level_search(_closed(f), np.linspace(0.0, 0.4, 5), 0.5, iterations=6)
    lo, hi = sorted(found.bracket)
    assert lo <= np.arctanh(0.5) / 10 <= hi


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"values": [0.1, 0.2]}, ">= 3 distinct finite values"),
        ({"values": [0.1, np.nan, 0.3]}, ">= 3 distinct finite values"),
        ({"target": np.inf}, "target must be finite"),
        ({"iterations": -1}, "iterations must be an int >= 0"),
        ({"peak_iterations": -2}, "peak_iterations must be an int >= 0"),
        ({"factor": 1.0}, "factor must be > 1"),
        ({"side": "left"}, "side must be .falling. or .rising."),
        ({"key": "mean_fc"}, "no 'mean_fc' entry"),
    ],
)
def test_bad_arguments(kwargs, message):
    args = {"values": [0.1, 0.2, 0.3], "target": 0.5, **kwargs}
    with pytest.raises(ValueError, match=message):
        nd.level_search(_closed(np.tanh), args.pop("values"), args.pop("target"), **args)


# ---------------------------------------------------------------- a simulated network
MONITOR = {"x": nd.TemporalAverage(period=20.0, variables=("S",))}
KEY = jax.random.key(1)


def _network():
    rng = np.random.default_rng(0)
    w = rng.uniform(0.0, 1.0, (10, 10)) * (rng.uniform(size=(10, 10)) < 0.5)
    np.fill_diagonal(w, 0.0)
    lengths = rng.uniform(10.0, 60.0, (10, 10))
    return nd.Network(dynamics=nd.ReducedWongWang(), coupling=nd.DelayedLinear(G=0.1),
                      graph=nd.DelayGraph.from_lengths(w, lengths, speed=4.0),
                      noise=nd.AdditiveNoise(sigma=0.01))


def _mean_fc(net, G):
    """Mean FC of 8 s of 20 ms averages of S after a 2 s burn-in, one noise key."""
    net = eqx.tree_at(lambda m: m.coupling.G, net, G)
    warm = nd.simulate(net, nd.Heun(), t0=0.0, t1=2000.0, dt=1.0, monitors=MONITOR, key=KEY)
    sol = nd.simulate(net, nd.Heun(), t0=2000.0, t1=10_000.0, dt=1.0, monitors=MONITOR,
                      key=KEY, history=warm.final)
    return jnp.mean(nd.upper_triangle(nd.fc(sol["x"]), k=1))


@pytest.mark.slow
def test_small_network_against_a_brute_force_fine_grid():
    net = _network()
    one = eqx.filter_jit(_mean_fc)
    fine_g = np.linspace(0.0, 0.6, 241)
    fine = np.asarray(eqx.filter_jit(jax.vmap(_mean_fc, in_axes=(None, 0)))(net, fine_g))
    peak = int(np.argmax(fine))
    target = 0.5 * (fine[peak] + fine[-1])  # met on the falling side, above the peak
    # The brute-force answer: the first fine point past the peak whose level is below.
    j = peak + int(np.flatnonzero(fine[peak:] < target)[0])
    assert np.all(np.diff(fine[peak:j + 1]) < 0)  # falls monotonically to it

    def fn(g):
        return {"level": np.array([float(one(net, jnp.asarray(x))) for x in g])}

    found = nd.level_search(fn, np.linspace(0.05, 0.55, 3), target, iterations=10)
    lo, hi = sorted(found.bracket)
    # The same crossing: the two brackets overlap, and the search's is far narrower.
    assert hi - lo < 0.2 * (fine_g[1] - fine_g[0])
    assert fine_g[j - 1] <= hi and lo <= fine_g[j]
    # Every level it evaluated is that of the fine grid's function (same noise).
    assert float(one(net, jnp.asarray(fine_g[j]))) == pytest.approx(fine[j], rel=1e-10)
