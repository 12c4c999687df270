"""``nd.long_check``: the held-out loss at 0.8x and 1.25x each fitted scalar, each held-out
set with its own noise, against the same loss computed point by point here."""

import equinox as eqx
import jax
import numpy as np
import pytest
import scipy.stats
from toy_networks import connectome

import netdyn as nd


def _setup():
    w, lengths = connectome(3)
    preset = nd.presets.MODELS["hopf"]
    net = preset.network(w, lengths, G=0.5)
    target = np.array([[1.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.0]])
    loss = nd.FcLoss(target, nd.Heun(), nd.TemporalAverage(period=50.0, variables=("x",)),
                     duration=2_000.0, dt=1.0, metric="rmse", burn_in=0.0, realisations=2)
    return preset, net, loss


def _rise_by_hand(loss, net, key, at_fit, f):
    """Each set's loss at G times ``f`` minus its loss at the fit, the same noise sets."""
    moved = eqx.tree_at(lambda m: m.coupling.G, net, net.coupling.G * f)
    sets = nd.heldout_scores(loss, moved, key=key, sets=2).sets
    return [s["fit"]["loss"] - a["loss"] for s, a in zip(sets, at_fit)]


def _side_by_hand(r):
    # Every set on one side of the fit and the mean beyond Student's t (95 %, two-sided)
    # standard errors.
    r = np.asarray(r)
    se = r.std(ddof=1) / np.sqrt(r.size)
    t = scipy.stats.t.ppf(0.975, r.size - 1)
    return ("lower" if np.all(r < 0) and r.mean() < -t * se else
            "higher" if np.all(r > 0) and r.mean() > t * se else "flat")


