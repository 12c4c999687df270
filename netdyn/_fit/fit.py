"""``fit``: gradient-based fitting of a model's parameters with Optax."""

import os
from collections.abc import Callable
from typing import Any, Literal

import jax.numpy as jnp
import numpy as np
import optax

from .._custom_types import Key
from .._loss._base import AbstractChainedLoss
from .._parameters.fitted import FittedParameters
from .._persistence.fit_checkpoint import Checkpoint
from .history import FitHistory
from .loop import prepare, run
from .options import FitOptions, OnNonFinite
from .step import as_float_array


def fit(
    model: Any,
    loss_fn: Callable[[Any, Any], Any],
    optimizer: optax.GradientTransformation,
    *,
    where: Callable[[Any], Any],
    steps: int,
    bounds: Any = None,
    key: Key | None = None,
    redraw: bool = False,
    on_nonfinite: OnNonFinite = "stop",
    checkpoint: Checkpoint | str | os.PathLike | None = None,
    callback: Callable[[dict], None] | None = None,
    progress: bool = False,
    keep: Literal["last", "best", "average"] = "last",
) -> tuple[Any, FitHistory]:
    r"""Fit the leaves of ``model`` selected by ``where`` by minimising ``loss_fn``.

    Each step evaluates the loss and its gradient (``eqx.filter_value_and_grad``) and
    applies one ``optimizer`` update, in one compiled function reused at every step; the
    other leaves stay fixed. A bounded parameter is optimized through a transform
    $x = T(u)$ (``bounds``): the optimizer updates the unconstrained $u$.

    **Arguments**:

    - ``model``: any PyTree, usually a ``netdyn.Network``.
    - ``loss_fn``: ``loss_fn(model, key)`` returns a scalar loss, or a pair
      ``(loss, metrics)`` where ``metrics`` is a ``dict`` of scalars recorded in the
      history (e.g. ``{"fc_r": r}``; ``netdyn.FcLoss`` returns ``fc_r`` and ``rmse``).
      It is traced once, under ``jit`` and ``grad``. A chained loss (``nd.Chained``)
      carries its runs' end states from step to step, in the fit's checkpoint too.
    - ``optimizer``: an ``optax.GradientTransformation`` (e.g. ``optax.adam(1e-2)``).
      It sees a list of the unconstrained values, one array per leaf of ``where``'s
      result, in order: ``optax.multi_transform({"G": optax.adam(1e-3), "I_o":
      optax.adam(1e-2)}, ["G", "I_o"])`` gives each leaf its own step. Its ``update``
      also receives the loss as ``value=`` (optax's extra arguments), for optimizers
      that use it: ``netdyn.backtrack(optax.adam(1e-2))`` takes back bad steps.
    - ``where``: ``model -> leaf`` or a tuple / PyTree of leaves, as for
      ``eqx.tree_at``: e.g. ``lambda n: n.coupling.G`` or
      ``lambda n: (n.coupling.G, n.dynamics.I_o)``. Leaves must be floating point (a
      Python float or a float array; a per-region parameter is a ``[nodes]`` array).
    - ``steps``: number of optimization steps, ``>= 1`` (on a resume: the total,
      including the steps already done).
    - ``bounds``: ``None`` (unbounded), one ``AbstractTransform`` for every leaf (e.g.
      ``nd.Positive()``), or a PyTree of the structure of ``where(model)`` holding a
      transform or ``None`` per leaf (e.g. ``(nd.Positive(), nd.Interval(0.0, 1.0))``).
      Initial values must lie strictly inside the ranges.
    - ``key``: the PRNG key passed to ``loss_fn``. By default the same key at every step
      (common random numbers: the noise realisation is fixed, so the loss is a smooth
      deterministic function of the parameters).
    - ``redraw``: pass ``jax.random.fold_in(key, step)`` at step ``step`` instead (fresh
      noise each step; a resumed fit draws the same keys).
    - ``on_nonfinite``: when the loss, the gradient or the updated parameters are NaN or
      infinite, the step is not applied and the fit goes back to the *last good* state
      (the latest parameters and optimizer state with a finite loss and gradient).
      ``"stop"``: raise ``FitDivergedError``, whose ``model`` (and the checkpoint, from
      which a resume restarts, e.g. at a lower learning rate) holds them. ``"skip"``:
      continue from there (with a fixed ``key`` the same step fails again: mostly useful
      with ``redraw=True``).
    - ``checkpoint``: ``nd.Checkpoint(path, every=10, resume=False)``, a file path
      (``Checkpoint(path)``) or ``None``: where the fit's state is saved, how often, and
      whether to continue from it, bit for bit (see ``Checkpoint``). Ctrl-C in the main
      thread lets the step in progress complete and be saved, then raises
      ``KeyboardInterrupt`` (more Ctrl-C within 2 s cannot break that save).
    - ``callback``: called after each step with the history row as a ``dict`` (``step``,
      ``loss``, ``grad_norm``, ``wall_time``, ``skipped``, the metrics, the values by
      name); an exception it raises stops the fit (after saving the checkpoint).
    - ``progress``: print a progress line to stderr (see ``Progress``).
    - ``keep``: ``"last"``: the values after the last update; ``"best"``: the row of lowest
      finite loss (fair with common random numbers only: an error with ``redraw`` or a
      chained loss); ``"average"``: the mean over the second half of the steps
      (``FitHistory.average_rows``, Polyak-Ruppert averaging, for new noise each step).

    **Returns**: ``(fitted_model, history)``: ``model`` with the trained leaves replaced
    by their final (or best) values (arrays), and a ``FitHistory`` with one row per step.

    **Raises**: ``ValueError`` for a ``where`` that selects nothing, a static field or a
    non-floating leaf, bounds that do not match or exclude the initial value, ``steps <
    1``, a ``loss_fn`` that does not return a scalar; ``FitDivergedError`` (``"stop"``).

    ```python
    loss_fn = nd.FcLoss(data.fc, nd.Heun(remat=nd.Uniform(1000)),
                        nd.Bold(period=720.0, variables="S"), duration=43_200.0,
                        burn_in=57_600.0, realisations=4, metric="1-r+mean")
    fitted, history = nd.fit(net, loss_fn, optax.adam(0.01),
                             where=lambda n: n.coupling.G, bounds=nd.Positive(),
                             steps=12, key=jax.random.key(0), keep="best")
    history.to_csv("history.csv")
    ```
    """
    _check_keep(keep, redraw, loss_fn)
    options = FitOptions(steps=steps, bounds=bounds, key=key, redraw=redraw,
                         on_nonfinite=on_nonfinite, checkpoint=checkpoint,
                         callback=callback, progress=progress)
    params = prepare(model, loss_fn, optimizer, where, options)
    xs, history, _ = run(model, loss_fn, optimizer, params=params, batch=None,
                         options=options, x0=[as_float_array(v) for v in params.values])
    fitted = params.set(model, xs)
    kept = {"last": lambda f, h, p: f, "best": _best_row, "average": _average}[keep]
    return kept(fitted, history, params), history


