"""Computing an array once, into memory, before consumers that read each element often."""

import jax
import jax.numpy as jnp


def _through_conditional(x, token):
    return jax.lax.cond(token >= 0, lambda v: v, lambda v: jnp.full_like(v, jnp.nan), x)


def materialised(x, token):
    """``x``, computed into memory before its consumers (on CPU; the identity elsewhere).

    XLA:CPU fuses an elementwise producer into consumers that read each of its elements
    many times (a broadcast over a monitor's rows or over the sources of a graph, a gather
    over edges), and then recomputes the whole producer chain for every read: the solver
    stages of a step, evaluated once per edge or per monitor row instead of once per node.
    A conditional whose predicate XLA cannot fold ends the fusion. ``token`` is an integer
    scalar that is non-negative at run time (a step counter, a node index): the other
    branch, a NaN array, never runs. ``jax.lax.optimization_barrier`` does not do this
    (XLA:CPU removes barriers before fusion). On GPU a conditional costs a round trip to
    the host, so there ``x`` is returned as it is.

    The values are unchanged, and so are their derivatives (the conditional is linear in
    ``x``; reverse mode materialises the cotangent the same way).
    """
    return jax.lax.platform_dependent(x, token, cpu=_through_conditional, default=lambda v, _: v)
