"""``nd.scan_start`` on a loss whose mean FC is a known bump in G: the start brackets the
analytic crossing on the side asked for, the level is the target's, diverged points are
never the start, and a value that never reaches the level gives no start."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtyping import Array

import netdyn as nd
from netdyn._loss._base import AbstractFcLoss

N = 5
PEAK, WIDTH, HEIGHT = 0.5, 0.1, 0.8


class Toy(eqx.Module):
    G: Array


class BumpLoss(AbstractFcLoss):
    """Every pair's FC is HEIGHT exp(-((G - PEAK) / WIDTH)^2); NaN beyond G = 0.9 (a
    diverged simulation)."""

    target: Array
    metric: str = "rmse"
    level_width: float = 0.05
    stochastic: ClassVar[bool] = False

    def model_fc(self, model, key):
        rho = HEIGHT * jnp.exp(-(((model.G - PEAK) / WIDTH) ** 2))
        rho = jnp.where(model.G > 0.9, jnp.nan, rho)
        return (1 - rho) * jnp.eye(N) + rho * jnp.ones((N, N))

    def __call__(self, model, key):
        return self.loss_of_fc(self.model_fc(model, key))

    def evaluate(self, model, key):
        return *self(model, key), self.model_fc(model, key)

    def fitted_to(self, runs):
        return self.replace(target=nd.runs_fc(runs))


def _target(level):
    return (1 - level) * np.eye(N) + level * np.ones((N, N))


@pytest.mark.parametrize("side, sign", [("falling", 1.0), ("rising", -1.0)])
def test_start_next_to_the_analytic_crossing_on_the_side_asked_for(side, sign):
    level = 0.4
    root = PEAK + sign * WIDTH * np.sqrt(np.log(HEIGHT / level))  # 0.5833 or 0.4167
    seen = []
    found = nd.scan_start(BumpLoss(_target(level)), Toy(jnp.asarray(0.05)), lambda m: m.G,
                          np.linspace(0.05, 1.0, 9), key=None, iterations=8, side=side,
                          on_point=seen.append)
    assert found.level == pytest.approx(level, abs=1e-12)
    lo, hi = sorted(found.bracket)
    assert lo <= root <= hi and hi - lo < 0.95 / 8 / 2**7
    assert abs(found.start - root) <= hi - lo + 1e-12
    assert seen == list(found.search.values)
    # The grid's points past 0.9 diverged and were skipped, never the start.
    assert np.isnan(found.search.results["loss"][found.search.values > 0.9]).all()


def test_a_level_never_reached_gives_no_start():
    found = nd.scan_start(BumpLoss(_target(0.95)), Toy(jnp.asarray(0.05)), lambda m: m.G,
                          np.linspace(0.05, 0.85, 5), key=None, iterations=3)
    assert found.start is None and found.bracket is None


def test_where_must_select_a_scalar():
    with pytest.raises(ValueError, match="where must select one scalar"):
        nd.scan_start(BumpLoss(_target(0.4)), Toy(jnp.zeros(3)), lambda m: m.G, [0.1, 0.2],
                      key=None)


@pytest.mark.parametrize("tolerance, at_peak", [(0.1, True), (0.04, False)])
def test_a_level_just_out_of_reach_starts_at_the_peak_within_tolerance(tolerance, at_peak):
    # The bump peaks at 0.8 at G = 0.5; the target's level 0.85 is 0.05 above it.
    found = nd.scan_start(BumpLoss(_target(0.85)), Toy(jnp.asarray(0.05)), lambda m: m.G,
                          np.linspace(0.05, 0.85, 9), key=None, iterations=3,
                          tolerance=tolerance)
    assert found.bracket is None and found.at_peak is at_peak
    if at_peak:
        # The peak search's best point: within its last bracket of the analytic peak.
        assert abs(found.start - PEAK) < 0.01
        assert found.start == found.search.values[np.argmax(found.search.results["mean_fc"])]
    else:
        assert found.start is None


def test_a_level_everywhere_exceeded_never_starts_at_the_peak():
    # Every value's mean FC is above a target of 0: no crossing, and no peak start.
    found = nd.scan_start(BumpLoss(_target(0.0)), Toy(jnp.asarray(0.05)), lambda m: m.G,
                          np.linspace(0.4, 0.6, 5), key=None, iterations=3, tolerance=1.0)
    assert found.start is None and not found.at_peak


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_tolerance_must_be_a_number_at_least_zero(bad):
    with pytest.raises(ValueError, match="tolerance must be a finite number >= 0"):
        nd.scan_start(BumpLoss(_target(0.4)), Toy(jnp.asarray(0.05)), lambda m: m.G,
                      [0.1, 0.2, 0.3], key=None, tolerance=bad)
