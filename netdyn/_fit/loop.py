"""The optimization loop shared by ``fit`` and ``fit_multistart``: steps, history rows,
checkpoints, and the stop on non-finite values."""

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._loss._base import AbstractChainedLoss
from .._parameters.fitted import FittedParameters
from .._persistence import interrupt
from .._persistence.resume import FitCheckpoint
from .errors import FitDivergedError, diverged_message
from .history import FitHistory, HistoryRows
from .options import FitOptions
from .placement import StartsPlacement
from .progress import Progress
from .step import FitState, as_float_array, initial_state, step


def _to_host(x) -> np.ndarray:
    return np.asarray(jax.device_get(x))


def prepare(model, loss_fn, optimizer, where, options: FitOptions) -> FittedParameters:
    """The trained leaves of ``model``, after checking ``loss_fn`` and ``optimizer``."""
    if not callable(loss_fn):
        raise ValueError(f"loss_fn must be a function (model, key) -> loss, got {loss_fn!r}.")
    if not isinstance(optimizer, optax.GradientTransformation):
        raise ValueError(
            f"optimizer must be an optax.GradientTransformation, got {type(optimizer).__name__}."
        )
    return FittedParameters(model, where, options.bounds)


class _Loop:
    """One run of the loop: what stays fixed across steps, and the history being recorded.
    ``batch`` is ``None`` for ``fit``, the number of starts for ``fit_multistart``, whose
    arrays ``placement`` splits across devices (``None``: the default device)."""

    def __init__(self, model, loss_fn, optimizer, params: FittedParameters,
                 batch: int | None, options: FitOptions, placement: StartsPlacement | None):
        self.loss_fn, self.optimizer, self.params = loss_fn, optimizer, params
        self.batch, self.options, self.placement = batch, options, placement
        # The trained leaves become arrays, so that the compiled step sees them as inputs.
        self.base = params.set(model, [as_float_array(v) for v in params.values])
        self.key = options.key
        # With several processes (jax.distributed), one writes the files and progress.
        self.writer = jax.process_index() == 0
        if placement is not None:
            self.base, self.key = placement.whole((self.base, self.key))
        path = None if options.checkpoint is None else options.checkpoint.path
        self.checkpoint = FitCheckpoint(path, params, batch, options.key,
                                        options.redraw, options.steps, self.writer,
                                        chained=isinstance(loss_fn, AbstractChainedLoss))
        self.rows = HistoryRows(params.names)

    def host(self, tree):
        """``tree`` on the host (gathered from every process, without padding)."""
        if self.placement is None:
            return jax.device_get(tree)
        return self.placement.host(tree)


    def carry(self, u: list, shape_only: bool):
        """A chained loss's carry before the first step (``loss_fn.start`` at the
        parameters ``u``, for each start), or, with ``shape_only``, zeros of its structure
        (a resume reads it from the checkpoint); ``None`` for any other loss."""
        if not isinstance(self.loss_fn, AbstractChainedLoss):
            return None

        def start(u):
            model = self.params.set(self.base, list(self.params.forward(u)))
            return self.loss_fn.start(model, self.key)

        start = eqx.filter_jit(start if self.batch is None else jax.vmap(start))
        if shape_only:
            return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype),
                                eqx.filter_eval_shape(start, u))
        return start(u)

    def save(self, state, n: int, good: int) -> None:
        if self.checkpoint.path is not None:
            self.checkpoint.save(self.host(state), self.rows, n, good)

    def advance(self, state, k: int):
        """Step ``k``: ``(next state, history row, good_here, skipped)``."""
        o = self.options
        t_start = time.perf_counter()
        index = jnp.asarray(k, jnp.int32)
        if self.placement is not None:
            index = self.placement.whole(np.asarray(k, np.int32))
        new_state, out = step(
            state, self.base, self.key, index, self.loss_fn, self.optimizer,
            self.params.transforms, self.params.leaf_where, bool(o.redraw),
            o.on_nonfinite == "stop", self.batch is not None,
        )
        loss, gnorm, skipped, good_here, aux, xs = self.host(out)
        jax.block_until_ready(new_state)
        wall = time.perf_counter() - t_start
        row = self.rows.append(
            k, _to_host(loss), _to_host(gnorm),
            wall if self.batch is None else np.full(self.batch, wall), _to_host(skipped),
            {name: _to_host(v) for name, v in aux.items()}, [_to_host(x) for x in xs],
        )
        return new_state, row, good_here, skipped

    def stop_single(self, k: int, new_state, row: dict, skipped, good_n: int) -> None:
        """``fit`` with ``on_nonfinite="stop"``: after a bad step ``k``, save the last good
        state (``nd.Checkpoint(..., resume=True)`` replays the step from there) and raise."""
        if not (self.options.on_nonfinite == "stop" and bool(skipped)):
            return
        good = new_state
        self.save(FitState(good.good_u, good.good_opt, jnp.zeros_like(good.frozen),
                           good.good_u, good.good_opt, good.carry), good_n, good_n)
        model = self.params.set(self.base, self.params.forward(good.good_u))
        raise FitDivergedError(
            diverged_message(k, row, self.params.names, self.checkpoint.path, good_n), model,
            self.rows.history(), k,
        )

    def stop_starts(self, k: int, new_state) -> None:
        """``fit_multistart``: raise once every start has stopped (a stopped start stays
        frozen at its last good parameters, the others go on)."""
        if bool(np.all(self.host(new_state.frozen))):
            self.save(new_state, k + 1, k + 1)
            raise FitDivergedError(
                f"fit_multistart: every start met a non-finite loss or gradient by step "
                f"{k}; see history.loss.", None, self.rows.history(batch=self.batch), k,
            )

    def run(self, state, n0: int, good_n: int):
        """Steps ``n0, ..., steps - 1`` from ``state``; returns the final state."""
        o = self.options
        show = Progress(o.steps, self.params.names) if o.progress and self.writer else None
        n = saved = n0
        # Ctrl-C stops the fit after the step in progress and its checkpoint (see
        # interrupt.py); a second Ctrl-C cannot break the save that keeps that step.
        with interrupt.defer_interrupts() as stop:
            try:
                for k in range(n0, o.steps):
                    new_state, row, good_here, skipped = self.advance(state, k)
                    if self.batch is None:
                        good_n = k if bool(good_here) else good_n
                        self.stop_single(k, new_state, row, skipped, good_n)
                    else:
                        self.stop_starts(k, new_state)
                    state, n = new_state, k + 1
                    if n % o.every == 0 or n == o.steps:
                        self.save(state, n, good_n)
                        saved = n
                    if show is not None:
                        show(row)
                    if o.callback is not None:
                        o.callback(row)
                    stop.check()
            except FitDivergedError:
                raise
            except BaseException:
                # Interrupted (KeyboardInterrupt, an error in loss_fn or callback): keep the
                # last completed step on disk, so that a resume continues from it.
                # (Nothing to keep if no step completed, e.g. a loss_fn that fails to trace.)
                if n > saved:
                    self.save(state, n, good_n)
                raise
            finally:
                if show is not None:
                    show.close()
        return state


