"""The time loop of ``simulate(..., batch_last=True)``, behind a boundary with its own
``vmap`` rule (``simulate``'s default runs the loop directly: a plain ``vmap``).

Under ``jax.vmap`` (a sweep over G, a batch of noise realisations), the arrays of the loop
would carry the batch on their leading axis: every delayed read then fetches ``B`` values
one whole history apart, and rolling the buffer copies every member's history each step.
Throughput then *fell* as the batch grew (CPU, 80 nodes, float32: 0.20 M network-steps/s
at B = 1, 0.16 at B = 1024). The boundary's ``vmap`` rule runs the batched loop of
``_batched`` instead (batch on the trailing axis, a ring buffer), when the graph is
shared by the batch. The rule learns which inputs the batch reaches (``custom_vmap``'s
``in_batched``): parameters and keys shared by the batch stay unbatched in that loop.

Derivatives never see that rule: the boundary is a ``custom_jvp`` whose rule is the
derivative of the plain loop (``jax.jvp``), so forward and reverse mode, the remat
strategies and their memory are those of the plain loop. A ``vmap`` outside a
derivative (``jax.vmap(jax.grad(...))``) runs the derivative under the ordinary ``vmap``;
so does the forward pass of a derivative taken outside a ``vmap``.

Under ``vmap``, JAX batches a ``custom_jvp`` function and its rule separately and expects
their outputs to carry the batch on the same axes. Both therefore return every output
with the batch leading (``_batch_leading`` on the rule's primal outputs; the tangents
follow the primals). The step counter is not an output (``simulate`` adds the number of
steps to the input's), so a continuation of a batched run keeps one counter for the
batch and stays on the batch-last loop.
"""

from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap
from jax.custom_derivatives import SymbolicZero


@custom_vmap
def _leading(tree):
    return tree


def batch_leading(x, batched: bool, size: int):
    """``x`` with a leading batch axis of ``size``: itself if ``batched``, else broadcast."""
    return x if batched else jnp.broadcast_to(x, (size,) + jnp.shape(x))


@_leading.def_vmap
def _leading_rule(axis_size, in_batched, tree):
    # Batched leaves arrive with the batch leading; unbatched ones are broadcast to it.
    out = jax.tree.map(lambda x, b: batch_leading(x, b, axis_size), tree, in_batched[0])
    return out, jax.tree.map(lambda _: True, out)


@jax.custom_jvp
def _batch_leading(tree):
    """The identity; under ``vmap``, every leaf batched on its leading axis."""
    return _leading(tree)


@_batch_leading.defjvp
def _batch_leading_jvp(primals, tangents):
    # The tangents pass through (JAX moves them to the primals' batch axes), so that a
    # derivative of the derivative (``jax.grad(jax.grad(...))``) transposes only the
    # identity: ``custom_vmap`` itself has no reverse mode.
    (tree,), (t_tree,) = primals, tangents
    return _batch_leading(tree), t_tree


class Flat(NamedTuple):
    """The loop's inputs as flat lists of arrays (what ``custom_vmap`` and
    ``custom_jvp`` see), and the way back to the pytrees."""

    parts: Callable  # leaves -> parts
    carry: Callable  # carry leaves -> carry (also of flags: ``SimulationState`` is a Module)
    paths: tuple  # the attribute names leading to each leaf of ``parts``
    plain: Callable  # (leaves, carry leaves) -> the loop's output


def _key_name(key):
    """An attribute name, a dict key or a sequence index of a pytree key path."""
    if isinstance(key, jax.tree_util.GetAttrKey):
        return key.name
    if isinstance(key, jax.tree_util.DictKey):
        return key.key
    if isinstance(key, jax.tree_util.SequenceKey):
        return key.idx
    return None


def boundary_loop(plain: Callable, batched: Callable, parts, carry):
    """``plain(parts, carry)``, with ``batched`` as its ``vmap`` rule.

    ``plain(parts, carry) -> out`` is the loop for one network. ``batched(axis_size,
    in_batched, leaves, carry_leaves, flat) -> (out, out_batched)`` is a ``custom_vmap``
    rule on the flat inputs (batched leaves carry the batch on axis 0); ``flat`` (``Flat``)
    rebuilds the pytrees. ``parts`` may hold non-array leaves (static structure).
    """
    dynamic, static = eqx.partition(parts, eqx.is_array)
    leaves, treedef = jax.tree.flatten(dynamic)
    paths = tuple(
        tuple(_key_name(k) for k in path)
        for path, _ in jax.tree_util.tree_flatten_with_path(dynamic)[0]
    )
    c_leaves, c_tree = jax.tree.flatten(carry)

    def rebuild_parts(leaves):
        return eqx.combine(jax.tree.unflatten(treedef, leaves), static)

    def rebuild_carry(c_leaves):
        return jax.tree.unflatten(c_tree, c_leaves)

    def flat_plain(leaves, c_leaves):
        return plain(rebuild_parts(leaves), rebuild_carry(c_leaves))

    flat = Flat(rebuild_parts, rebuild_carry, paths, flat_plain)

    @custom_vmap
    def loop(leaves, c_leaves):
        return flat_plain(leaves, c_leaves)

    @loop.def_vmap
    def loop_rule(axis_size, in_batched, leaves, c_leaves):
        return batched(axis_size, in_batched, leaves, c_leaves, flat)

    @jax.custom_jvp
    def differentiable(leaves, c_leaves):
        return loop(leaves, c_leaves)

    def differentiable_jvp(primals, tangents):
        flat = list(primals[0]) + list(primals[1])
        flat_t = list(tangents[0]) + list(tangents[1])
        moving = [i for i, t in enumerate(flat_t) if not isinstance(t, SymbolicZero)]
        n = len(primals[0])

        def of_moving(*xs):
            full = list(flat)
            for i, x in zip(moving, xs):
                full[i] = x
            return flat_plain(full[:n], full[n:])

        out, t_out = jax.jvp(of_moving, [flat[i] for i in moving], [flat_t[i] for i in moving])
        return _batch_leading(out), t_out

    differentiable.defjvp(differentiable_jvp, symbolic_zeros=True)
    return differentiable(leaves, c_leaves)
