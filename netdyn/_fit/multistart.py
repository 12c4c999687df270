"""``fit_multistart``: several starting points fitted at once with ``vmap``."""

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._parameters.fitted import FittedParameters
from .errors import FitDivergedError
from .history import FitHistory
from .loop import prepare, run
from .options import FitOptions
from .placement import StartsPlacement
from .step import float_dtype


def fit_multistart(
    model: Any,
    loss_fn: Callable[[Any, Any], Any],
    optimizer: optax.GradientTransformation,
    *,
    where: Callable[[Any], Any],
    starts: Any,
    devices: Sequence[jax.Device] | None = None,
    **options: Any,
) -> tuple[Any, FitHistory]:
    """Fit from several initial values at once (``jax.vmap`` over starts) and keep the best.

    Arguments as ``fit``, plus ``starts``: the initial values, a PyTree of the structure of
    ``where(model)`` whose leaves have a leading axis of length ``S`` (``S`` starts),
    e.g. ``starts=jnp.array([0.1, 0.3, 0.6])`` for ``where=lambda n: n.coupling.G``. The
    values already in ``model`` at ``where`` are not used. Each start has its own
    optimizer state; all see the same ``key`` (common random numbers across starts, so
    their losses compare fairly). One compiled step runs every start.

    ``**options`` are ``fit``'s keyword arguments ``steps`` (required), ``bounds``,
    ``key``, ``redraw``, ``on_nonfinite``, ``checkpoint`` (an ``nd.Checkpoint`` or a
    path), ``callback`` and ``progress``, with the same meaning and defaults
    (``keep`` does not apply: the best start is chosen by its last loss).

    ``devices``: the devices to split the starts across (default ``jax.devices()``: all
    devices, of every process after ``jax.distributed.initialize()``). The starts are
    padded with copies of the last one to a multiple of the number of devices; the
    padding's results are dropped.

    Non-finite values are handled per start, as in ``fit``: with ``on_nonfinite="stop"``
    the failing start is frozen at its last good parameters (and ignored when choosing
    the best); with ``"skip"`` only that update is skipped. ``FitDivergedError`` is
    raised only if every start has stopped.

    **Returns**: ``(best_model, history)``: ``model`` with the parameters of the start
    whose loss at the last step is lowest, and a ``FitHistory`` whose arrays have a
    second axis over starts, with ``history.best`` the index of the kept start.

    **Several processes, e.g. on a SLURM cluster**: call ``jax.distributed.initialize()``
    at the top of the script, before any other JAX call, and run the same script (the same
    ``fit_multistart`` call, with the same arguments) in every process. The starts are then
    split across the devices of every process; each process returns the same
    ``(best_model, history)``, that of the same call in a single process (to rounding).
    Process 0 alone writes ``checkpoint`` and the progress line; every process reads the
    checkpoint on a resume, so it must lie on a filesystem they share. The
    ``callback`` runs in every process. Under SLURM, ``jax.distributed.initialize()``
    takes the coordinator address, the number of processes and each one's rank from the
    job's environment, so one task per process (one per GPU, or per node on CPUs) is all
    it needs:

    ```bash
    #!/bin/bash
    #SBATCH --nodes=2
    #SBATCH --ntasks-per-node=4      # one process per GPU
    #SBATCH --gpus-per-task=1
    srun python fit_starts.py        # calls jax.distributed.initialize(), then
                                     # nd.fit_multistart(...) as in one process
    ```

    Elsewhere (or on one machine), pass the layout yourself:
    ``jax.distributed.initialize(coordinator_address="host0:1234", num_processes=2,
    process_id=i)`` in process ``i``.
    """
    settings = FitOptions.from_keywords("fit_multistart", options)
    params = prepare(model, loss_fn, optimizer, where, settings)
    x0, batch = _starts(params, starts)
    placement = StartsPlacement(jax.devices() if devices is None else devices, batch)
    xs, history, frozen = run(model, loss_fn, optimizer, params=params, x0=x0, batch=batch,
                              options=settings, placement=placement)
    best = best_start(history, frozen)
    fitted = params.set(model, [x[best] for x in xs])
    return fitted, dataclasses.replace(history, best=best)


def _starts(params: FittedParameters, starts) -> tuple[list, int]:
    """The initial values of every start, checked: ``([leaf values], number of starts)``."""
    leaves, structure = jax.tree.flatten(starts)
    if structure != params.structure:
        raise ValueError(
            f"starts must have the structure of where(model), {params.structure}, with one "
            f"array per trained leaf ({list(params.names)}); got {structure}."
        )
    xs, batch = [], None
    for name, shape, t, v in zip(params.names, params.shapes, params.transforms, leaves):
        a = jnp.asarray(v)
        a = jnp.asarray(a, a.dtype if jnp.issubdtype(a.dtype, jnp.floating) else float_dtype())
        if a.ndim < 1 or a.shape[1:] != shape:
            raise ValueError(
                f"starts for {name} must have shape [starts, *{shape}], got {a.shape}."
            )
        if batch is None:
            batch = a.shape[0]
        if a.shape[0] != batch or batch < 1:
            raise ValueError(
                f"starts: every leaf needs the same number of starts >= 1; {name} has "
                f"{a.shape[0]}, expected {batch}."
            )
        t.check(f"starts for {name}", np.asarray(a))
        xs.append(a)
    return xs, batch


def best_start(h: FitHistory, frozen: np.ndarray) -> int:
    """The start with the lowest loss at the last step, among those not ``frozen``
    (stopped by a non-finite value); a non-finite loss counts as +inf."""
    last = np.where(np.isfinite(h.loss[-1]) & ~frozen, h.loss[-1], np.inf)
    if not np.isfinite(last).any():
        raise FitDivergedError(
            "fit_multistart: no start has a finite loss at the last step.", None, h,
            len(h) - 1,
        )
    return int(np.argmin(last))
