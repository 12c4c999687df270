"""``backtrack``: take back a step that raised the loss, and retry it shorter."""

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .._validate import number


class BacktrackState(NamedTuple):
    """The state of ``backtrack``.

    ``inner``: the wrapped optimizer's state; ``best_params``, ``best_grads``,
    ``best_value``: the point with the lowest loss seen, its gradient and loss; ``scale``:
    the factor on the wrapped optimizer's updates; ``rejected``: the number of steps
    taken back.
    """

    inner: Any
    best_params: Any
    best_grads: Any
    best_value: jax.Array
    scale: jax.Array
    rejected: jax.Array


def _check_update(params, value) -> None:
    """``ValueError`` unless ``backtrack``'s update is given the parameters and the
    scalar loss at them."""
    if params is None:
        raise ValueError("backtrack needs the parameters: update(grads, state, params, "
                         "value=loss).")
    if value is None:
        raise ValueError("backtrack needs the loss at the parameters: update(grads, "
                         "state, params, value=loss) (netdyn.fit passes it).")
    if jnp.shape(value) != ():
        raise ValueError("backtrack: value must be the scalar loss at the parameters, "
                         f"got shape {jnp.shape(value)}.")


def backtrack(optimizer: optax.GradientTransformation,
              shrink: float = 0.5) -> optax.GradientTransformationExtraArgs:
    r"""``optimizer`` with steps that raised the loss taken back and retried shorter.

    A deferred backtracking line search along the optimizer's own steps. Each update
    receives the loss at the current parameters $u_k$ (``update(grads, state, params,
    value=loss)``; ``netdyn.fit`` passes it). Let $u^*$ be the point with the lowest loss
    seen so far, $g^*$ its gradient and $s$ the step scale (1 at the start):

    - if $L(u_k) \le L(u^*)$, the step is accepted: $u^* \leftarrow u_k$, and the update
      is $s\,\Delta(g_k)$, with $\Delta$ the update of ``optimizer``;
    - otherwise the step that led to $u_k$ is taken back, the optimizer restarts at
      $u^*$ and steps again, shorter: $s \leftarrow$ ``shrink`` $\cdot\, s$, the
      optimizer's state is initialised afresh (momentum, step counts and schedules),
      and the update is $u^* - u_k + s\,\Delta(g^*)$.

    While the loss decreases this is ``optimizer`` itself. A rejected step costs nothing
    extra: its evaluation is the one that found the loss higher. The restart discards
    the momentum that carried the optimizer past the minimum (function-value restart,
    O'Donoghue & Candès 2015, *Found. Comput. Math.* 15: 715); retrying the same
    direction ever shorter could stall short of it. The scale never grows back.

    Use it where the loss is a deterministic function of the parameters (a fixed noise
    key, ``fit``'s default): with ``redraw=True`` consecutive losses come from different
    noise, and comparing them rejects good steps.

    Why: the FC of delay-coupled mean-field models changes abruptly at the edge of a
    bifurcation, with a steep rise of the loss a little below the best coupling and an
    almost flat loss beyond it. A momentum method that steps over that edge lands where
    the gradient is near zero, and stays there.

    **Arguments**: ``optimizer``, any ``optax.GradientTransformation``; ``shrink``, the
    factor in $(0, 1)$ applied to the step scale at each rejection.

    **Raises**: ``ValueError`` naming the argument for an ``optimizer`` that is not an
    ``optax.GradientTransformation`` (e.g. ``optax.adam`` uncalled) or a ``shrink`` that is
    not a real number in $(0, 1)$; from ``update``, for a missing ``params`` or ``value``,
    or a ``value`` that is not a scalar.
    """
    if not isinstance(optimizer, optax.GradientTransformation):
        raise ValueError("backtrack(optimizer) must be an optax.GradientTransformation "
                         f"(e.g. optax.adam(0.05)), got {optimizer!r}.")
    shrink = number("backtrack(shrink)", shrink, low=0.0, high=1.0, low_open=True,
                    high_open=True)
    inner = optax.with_extra_args_support(optimizer)

    def init(params):
        state = inner.init(params)
        dtypes = [jnp.asarray(x).dtype for x in jax.tree.leaves(params)]
        floats = [d for d in dtypes if jnp.issubdtype(d, jnp.inexact)]
        # The loss and the scale in the parameters' precision.
        dtype = jnp.result_type(*floats) if floats else jnp.float32
        return BacktrackState(
            inner=state, best_params=params,
            best_grads=jax.tree.map(jnp.zeros_like, params),
            best_value=jnp.asarray(jnp.inf, dtype), scale=jnp.asarray(1.0, dtype),
            rejected=jnp.zeros((), jnp.int32),
        )

    def update(grads, state: BacktrackState, params=None, *, value=None, **extra):
        _check_update(params, value)
        value = jnp.asarray(value, state.best_value.dtype)
        # A NaN loss is never an improvement: its step is taken back too.
        accept = value <= state.best_value

        step, inner_accepted = inner.update(grads, state.inner, params, value=value, **extra)
        scale_rejected = state.scale * shrink
        restarted = inner.init(state.best_params)
        retry, inner_rejected = inner.update(state.best_grads, restarted, state.best_params,
                                             value=state.best_value, **extra)

        def choose(a, b):
            return jax.tree.map(lambda x, y: jnp.where(accept, x, y), a, b)

        def scaled(s, u):
            return jax.tree.map(lambda x: (s * x).astype(x.dtype), u)

        accepted_update = scaled(state.scale, step)
        rejected_update = jax.tree.map(
            lambda b, p, r: (b - p + scale_rejected * r).astype(p.dtype),
            state.best_params, params, retry,
        )
        new_state = BacktrackState(
            inner=choose(inner_accepted, inner_rejected),
            best_params=choose(params, state.best_params),
            best_grads=choose(grads, state.best_grads),
            best_value=jnp.where(accept, value, state.best_value),
            scale=jnp.where(accept, state.scale, scale_rejected),
            rejected=state.rejected + jnp.where(accept, 0, 1).astype(jnp.int32),
        )
        return choose(accepted_update, rejected_update), new_state

    return optax.GradientTransformationExtraArgs(init, update)