def run(model, loss_fn, optimizer, *, params: FittedParameters, x0: list, batch: int | None,
        options: FitOptions, placement: StartsPlacement | None = None,
        ) -> tuple[list, FitHistory, np.ndarray]:
    """Fit from the physical values ``x0`` of the leaves ``params`` (with a leading axis of
    ``batch`` starts, or ``batch=None``). Returns ``(xs, history, frozen)``: the final
    physical values, the history, and which starts stopped on a non-finite value."""
    loop = _Loop(model, loss_fn, optimizer, params, batch, options, placement)
    u = [as_float_array(x) for x in params.inverse(x0)]
    resuming = bool(options.resume and loop.checkpoint.path.exists())
    state = initial_state(optimizer, u, batch, loop.carry(u, shape_only=resuming))
    n0 = good_n = 0
    if resuming:
        state, loop.rows, n0, good_n = loop.checkpoint.restore(state)
    if placement is not None:
        state = placement.starts(state)
    state = loop.run(state, n0, good_n)
    u, frozen = state.u, state.frozen
    if placement is not None:
        # Gathered from every process, so that the result lives on this process's device.
        u, frozen = placement.host((u, frozen))
        u = [jnp.asarray(x) for x in u]
    return list(params.forward(u)), loop.rows.history(batch=batch), _to_host(frozen)
