"""Choose a remat strategy from a memory budget."""

import hashlib
import math

import equinox as eqx
import jax
import jax.numpy as jnp

from ._base import AbstractRemat
from ._schedule import resolve_unroll
from .multilevel import MultiLevel
from .nested import Nested
from .no_remat import NoRemat
from .uniform import Uniform

_CHOICES: dict[str, tuple[AbstractRemat, int]] = {}


def _candidates(n_steps: int, every: int, unroll: int) -> list[list[AbstractRemat]]:
    """Groups of strategies of equal recomputation, in increasing order, with ``unroll``."""
    root = max(1, math.isqrt(n_steps))
    periods = n_steps // every
    uniform = {root, every, every * max(1, round(math.sqrt(periods)))}
    cube = max(2, round(n_steps ** (1 / 3)))
    return [
        [NoRemat(unroll=unroll)],
        [Uniform(k, unroll=unroll) for k in sorted(uniform)],
        [Nested(cube, cube * cube, unroll=unroll)],
        [MultiLevel(16, unroll=unroll)],
        [MultiLevel(8, unroll=unroll)],
        [MultiLevel(4, unroll=unroll)],
    ]


def _abstract(tree):
    return jax.tree.map(
        lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.asarray(x).dtype)
        if eqx.is_array(x)
        else x,
        tree,
    )


def _temp_bytes(strategy, conv_step, conv_emit, n_step_consts, carry, values, n_steps, every):
    """Compiled temporary memory of the time loop's gradient under ``strategy``."""
    # Differentiate with respect to the carry and the scalar or per-node constants (the
    # parameters users fit), not matrices: a gradient with respect to every weight keeps
    # a gathered [nodes, nodes] array per step, which is not what is being budgeted.
    carry_diff, carry_rest = eqx.partition(carry, eqx.is_inexact_array)
    const_diff, const_rest = eqx.partition(
        values, lambda x: eqx.is_inexact_array(x) and x.ndim <= 1
    )
    diff = (carry_diff, const_diff)
    rest, static = eqx.partition((carry_rest, const_rest), eqx.is_array)

    def proxy(diff, rest):
        c, k = eqx.combine(diff, rest, static)
        final, ys = strategy.loop(
            lambda s: conv_step(s, *k[:n_step_consts]),
            lambda s: conv_emit(s, *k[n_step_consts:]),
            c,
            n_steps,
            every,
        )
        leaves = [x for x in jax.tree.leaves((final, ys)) if eqx.is_inexact_array(x)]
        return sum(jnp.sum(x) for x in leaves)

    compiled = jax.jit(jax.grad(proxy)).lower(_abstract(diff), _abstract(rest)).compile()
    return int(compiled.memory_analysis().temp_size_in_bytes)


class Auto(AbstractRemat):
    """The cheapest strategy whose compiled gradient fits ``max_bytes`` of temporary memory.

    At trace time, candidate strategies are tried in order of increasing recomputation
    (``NoRemat``; ``Uniform`` near the square root of the number of steps or aligned with
    the monitors' period; ``Nested``; ``MultiLevel`` with branching 16, 8, 4: branching 2
    compiles too slowly to try); for each, the gradient of the time loop is compiled and
    XLA's ``memory_analysis()`` gives its temporary memory. The first group with a fitting
    member is used, its smallest member chosen (the result is cached per loop structure).
    The figure is that of the time loop's own gradient; a user's loss adds little on top.
    Raises ``ValueError`` if no candidate fits. ``verbose=True`` prints the choice.
    ``unroll`` (steps per iteration of the innermost loop, see ``AbstractRemat``) is
    resolved at trace time and given to every candidate, so the memory measured is that of
    the loop that runs.
    """

    max_bytes: int = eqx.field(static=True)
    verbose: bool = eqx.field(default=False, static=True)
    unroll: int | None = eqx.field(default=None, static=True, kw_only=True)

    def __check_init__(self):
        if not self.max_bytes > 0:
            raise ValueError(f"Auto max_bytes must be positive, got {self.max_bytes}.")

    def choose(self, step, emit, carry, n_steps: int, every: int) -> tuple[AbstractRemat, int]:
        """The chosen strategy and its compiled temporary memory (bytes)."""
        conv_step, step_consts = jax.closure_convert(step, carry)
        conv_emit, emit_consts = jax.closure_convert(emit, carry)
        values = list(step_consts) + list(emit_consts)
        signature = str(jax.make_jaxpr(conv_step)(carry, *step_consts))
        signature += str(jax.make_jaxpr(conv_emit)(carry, *emit_consts))
        unroll = resolve_unroll(self.unroll)
        key = f"{signature}{n_steps}|{every}|{self.max_bytes}|{unroll}"
        key = hashlib.sha1(key.encode()).hexdigest()
        if key not in _CHOICES:
            tried = []
            for group in _candidates(n_steps, every, unroll):
                sizes = [
                    (_temp_bytes(s, conv_step, conv_emit, len(step_consts), carry, values,
                                 n_steps, every), i, s)
                    for i, s in enumerate(group)
                ]
                tried += sizes
                fitting = [t for t in sizes if t[0] <= self.max_bytes]
                if fitting:
                    temp, _, strategy = min(fitting)
                    _CHOICES[key] = (strategy, temp)
                    break
            else:
                temp, _, strategy = min(tried)
                raise ValueError(
                    f"Auto: no strategy fits max_bytes={self.max_bytes}; the smallest was "
                    f"{strategy} with {temp} bytes."
                )
        return _CHOICES[key]

    def loop(self, step, emit, carry, n_steps, every):
        strategy, temp = self.choose(step, emit, carry, n_steps, every)
        if self.verbose:
            print(f"Auto(max_bytes={self.max_bytes}): {strategy}, {temp / 1e6:.2f} MB")
        return strategy.loop(step, emit, carry, n_steps, every)
