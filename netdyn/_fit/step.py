"""One optimization step, compiled once and reused at every step of ``fit`` and
``fit_multistart``, and the optimizer state it starts from."""

from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from .._loss._base import AbstractChainedLoss


def split_loss(out) -> tuple[Any, dict[str, Any]]:
    """``loss_fn``'s output as ``(scalar loss, {name: scalar})``, checked at trace time."""
    if isinstance(out, tuple):
        if len(out) != 2 or not isinstance(out[1], dict):
            raise ValueError(
                "loss_fn must return a scalar or a pair (scalar, dict of scalar metrics), "
                f"got a tuple of {len(out)} element(s)."
            )
        loss, aux = out
    else:
        loss, aux = out, {}
    if not eqx.is_array_like(loss) or jnp.shape(loss) != ():
        raise ValueError(f"loss_fn must return a scalar loss, got shape {jnp.shape(loss)}.")
    for name, value in aux.items():
        if not isinstance(name, str) or not eqx.is_array_like(value) or jnp.shape(value) != ():
            raise ValueError(
                f"loss_fn's metrics must be {{str: scalar}}; {name!r} has shape "
                f"{jnp.shape(value)}."
            )
    return loss, dict(aux)


def _all_finite(tree) -> jax.Array:
    leaves = [jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tree) if eqx.is_inexact_array(x)]
    return jnp.all(jnp.stack(leaves)) if leaves else jnp.asarray(True)


def _global_norm(tree) -> jax.Array:
    r"""$\lVert g \rVert_2$ over every leaf (``optax.global_norm``, deprecated in newer optax)."""
    return jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in jax.tree.leaves(tree)))


def _select_tree(ok, new, old):
    return jax.tree.map(
        lambda a, b: jnp.where(ok, a, b) if eqx.is_array(a) else a, new, old
    )


def float_dtype():
    """The default floating dtype (float64 with ``jax_enable_x64``, float32 otherwise)."""
    return jax.dtypes.canonicalize_dtype(jnp.float64)


def as_float_array(v) -> jax.Array:
    """A trained leaf as a (strongly typed) floating array: one compiled step for all."""
    # An explicit dtype gives a strongly typed array (jnp.full(n, 0.3) is weakly typed,
    # and the first update would make it strong: a second compilation).
    dtype = float_dtype() if isinstance(v, float) else jnp.asarray(v).dtype
    return jnp.asarray(v, dtype=dtype)


class FitState(NamedTuple):
    """What one step of a fit starts from: the unconstrained values ``u`` and the
    optimizer state, whether the start has stopped (``frozen``), the last *good* values
    and optimizer state (the latest at which the loss and gradient were finite), and the
    carry of a chained loss (``nd.AbstractChainedLoss``; ``None`` for any other loss).
    The checkpoint stores its leaves in this order."""

    u: list
    opt_state: Any
    frozen: Any
    good_u: list
    good_opt: Any
    carry: Any = None


def initial_state(optimizer: optax.GradientTransformation, u: list,
                  batch: int | None, carry: Any = None) -> FitState:
    """The ``FitState`` before the first step (see ``step``), with a chained loss's
    ``carry``; with ``batch`` starts, every leaf has a leading axis over starts."""
    with jax.numpy_dtype_promotion("standard"):
        if batch is None:
            opt_state = optimizer.init(u)
        else:
            opt_state = jax.vmap(optimizer.init)(u)
    frozen = jnp.zeros(() if batch is None else (batch,), bool)
    # The initial state is "good": a fit whose first step fails stays there.
    return FitState(u, opt_state, frozen, u, opt_state, carry)


@eqx.filter_jit
def step(state, model, key, index, loss_fn, optimizer, transforms, leaf_where,
         redraw: bool, stop: bool, batched: bool):
    """One optimization step (vmapped over starts when ``batched``).

    ``state``: a ``FitState``. A bad step
    (non-finite loss, gradient or update) is not applied: the next step starts again from
    the good state, so that parameters at which the loss is not finite are never kept.

    Returns the next state and ``(loss, grad_norm, skipped, good_here, metrics, params)``,
    the history row of this step (``params`` are the physical values at which the loss was
    evaluated).
    """
    step_key = key
    if redraw:
        step_key = jax.random.fold_in(key, index)

    chained = isinstance(loss_fn, AbstractChainedLoss)

    def single(state: FitState):
        u, opt_state, frozen, good_u, good_opt, carry = state

        def objective(u):
            xs = tuple(t.forward(ui) for t, ui in zip(transforms, u))
            m = eqx.tree_at(leaf_where, model, xs)
            if chained:
                loss, aux, next_carry = loss_fn.continue_from(m, step_key, carry)
                loss, aux = split_loss((loss, aux))
            else:
                (loss, aux), next_carry = split_loss(loss_fn(m, step_key)), carry
            return loss, (aux, xs, next_carry)

        (loss, (aux, xs, next_carry)), grads = eqx.filter_value_and_grad(
            objective, has_aux=True)(u)
        gnorm = _global_norm(grads)
        # Optax mixes Python floats with int32 step counts (e.g. Adam's bias correction),
        # which strict dtype promotion refuses: the optimizer runs with standard promotion.
        with jax.numpy_dtype_promotion("standard"):
            # The loss goes along as ``value`` (optax's extra arguments), for optimizers
            # that use it (``backtrack``, ``optax.contrib.reduce_on_plateau``).
            updates, new_opt = optax.with_extra_args_support(optimizer).update(
                grads, opt_state, u, value=loss
            )
            new_u = optax.apply_updates(u, updates)
        finite = jnp.isfinite(loss) & jnp.isfinite(gnorm)
        good_here = finite & ~frozen
        good_u = _select_tree(good_here, u, good_u)
        good_opt = _select_tree(good_here, opt_state, good_opt)
        ok = good_here & _all_finite(new_u)
        next_u = _select_tree(ok, new_u, good_u)
        next_opt = _select_tree(ok, new_opt, good_opt)
        next_frozen = frozen | (~ok & stop)
        # The chains advance with every step whose loss and gradient are finite.
        next_carry = _select_tree(good_here, next_carry, carry) if chained else carry
        new_state = FitState(next_u, next_opt, next_frozen, good_u, good_opt, next_carry)
        return new_state, (loss, gnorm, ~ok, good_here, aux, xs)

    if batched:
        return jax.vmap(single)(state)
    return single(state)
