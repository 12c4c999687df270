"""``nd.plot.fit_figure``: the figure of a fit, its panels read back from the Figure."""

import sys

import numpy as np
import pytest

import netdyn as nd

pytest.importorskip("matplotlib")


def _history(loss, fc_r):
    n = len(loss)
    return nd.FitHistory(step=np.arange(1, n + 1), loss=np.asarray(loss, float),
                         grad_norm=np.ones(n), wall_time=np.ones(n),
                         skipped=np.zeros(n, bool), params={"coupling.G": np.ones(n)},
                         metrics={"fc_r": np.asarray(fc_r, float)})


def _fc(values):
    """A 3 x 3 FC with the upper triangle ``values`` (pairs 01, 02, 12)."""
    f = np.eye(3)
    f[np.triu_indices(3, k=1)] = values
    return f + np.triu(f, k=1).T


def test_fit_figure_draws_the_fit_and_the_heldout_run():
    target = _fc([0.2, 0.4, 0.6])
    fit = _fc([0.3, 0.5, 0.7])  # target + 0.1: r = 1, no pair above 0.9
    heldout = _fc([0.6, 0.4, 0.95])  # one pair of three above 0.9
    fig = nd.plot.fit_figure(_history([0.5, 0.3, 0.2], [0.1, 0.5, 0.9]), target, fit,
                             heldout, title="a fit")
    axes = fig.axes
    assert axes[0].get_title() == "a fit"
    np.testing.assert_array_equal(axes[0].lines[0].get_ydata(), [0.5, 0.3, 0.2])
    titles = [a.get_title() for a in axes]
    assert "r = 1.000, 0 % of pairs > 0.9" in titles
    # heldout against target: r of (0.2, 0.4, 0.6) and (0.6, 0.4, 0.95)
    r = np.corrcoef([0.2, 0.4, 0.6], [0.6, 0.4, 0.95])[0, 1]
    assert f"r = {r:.3f}, 33 % of pairs > 0.9" in titles
    assert "empirical FC, fitted (mean 0.40)" in titles
    assert "simulated, fit noise (mean 0.50)" in titles
    # Without a scan, test subjects or a profile, those panels say so.
    assert "no scan of G (--G given or --grid 0)" in titles and "no test subjects" in titles


def test_fit_figure_without_matplotlib_is_none(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    f = _fc([0.2, 0.4, 0.6])
    assert nd.plot.fit_figure(_history([1.0], [0.5]), f, f, f) is None
