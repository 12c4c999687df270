"""Abstract base of gradient-checkpointing (rematerialisation) strategies."""

import abc
from collections.abc import Callable
from typing import Any, TypeVar

import equinox as eqx

from ._policies import check_stages, check_unroll

Carry = TypeVar("Carry")
Sample = Any


class AbstractRemat(eqx.Module):
    """How the time loop stores (or recomputes) intermediate states for the backward pass.

    A strategy turns a one-step function into the whole time loop. It never changes the
    forward result, only what is kept in memory for reverse-mode differentiation.

    Every strategy has a keyword-only ``unroll`` field: the number of steps run per
    iteration of the innermost loop over steps (inside checkpointed blocks too, and in
    both passes of reverse mode), e.g. ``nd.Uniform(1000, unroll=8)`` or
    ``nd.Heun(remat=nd.NoRemat(unroll=8))``. Unrolling amortises the loop's per-iteration
    overhead over several steps, for a larger program (compile time grows about linearly
    with ``unroll``). It never changes the result: the copies of the step are kept apart
    by optimization barriers, so forward samples are bit-identical to ``unroll=1`` and
    gradients equal to rounding. An integer >= 1, or ``None`` (the default), resolved at
    trace time from ``jax.default_backend()`` (``nd.default_unroll``):

    1 on CPU, where the loop overhead is small next to a step and unrolling slows the
    gradient (``benchmarks/unroll.md``); 8 on GPU, where an XLA while-loop iteration costs
    more than a small delayed step (``benchmarks/gpu.md``). ``NoRemat(unroll=2)`` may pay
    for forward-only sweeps on CPU; pass ``unroll=1`` to compile faster.

    ``unroll`` lives on the strategy, not on the solver: the strategy owns the shape of
    the time loop (its scans and checkpointed blocks), the solver one step. Every
    strategy takes it the same way, so ``loop``'s interface is unchanged, and ``Auto``
    hands it on to the strategy it chooses.

    Every strategy also has a keyword-only ``stages`` field: what reverse mode keeps of
    each step's solver stages (the vector field evaluations of Euler's, Heun's or RK4's
    stages, with the instantaneous couplings and stimuli). ``"recompute"`` (the default)
    keeps only the step's inputs (state, delayed coupling input, noise term) and
    recomputes the stages once more when the step is differentiated, the least memory;
    ``"save"`` keeps the stages' intermediates instead, for one evaluation of the stages
    less per step in the gradient. Where the stages dominate a step (rww-ei-fic's transfer
    functions) that is about one forward pass less per gradient, for more memory per
    step held (a block's steps, or every step under ``NoRemat``): see
    ``benchmarks/stages.md``. It never changes a forward run's result (bit for bit); in a
    gradient's program the forward values may differ in the last bit (XLA compiles the
    kept stages differently). ``Auto`` hands it on, and measures the memory with it.
    """

    unroll: eqx.AbstractVar[int | None]
    stages: eqx.AbstractVar[str]

    def __check_init__(self):
        check_unroll(f"{type(self).__name__} unroll", self.unroll)
        check_stages(f"{type(self).__name__} stages", self.stages)

    @abc.abstractmethod
    def block_sizes(self, n_steps: int) -> tuple[int, ...]:
        """The checkpointed block sizes (in steps) asked for in a run of ``n_steps`` steps.

        ``loop`` hands them to the time loop, which realises them (balanced, rounded to
        whole emission periods): ``nd.checkpoint_blocks`` gives the blocks it runs.
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