def _check_keep(keep, redraw: bool, loss_fn) -> None:
    """``keep`` is one of the three, and not ``"best"`` when each step sees new noise."""
    if keep not in ("last", "best", "average"):
        raise ValueError(f"keep must be 'last', 'best' or 'average', got {keep!r}.")
    if keep == "best" and (redraw or isinstance(loss_fn, AbstractChainedLoss)):
        why = "redraw=True" if redraw else f"the chained loss {type(loss_fn).__name__}"
        raise ValueError(
            f"keep='best' with {why}: every step's loss is made with different noise, so the "
            "lowest one picks the luckiest noise, not the best parameters. Use keep='average' "
            "(the mean over the second half of the steps) or keep='last'.")


def _best_row(fitted, history: FitHistory, params: FittedParameters):
    """``fitted`` with the parameters of the history row of lowest finite loss."""
    best = history.best_step()
    if best is None:
        return fitted
    current = params.leaf_where(fitted)
    values = [jnp.asarray(history.params[name][best], dtype=jnp.result_type(x))
              for name, x in zip(params.names, current)]
    return params.set(fitted, values)


def _average(fitted, history: FitHistory, params: FittedParameters):
    """``fitted`` with each parameter's mean over ``history.average_rows()``."""
    rows = history.average_rows()
    if rows.size == 0:
        return fitted
    current = params.leaf_where(fitted)
    values = [jnp.asarray(np.mean(history.params[name][rows], axis=0),
                          dtype=jnp.result_type(x))
              for name, x in zip(params.names, current)]
    return params.set(fitted, values)
