"""Choose a remat strategy from a memory budget."""

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from ._base import AbstractRemat
from ._schedule import resolve_unroll
from .multilevel import MultiLevel
from .nested import Nested
from .no_remat import NoRemat
from .uniform import Uniform


class RematChoice(NamedTuple):
    """What ``nd.choose_remat`` chose for an ``nd.Auto`` budget.

    - ``strategy``: the concrete strategy (``NoRemat``, ``Uniform``, ``Nested`` or
      ``MultiLevel``, with ``Auto``'s ``unroll`` resolved), to put in the solver.
    - ``temp_bytes``: XLA's compiled temporary memory of the time loop's gradient under
      it (``memory_analysis()``), at most ``Auto.max_bytes``.
    """

    strategy: AbstractRemat
    temp_bytes: int


def _candidates(n_steps: int, every: int, unroll: int,
                stages: str) -> list[list[AbstractRemat]]:
    """Groups of strategies of equal recomputation, in increasing order, with ``unroll``
    and ``stages``."""
    root = max(1, math.isqrt(n_steps))
    periods = n_steps // every
    uniform = {root, every, every * max(1, round(math.sqrt(periods)))}
    cube = max(2, round(n_steps ** (1 / 3)))
    return [
        [NoRemat(unroll=unroll, stages=stages)],
        [Uniform(k, unroll=unroll, stages=stages) for k in sorted(uniform)],
        [Nested(cube, cube * cube, unroll=unroll, stages=stages)],
        [MultiLevel(16, unroll=unroll, stages=stages)],
        [MultiLevel(8, unroll=unroll, stages=stages)],
        [MultiLevel(4, unroll=unroll, stages=stages)],
    ]


class Auto(AbstractRemat):
    """A memory budget: the cheapest strategy whose compiled gradient fits ``max_bytes``.

    ``Auto`` is not a time loop itself. ``nd.simulate`` replaces it by the strategy that
    ``nd.choose_remat`` chooses for the run, from the shapes and dtypes of its arguments
    alone (never their values): once per trace, before the loop is built, and the
    forward result is bit-identical to running that strategy directly. The rule:
    candidate strategies are tried in order of increasing recomputation (``NoRemat``;
    ``Uniform`` near the square root of the number of steps or aligned with the monitors'
    period; ``Nested``; ``MultiLevel`` with branching 16, 8, 4: branching 2 compiles too
    slowly to try); for each, the gradient of the time loop (with respect to its carry
    and to the scalar and per-node values it reads, the parameters users fit) is
    compiled and XLA's ``memory_analysis()`` gives its temporary memory. The first group
    with a fitting member is used, its smallest member chosen. The figure is that of the
    time loop's own gradient; a user's loss adds little on top. ``ValueError`` if no
    candidate fits.

    Each choice compiles one to eight gradients of the loop (seconds to minutes): to see
    the choice, or to pay for it once rather than in every trace (a new ``jax.jit``, a
    new run length), call ``nd.choose_remat`` with ``simulate``'s arguments and put the
    strategy it returns in the solver::

        solver = nd.Heun(remat=nd.Auto(max_bytes=50_000_000))
        choice = nd.choose_remat(net, solver, t0=0.0, t1=60_000.0, dt=1.0,
                                 monitors=monitors, key=key)
        print(choice)  # RematChoice(strategy=Uniform(...), temp_bytes=...)
        solver = nd.Heun(remat=choice.strategy)

    ``unroll`` (steps per iteration of the innermost loop, see ``AbstractRemat``) is
    resolved when choosing and given to every candidate, and so is ``stages``, so the
    memory measured is that of the loop that runs.
    """

    max_bytes: int = eqx.field(static=True)
    unroll: int | None = eqx.field(default=None, static=True, kw_only=True)
    stages: str = eqx.field(default="recompute", static=True, kw_only=True)

    def __check_init__(self):
        if not self.max_bytes > 0:
            raise ValueError(f"Auto max_bytes must be positive, got {self.max_bytes}.")

    def block_sizes(self, n_steps):
        raise TypeError(
            "Auto is a memory budget, not a schedule of blocks: its blocks are those of the "
            "strategy nd.choose_remat(network, solver, t0=..., t1=..., dt=..., ...) "
            "chooses. Call that function and use its .strategy instead."
        )

    def loop(self, step, emit, carry, n_steps, every):
        raise TypeError(
            "Auto is a memory budget, not a time loop: nd.simulate replaces it by the "
            "strategy nd.choose_remat(network, solver, t0=..., t1=..., dt=..., ...) "
            "chooses. Call that function and use its .strategy instead."
        )


def choose(
    auto: Auto,
    step: Callable[[Any, Any], Any],
    emit: Callable[[Any, Any], tuple[Any, Any]],
    carry,
    consts,
    n_steps: int,
    every: int,
) -> RematChoice:
    """The strategy ``auto`` chooses for a time loop given by its structure alone.

    ``step(carry, consts) -> carry`` and ``emit(carry, consts) -> (carry, samples)``
    close over no traced value; ``carry`` and ``consts`` are pytrees of
    ``jax.ShapeDtypeStruct`` (and static leaves). Every candidate's gradient is compiled
    from these shapes, outside any trace of the caller's values.
    """
    unroll = resolve_unroll(auto.unroll)
    tried = []
    for group in _candidates(n_steps, every, unroll, auto.stages):
        sizes = [
            (_temp_bytes(s, step, emit, carry, consts, n_steps, every), i, s)
            for i, s in enumerate(group)
        ]
        tried += sizes
        fitting = [t for t in sizes if t[0] <= auto.max_bytes]
        if fitting:
            temp, _, strategy = min(fitting)
            return RematChoice(strategy, temp)
    temp, _, strategy = min(tried)
    raise ValueError(
        f"Auto: no strategy fits max_bytes={auto.max_bytes}; the smallest was "
        f"{strategy} with {temp} bytes."
    )


def _is_struct(x) -> bool:
    return isinstance(x, jax.ShapeDtypeStruct)


def _is_inexact(x) -> bool:
    return _is_struct(x) and jnp.issubdtype(x.dtype, jnp.inexact)


def _temp_bytes(strategy, step, emit, carry, consts, n_steps, every) -> int:
    """Compiled temporary memory of the time loop's gradient under ``strategy``."""
    # Differentiate with respect to the carry and the scalar or per-node constants (the
    # parameters users fit), not matrices: a gradient with respect to every weight keeps
    # a gathered [nodes, nodes] array per step, which is not what is being budgeted.
    carry, consts = jax.tree.map(
        lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype) if _is_struct(x) else x,
        (carry, consts),
    )
    carry_diff, carry_rest = eqx.partition(carry, _is_inexact)
    const_diff, const_rest = eqx.partition(consts, lambda x: _is_inexact(x) and x.ndim <= 1)
    diff = (carry_diff, const_diff)
    rest, static = eqx.partition((carry_rest, const_rest), _is_struct)

    def proxy(diff, rest):
        c, k = eqx.combine(diff, rest, static)
        final, ys = strategy.loop(lambda s: step(s, k), lambda s: emit(s, k), c, n_steps, every)
        leaves = [x for x in jax.tree.leaves((final, ys)) if eqx.is_inexact_array(x)]
        return sum(jnp.sum(x) for x in leaves)

    compiled = jax.jit(jax.grad(proxy)).lower(diff, rest).compile()
    return int(compiled.memory_analysis().temp_size_in_bytes)
