"""``nd.long_check``: the held-out loss at 0.8x and 1.25x each fitted scalar, each held-out
set with its own noise, against the same loss computed point by point here."""

import equinox as eqx
import jax
import numpy as np
import pytest
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


def test_long_check_is_the_heldout_loss_moved_along_each_value():
    preset, net, loss = _setup()
    key = jax.random.key(3)
    at_fit = [s["fit"] for s in nd.heldout_scores(loss, net, key=key, sets=2).sets]
    check = nd.long_check(loss, net, ["G"], key, at_fit, preset=preset)
    assert check["factors"] == [0.8, 1.25]
    g = check["parameters"]["coupling.G"]
    # Each point by hand: G times the factor, the same two noise sets.
    rise = []
    for f in (0.8, 1.25):
        moved = eqx.tree_at(lambda m: m.coupling.G, net, net.coupling.G * f)
        sets = nd.heldout_scores(loss, moved, key=key, sets=2).sets
        rise.append([s["fit"]["loss"] - a["loss"] for s, a in zip(sets, at_fit)])
    np.testing.assert_allclose(g["rise_each"], rise, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g["rise"], np.mean(rise, axis=1), rtol=1e-10, atol=1e-12)
    # In the preset's units (G per second): 0.4 and 0.625.
    np.testing.assert_allclose(g["values"], [0.4, 0.625], rtol=1e-12)
    assert g["G"] is None
    assert check["loss_at_fit"] == pytest.approx(np.mean([a["loss"] for a in at_fit]))
    # The verdict's rule, independently: every set lower on a side and the mean beyond two
    # standard errors; every set higher on both sides and each mean beyond them; else flat.
    r = np.asarray(rise)
    se = r.std(axis=1, ddof=1) / np.sqrt(2)
    lower = [i for i in np.argsort(r.mean(axis=1))
             if np.all(r[i] < 0) and r[i].mean() < -2 * se[i]]
    expected = (f"lower at {(0.8, 1.25)[lower[0]]:g}x" if lower else "minimum"
                if np.all(r > 0) and np.all(r.mean(axis=1) > 2 * se) else "flat")
    assert g["verdict"] == expected


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
    assert nd.long_check_caution(check, ["coupling.G", "noise.sigma"]).endswith(
        "coupling.G, noise.sigma: unresolved by the fit's loss, but simulations as long as "
        "the held-out check constrain them")
