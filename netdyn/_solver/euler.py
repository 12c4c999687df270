"""Euler(-Maruyama)."""

from typing import ClassVar

from .._remat._base import AbstractRemat
from .._remat.no_remat import NoRemat
from ._runge_kutta import AbstractRungeKutta, ButcherTableau


class Euler(AbstractRungeKutta):
    r"""Euler's method, Euler-Maruyama with noise (TVB's ``EulerDeterministic`` /
    ``EulerStochastic``):

    $$ y_{n+1} = y_n + \Delta t\, f(t_n, y_n) + g(y_n)\,\Delta W_n. $$
    """

    remat: AbstractRemat = NoRemat()
    order: ClassVar[int] = 1
    tableau: ClassVar[ButcherTableau] = ButcherTableau(a=(), b=(1.0,), c=(0.0,))
