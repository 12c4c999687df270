"""Classical fourth-order Runge-Kutta."""

from typing import ClassVar

from .._remat._base import AbstractRemat
from .._remat.no_remat import NoRemat
from ._runge_kutta import AbstractRungeKutta, ButcherTableau


class RK4(AbstractRungeKutta):
    r"""The classical Runge-Kutta method (TVB's ``RungeKutta4thOrderDeterministic``):

    $$ y_{n+1} = y_n + \tfrac{\Delta t}{6}(k_1 + 2k_2 + 2k_3 + k_4) + g(y_n)\,\Delta W_n, $$

    with $k_1 = f(t_n, y_n)$, $k_2 = f(t_n + \Delta t/2, y_n + \Delta t k_1/2)$,
    $k_3 = f(t_n + \Delta t/2, y_n + \Delta t k_2/2)$,
    $k_4 = f(t_n + \Delta t, y_n + \Delta t k_3)$,
    and state bounds applied to every stage. Fourth order without noise; with noise the
    increment is added Euler-Maruyama style, so the strong order drops to 1/2.
    """

    remat: AbstractRemat = NoRemat()
    order: ClassVar[int] = 4
    tableau: ClassVar[ButcherTableau] = ButcherTableau(
        a=((0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)), b=(1.0, 2.0, 2.0, 1.0),
        c=(0.0, 0.5, 0.5, 1.0), denominator=6.0)
