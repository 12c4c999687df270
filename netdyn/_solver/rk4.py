"""Classical fourth-order Runge-Kutta."""

from typing import ClassVar

from .._custom_types import Scalar, State
from .._remat._base import AbstractRemat
from .._remat.no_remat import NoRemat
from ._base import AbstractSolver, Clip, Drift


class RK4(AbstractSolver):
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

    def step(
        self, drift: Drift, t: Scalar, y: State, dt: float, noise: State | None, clip: Clip
    ) -> State:
        half = 0.5 * dt
        k1 = drift(t, y)
        k2 = drift(t + half, clip(y + half * k1))
        k3 = drift(t + half, clip(y + half * k2))
        k4 = drift(t + dt, clip(y + dt * k3))
        y1 = y + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        if noise is not None:
            y1 = y1 + noise
        return clip(y1)