def _check_by_hand(G):
    preset, net, loss = _setup()
    net = eqx.tree_at(lambda m: m.coupling.G, net, G * 1e-3)  # the preset's per-ms units
    key = jax.random.key(3)
    at_fit = [s["fit"] for s in nd.heldout_scores(loss, net, key=key, sets=2).sets]
    check = nd.long_check(loss, net, ["G"], key, at_fit, preset=preset)
    assert check["factors"] == [0.8, 1.25]
    g = check["parameters"]["coupling.G"]
    # Each point by hand: G times the factor, the same two noise sets.
    rise = [_rise_by_hand(loss, net, key, at_fit, f) for f in (0.8, 1.25)]
    np.testing.assert_allclose(g["rise_each"], rise, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g["rise"], np.mean(rise, axis=1), rtol=1e-10, atol=1e-12)
    # In the preset's units (G per second).
    np.testing.assert_allclose(g["values"], [0.8 * G, 1.25 * G], rtol=1e-12)
    assert g["G"] is None and g["outer_G"] is None
    assert check["loss_at_fit"] == pytest.approx(np.mean([a["loss"] for a in at_fit]))
    # A side flat at 0.8x (1.25x) is looked at 0.5x (2x) too.
    sides = [_side_by_hand(r) for r in rise]
    outer = [o for o, side in zip((0.5, 2.0), sides) if side == "flat"]
    assert g["outer_factors"] == outer
    outer_rise = [_rise_by_hand(loss, net, key, at_fit, f) for f in outer]
    np.testing.assert_allclose(np.reshape(g["outer_rise_each"], (-1, 2)),
                               np.reshape(outer_rise, (-1, 2)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g["outer_values"], [f * G for f in outer], rtol=1e-12)
    sides += [_side_by_hand(r) for r in outer_rise]
    assert g["sides"] == sides
    # The bounds: the higher point nearest the fit on each side; the verdict from them.
    factors = [0.8, 1.25, *outer]
    below = [f for f, side in zip(factors, sides) if side == "higher" and f < 1]
    above = [f for f, side in zip(factors, sides) if side == "higher" and f > 1]
    lo, hi = (max(below) * G if below else None), (min(above) * G if above else None)
    assert g["bounds"] == [pytest.approx(lo) if lo else None, pytest.approx(hi) if hi else None]
    means = [float(np.mean(r)) for r in rise + outer_rise]
    lower = [(m, f) for m, f, side in zip(means, factors, sides) if side == "lower"]
    expected = (f"lower at {min(lower)[1]:g}x" if lower else "minimum" if lo and hi else
                "bounded above" if hi else "bounded below" if lo else "flat")
    assert g["verdict"] == expected
    return g


@pytest.mark.parametrize("G", [0.2, 0.6, 1.0])
def test_long_check_is_the_heldout_loss_moved_along_each_value(G):
    # G 0.2: decided at 0.8x and 1.25x (lower below, higher above); 0.6 and 1.0: flat
    # there, so 0.5x and 2x looked at too, flat there as well.
    g = _check_by_hand(G)
    assert g["verdict"] == {0.2: "lower at 0.8x", 0.6: "flat", 1.0: "flat"}[G]
    assert g["outer_factors"] == ([] if G == 0.2 else [0.5, 2.0])


def test_long_check_sides_bounds_and_verdicts():
    from netdyn._evaluation.long_check import _bounds, _side, _verdict, critical_t

    # Mean 0.025, se 0.0029: 8.7 se, beyond t(2 dof) = 4.30; with 2 sets, 5 se < 12.7.
    assert _side(np.array([0.02, 0.025, 0.03])) == "higher"
    assert _side(np.array([0.02, 0.03])) == "flat"
    assert _side(np.array([-0.02, -0.025, -0.03])) == "lower" and _side(np.zeros(3)) == "flat"
    assert _side(np.array([0.02, 0.0201])) == "higher"  # 401 se
    for dof in (1, 2, 5, 30, 31, 100):
        assert critical_t(dof) == pytest.approx(
            scipy.stats.t.ppf(0.975, dof) if dof <= 30 else 1.96, abs=5e-4)
    factors = [0.8, 1.25, 0.5, 2.0]
    for sides, bounds, verdict in [
        (["flat", "higher", "flat"], [None, 12.5], "bounded above"),
        (["flat", "flat", "higher", "flat"], [5.0, None], "bounded below"),
        (["higher", "flat", "higher"], [8.0, 20.0], "minimum"),  # the nearest higher
        (["flat", "flat", "flat", "flat"], [None, None], "flat"),
    ]:
        found = _bounds([0.8, 1.25, *([2.0] if len(sides) == 3 else [0.5, 2.0])], sides,
                        lambda f: 10 * f)
        assert found == bounds, sides
        assert _verdict(factors[:len(sides)], sides, [0.1] * len(sides), found) == verdict
    assert _verdict([0.8, 1.25], ["lower", "lower"], [-0.1, -0.3], [None, None]) == (
        "lower at 1.25x")


def test_relevel_takes_secant_steps_onto_the_level():
    # A mean FC that bends with G (as near the bifurcation): one secant step from the
    # slope at G undershoots; the steps go on until within LEVEL_TOL of the level.
    from netdyn._evaluation.long_check import LEVEL_TOL, _relevel

    preset, net, _ = _setup()
    G0 = float(net.coupling.G)
    calls = []

    def mean_fc(g):
        return 0.3 + 40.0 * (g / G0 - 1) + 2000.0 * (g / G0 - 1) ** 2

    def scores(model):
        g = float(model.coupling.G)
        calls.append(g)
        return [{"mean_fc": mean_fc(g) + d, "loss": 0.0} for d in (-0.01, 0.01)]

    level = 0.5  # mean FC 0.5 at G = 1.0038... G0 (the positive root)
    moved, row = _relevel(net, scores(net), level, scores)
    steps = len(calls) - 2  # less the start and the probe of the slope
    g = float(moved.coupling.G)
    assert abs(np.mean([r["mean_fc"] for r in row]) - level) <= LEVEL_TOL * level
    assert row == scores(moved) and abs(mean_fc(g) - level) <= LEVEL_TOL * level
    root = G0 * (1 + (-40 + np.sqrt(40**2 + 4 * 2000 * 0.2)) / (2 * 2000))
    assert abs(g - root) < 0.01 * G0 and 2 <= steps <= 3  # more than one secant step
    # Already on the level, or a flat mean FC: unchanged.
    assert _relevel(net, [{"mean_fc": 0.3014}] * 2, 0.3, scores)[0] is net
    flat = _relevel(net, [{"mean_fc": 0.2}] * 2, 0.3, lambda m: [{"mean_fc": 0.2}] * 2)
    assert flat[0] is net


def test_long_check_needs_two_sets():
    preset, net, loss = _setup()
    with pytest.raises(ValueError, match="2 or more held-out sets"):
        nd.long_check(loss, net, ["G"], jax.random.key(0), [{"loss": 0.1, "mean_fc": 0.2}])


def _check(**verdicts):
    """A long check's result as ``nd.long_check`` returns it, with these verdicts."""
    return {"factors": [0.8, 1.25], "loss_at_fit": 0.8018, "seconds": 4.2, "parameters": {
        name: {"rise": [0.129, -0.0631], "rise_each": [[0.1, 0.158], [-0.06, -0.0662]],
               "verdict": v, "G": [0.1917, 0.2119] if name != "coupling.G" else None}
        for name, v in verdicts.items()}}


def test_long_check_text():
    text = nd.long_check_text(_check(**{"coupling.G": "flat", "noise.sigma": "lower at 1.25x"}))
    assert text == (
        "change of the loss at the held-out length at 0.8x and 1.25x each fitted value, from "
        "0.8018 at the fit (mean over 2 held-out sets, each with its own noise; 4 s): "
        "coupling.G +0.129 / -0.0631, flat within this length's noise; noise.sigma +0.129 / "
        "-0.0631 (G re-levelled to 0.1917 / 0.2119), lower at 1.25x: the fit is off")
    assert nd.long_check_text(_check(**{"coupling.G": "minimum"})).endswith(
        "coupling.G +0.129 / -0.0631, a minimum")
    # Looked at further out on a flat side: the rise there, and the bound or flat range.
    above = _check(**{"noise.sigma": "bounded above"})
    above["parameters"]["noise.sigma"].update(
        outer_factors=[0.5], outer_rise=[0.0123], values=[0.0023, 0.0035],
        outer_values=[0.0014], bounds=[None, 0.0035])
    assert nd.long_check_text(above).endswith(
        "noise.sigma +0.129 / -0.0631 (0.5x: +0.0123) (G re-levelled to 0.1917 / 0.2119), "
        "higher at 0.0035: bounded above at this length, flat below")
    # A profile's point higher but off the FC level does not bound, and is said so.
    off = _check(**{"noise.sigma": "flat"})
    off["parameters"]["noise.sigma"].update(
        outer_factors=[0.5], outer_rise=[0.01], values=[0.0023, 0.0035], value=0.0028,
        outer_values=[0.0014], bounds=[None, None],
        sides=["flat", "higher off the level", "flat"])
    assert nd.long_check_text(off).endswith(
        "flat within this length's noise from 0.0014 to 0.0028; higher at 0.0035 but off "
        "the FC level there (no bound)")
    flat = _check(**{"noise.sigma": "flat"})
    flat["parameters"]["noise.sigma"].update(
        outer_factors=[0.5, 2.0], outer_rise=[0.01, -0.02], values=[0.0023, 0.0035],
        outer_values=[0.0014, 0.0057], bounds=[None, None])
    assert nd.long_check_text(flat).endswith(
        "(0.5x: +0.01) (2x: -0.02) (G re-levelled to 0.1917 / 0.2119), flat within this "
        "length's noise from 0.0014 to 0.0057")


def test_long_check_caution():
    # Nothing to caution against: every value flat, or a minimum the error bars saw too.
    assert nd.long_check_caution(_check(**{"coupling.G": "flat"}), ["coupling.G"]) is None
    assert nd.long_check_caution(_check(**{"coupling.G": "minimum"})) is None
    assert nd.long_check_caution(_check(**{"coupling.G": "lower at 0.8x"})) == (
        "at the held-out length the loss is lower away from the fitted coupling.G (lower at "
        "0.8x): the fit's short, noisy loss missed its minimum")
    # A minimum at the held-out length for values the error bars left unconstrained.
    check = _check(**{"coupling.G": "minimum", "noise.sigma": "minimum", "a": "flat"})
    assert nd.long_check_caution(check, ["noise.sigma", "a"]) == (
        "noise.sigma: unresolved by the fit's loss, but simulations as long as the held-out "
        "check constrain it")
    check["parameters"]["a"]["verdict"] = "bounded above"
    assert nd.long_check_caution(check, ["a"]) == (
        "a (bounded above): unresolved by the fit's loss, but simulations as long as the "
        "held-out check constrain it")
    assert nd.long_check_caution(check, ["coupling.G", "noise.sigma"]).endswith(
        "coupling.G, noise.sigma: unresolved by the fit's loss, but simulations as long as "
        "the held-out check constrain them")
