"""Euler(-Maruyama)."""

from typing import ClassVar

from .._custom_types import Scalar, State
from .._remat._base import AbstractRemat
from .._remat.no_remat import NoRemat
from ._base import AbstractSolver, Clip, Drift


class Euler(AbstractSolver):
    r"""Euler's method, Euler-Maruyama with noise (TVB's ``EulerDeterministic`` /
    ``EulerStochastic``):

    $$ y_{n+1} = y_n + \Delta t\, f(t_n, y_n) + g(y_n)\,\Delta W_n. $$
    """

    remat: AbstractRemat = NoRemat()
    order: ClassVar[int] = 1

    def step(
        self, drift: Drift, t: Scalar, y: State, dt: float, noise: State | None, clip: Clip
    ) -> State:
        y1 = y + dt * drift(t, y)
        if noise is not None:
            y1 = y1 + noise
        return clip(y1)
