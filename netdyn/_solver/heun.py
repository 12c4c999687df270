"""Heun's method, deterministic and stochastic (as TVB)."""

from typing import ClassVar

from .._custom_types import Scalar, State
from .._remat._base import AbstractRemat
from .._remat.no_remat import NoRemat
from ._base import AbstractSolver, Clip, Drift


class Heun(AbstractSolver):
    r"""Heun's method; with noise, TVB's ``HeunStochastic`` scheme:

    $$
    \begin{aligned}
    \tilde y &= y_n + \Delta t\, f(t_n, y_n) + g(y_n)\,\Delta W_n, \\
    y_{n+1} &= y_n + \tfrac{\Delta t}{2}\big(f(t_n, y_n) + f(t_{n+1}, \tilde y)\big)
              + g(y_n)\,\Delta W_n,
    \end{aligned}
    $$

    with state bounds applied to $\tilde y$ and $y_{n+1}$. Second order without noise.

    **Reference**: Mannella (2002), *Integration of stochastic differential equations on a
    computer*, Int. J. Mod. Phys. C 13(9):1177-1194.
    """

    remat: AbstractRemat = NoRemat()
    order: ClassVar[int] = 2

    def step(
        self, drift: Drift, t: Scalar, y: State, dt: float, noise: State | None, clip: Clip
    ) -> State:
        k1 = drift(t, y)
        inter = y + dt * k1
        if noise is not None:
            inter = inter + noise
        inter = clip(inter)
        k2 = drift(t + dt, inter)
        y1 = y + 0.5 * dt * (k1 + k2)
        if noise is not None:
            y1 = y1 + noise
        return clip(y1)
