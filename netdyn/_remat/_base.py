"""Abstract base of gradient-checkpointing (rematerialisation) strategies."""

import abc
from collections.abc import Callable
from typing import Any, TypeVar

import equinox as eqx

Carry = TypeVar("Carry")
Sample = Any


class AbstractRemat(eqx.Module):
    """How the time loop stores (or recomputes) intermediate states for the backward pass.

    A strategy turns a one-step function into the whole time loop. It never changes the
    forward result, only what is kept in memory for reverse-mode differentiation.
    """

    @abc.abstractmethod
    def loop(
        self,
        step: Callable[[Carry], Carry],
        emit: Callable[[Carry], tuple[Carry, Sample]],
        carry: Carry,
        n_steps: int,
        every: int,
    ) -> tuple[Carry, Sample]:
        """Apply ``step`` ``n_steps`` times and ``emit`` after every ``every`` steps.

        ``every`` divides ``n_steps``. Returns the final carry and the emitted samples
        stacked along a new leading axis of length ``n_steps // every``.
        """
