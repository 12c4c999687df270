"""``fit_multistart``: several starting points fitted at once with ``vmap``."""

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import equinox as eqx
import optax

from .._custom_types import Key
from .history import FitHistory
from .loop import OnNonFinite, best_start, run


def fit_multistart(
    model: Any,
    loss_fn: Callable[[Any, Any], Any],
    optimizer: optax.GradientTransformation,
    *,
    where: Callable[[Any], Any],
    starts: Any,
    steps: int,
    bounds: Any = None,
    key: Key | None = None,
    redraw: bool = False,
    on_nonfinite: OnNonFinite = "stop",
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int = 10,
    resume: bool = False,
    callback: Callable[[dict], None] | None = None,
    progress: bool = False,
) -> tuple[Any, FitHistory]:
    """Fit from several initial values at once (``jax.vmap`` over starts) and keep the best.

    Arguments as ``fit``, plus ``starts``: the initial values, a PyTree of the structure of
    ``where(model)`` whose leaves have a leading axis of length ``S`` (``S`` starts),
    e.g. ``starts=jnp.array([0.1, 0.3, 0.6])`` for ``where=lambda n: n.coupling.G``. The
    values already in ``model`` at ``where`` are not used. Each start has its own
    optimiser state; all see the same ``key`` (common random numbers across starts, so
    their losses compare fairly). One compiled step runs every start.

    Non-finite values are handled per start, as in ``fit``: with ``on_nonfinite="stop"``
    the failing start is frozen at its last good parameters (and ignored when choosing
    the best); with ``"skip"`` only that update is skipped. ``FitDivergedError`` is
    raised only if every start has stopped.

    **Returns**: ``(best_model, history)``: ``model`` with the parameters of the start
    whose loss at the last step is lowest, and a ``FitHistory`` whose arrays have a
    second axis over starts, with ``history.best`` the index of the kept start.
    """
    xs, history, sel, frozen = run(
        model, loss_fn, optimizer, where=where, steps=steps, bounds=bounds, key=key,
        redraw=redraw, on_nonfinite=on_nonfinite, checkpoint=checkpoint,
        checkpoint_every=checkpoint_every, resume=resume, callback=callback,
        progress=progress, starts=starts,
    )
    best = best_start(history, frozen)
    fitted = eqx.tree_at(sel.leaf_where, model, tuple(x[best] for x in xs))
    return fitted, dataclasses.replace(history, best=best)
