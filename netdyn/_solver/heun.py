"""Heun's method, deterministic and stochastic (as TVB)."""

from typing import ClassVar

from .._remat._base import AbstractRemat
from .._remat.no_remat import NoRemat
from ._runge_kutta import AbstractRungeKutta, ButcherTableau


class Heun(AbstractRungeKutta):
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
    tableau: ClassVar[ButcherTableau] = ButcherTableau(
        a=((1.0,),), b=(1.0, 1.0), c=(0.0, 1.0), denominator=2.0, stage_noise=(False, True))
