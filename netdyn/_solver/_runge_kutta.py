"""Explicit Runge-Kutta schemes declared by their Butcher tableau."""

from typing import NamedTuple

import equinox as eqx

from .._custom_types import Scalar, State
from ._base import AbstractSolver, Clip, Drift


class ButcherTableau(NamedTuple):
    r"""An explicit Runge-Kutta scheme,

    $$ k_i = f\Big(t_n + c_i \Delta t,\ y_n + \Delta t \sum_{j<i} a_{ij} k_j
            \;[+\, g(y_n)\Delta W_n \text{ if } \texttt{stage\_noise}_i]\Big), \qquad
       y_{n+1} = y_n + \frac{\Delta t}{d} \sum_i b_i k_i + g(y_n)\,\Delta W_n , $$

    with state bounds applied to every stage's input and to $y_{n+1}$.

    - ``a``: the rows $a_{i, j<i}$ of stages 2, 3, ... (stage 1 is $f(t_n, y_n)$).
    - ``b``, ``denominator``: the weights $b_i / d$ (kept as integers over a common
      denominator, so that RK4's $\frac{\Delta t}{6}(k_1 + 2k_2 + 2k_3 + k_4)$ is computed
      as written).
    - ``c``: the nodes $c_i$; ``stage_noise``: whether stage $i$'s input carries the
      step's noise (stochastic Heun's predictor does, as TVB's ``HeunStochastic``).
    """

    a: tuple[tuple[float, ...], ...]
    b: tuple[float, ...]
    c: tuple[float, ...]
    denominator: float = 1.0
    stage_noise: tuple[bool, ...] = ()


def _weighted_sum(weights, ks):
    total = None
    for w, k in zip(weights, ks):
        if w == 0:
            continue
        term = k if w == 1 else w * k
        total = term if total is None else total + term
    return total


class AbstractRungeKutta(AbstractSolver):
    """A fixed-step explicit Runge-Kutta solver: a concrete class only declares its
    ``tableau`` (a ``ButcherTableau``), its ``order`` and its ``remat`` field."""

    tableau: eqx.AbstractClassVar[ButcherTableau]

    def step(
        self, drift: Drift, t: Scalar, y: State, dt: float, noise: State | None, clip: Clip
    ) -> State:
        tab = self.tableau
        noisy = tab.stage_noise or (False,) * len(tab.c)
        ks = [drift(t, y)]
        for i, row in enumerate(tab.a, start=1):
            stage = y + _scaled(row, dt, ks)
            if noise is not None and noisy[i]:
                stage = stage + noise
            ks.append(drift(t + tab.c[i] * dt, clip(stage)))
        y1 = y + (dt / tab.denominator) * _weighted_sum(tab.b, ks)
        if noise is not None:
            y1 = y1 + noise
        return clip(y1)


def _scaled(row, dt, ks):
    """$\\Delta t \\sum_j a_{ij} k_j$, each coefficient applied to $\\Delta t$ first."""
    total = None
    for a, k in zip(row, ks):
        if a == 0:
            continue
        term = (a * dt) * k
        total = term if total is None else total + term
    return total
