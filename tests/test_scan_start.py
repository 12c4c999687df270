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
