"""Abstract base of fixed-step solvers."""

import abc
from collections.abc import Callable

import equinox as eqx

from .._custom_types import Scalar, State
from .._remat._base import AbstractRemat

Drift = Callable[[Scalar, State], State]
Clip = Callable[[State], State]


class AbstractSolver(eqx.Module):
    """A fixed-step scheme for $dy = f(t, y)\\,dt + g(y)\\,dW$.

    ``step`` advances one step of size ``dt`` given the drift ``f`` (which includes the
    instantaneous couplings, re-evaluated at every stage, while delayed couplings are held
    fixed over the step as in TVB), the step's noise term ``g(y_n) dW_n`` (``None`` for
    deterministic runs) and ``clip``, which enforces the dynamics' state bounds after every
    stage. The ``remat`` field is the gradient-checkpointing strategy of the time loop;
    ``order`` (a class constant) is the scheme's deterministic order of convergence.
    """

    remat: eqx.AbstractVar[AbstractRemat]
    order: eqx.AbstractClassVar[int]

    @abc.abstractmethod
    def step(
        self, drift: Drift, t: Scalar, y: State, dt: float, noise: State | None, clip: Clip
    ) -> State:
        """One step from ``y`` at time ``t`` to time ``t + dt``."""
