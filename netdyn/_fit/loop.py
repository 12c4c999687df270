"""The optimisation loop shared by ``fit`` and ``fit_multistart``."""

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from .checkpoint import load_checkpoint, read_tree, save_checkpoint
from .errors import FitDivergedError
from .history import FitHistory
from .progress import Progress
from .select import Selection, select

OnNonFinite = Literal["stop", "skip"]


def _split(out) -> tuple[Any, dict[str, Any]]:
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


@eqx.filter_jit
def _step(state, model, key, index, loss_fn, optimizer, transforms, leaf_where,
          redraw: bool, stop: bool, batched: bool):
    """One optimisation step (vmapped over starts when ``batched``).

    ``state = (u, opt_state, frozen, good_u, good_opt)``: the unconstrained values and
    optimiser state the step starts from, whether the start has stopped, and the last
    *good* state (the latest one at which the loss and gradient were finite). A bad step
    (non-finite loss, gradient or update) is not applied: the next step starts again from
    the good state, so that parameters at which the loss is not finite are never kept.
    """
    step_key = key
    if redraw:
        step_key = jax.random.fold_in(key, index)

    def single(state):
        u, opt_state, frozen, good_u, good_opt = state

        def objective(u):
            xs = tuple(t.forward(ui) for t, ui in zip(transforms, u))
            m = eqx.tree_at(leaf_where, model, xs)
            loss, aux = _split(loss_fn(m, step_key))
            return loss, (aux, xs)

        (loss, (aux, xs)), grads = eqx.filter_value_and_grad(objective, has_aux=True)(u)
        gnorm = _global_norm(grads)
        # Optax mixes Python floats with int32 step counts (e.g. Adam's bias correction),
        # which strict dtype promotion refuses: the optimiser runs with standard promotion.
        with jax.numpy_dtype_promotion("standard"):
            updates, new_opt = optimizer.update(grads, opt_state, u)
            new_u = optax.apply_updates(u, updates)
        finite = jnp.isfinite(loss) & jnp.isfinite(gnorm)
        good_here = finite & ~frozen
        good_u = _select_tree(good_here, u, good_u)
        good_opt = _select_tree(good_here, opt_state, good_opt)
        ok = good_here & _all_finite(new_u)
        next_u = _select_tree(ok, new_u, good_u)
        next_opt = _select_tree(ok, new_opt, good_opt)
        next_frozen = frozen | (~ok & stop)
        new_state = (next_u, next_opt, next_frozen, good_u, good_opt)
        return new_state, (loss, gnorm, ~ok, good_here, aux, xs)

    if batched:
        return jax.vmap(single)(state)
    return single(state)


def float_dtype():
    """The default floating dtype (float64 with ``jax_enable_x64``, float32 otherwise)."""
    return jax.dtypes.canonicalize_dtype(jnp.float64)


def as_float_array(v) -> jax.Array:
    """A trained leaf as a (strongly typed) floating array: one compiled step for all."""
    # An explicit dtype gives a strongly typed array (jnp.full(n, 0.3) is weakly typed,
    # and the first update would make it strong: a second compilation).
    dtype = float_dtype() if isinstance(v, float) else jnp.asarray(v).dtype
    return jnp.asarray(v, dtype=dtype)


def _key_data(key) -> list[int] | None:
    if key is None:
        return None
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return np.asarray(key).ravel().tolist()


def _to_host(x) -> np.ndarray:
    return np.asarray(jax.device_get(x))


class _Rows:
    """History rows kept on the host as lists."""

    def __init__(self, names, metric_names=None):
        self.names = tuple(names)
        self.metric_names = metric_names
        self.cols: dict[str, list] = {k: [] for k in
                                      ("step", "loss", "grad_norm", "wall_time", "skipped")}
        self.params = {n: [] for n in names}
        self.metrics: dict[str, list] = {}

    @classmethod
    def from_history(cls, h: FitHistory) -> "_Rows":
        rows = cls(h.params)
        for k in rows.cols:
            rows.cols[k] = list(getattr(h, k))
        rows.params = {k: list(v) for k, v in h.params.items()}
        rows.metrics = {k: list(v) for k, v in h.metrics.items()}
        rows.metric_names = tuple(h.metrics) if len(h) else None
        return rows

    def __len__(self):
        return len(self.cols["step"])

    def append(self, step, loss, gnorm, wall, skipped, metrics, params) -> dict:
        if self.metric_names is None:
            clash = set(metrics) & (set(self.cols) | set(self.names))
            if clash:
                raise ValueError(
                    f"loss_fn's metric name(s) {sorted(clash)} clash with the history's "
                    f"columns (step, loss, grad_norm, wall_time, skipped) or the trained "
                    f"parameters {list(self.names)}; rename them."
                )
            self.metric_names = tuple(metrics)
            self.metrics = {k: [] for k in metrics}
        for k, v in (("step", step), ("loss", loss), ("grad_norm", gnorm),
                     ("wall_time", wall), ("skipped", skipped)):
            self.cols[k].append(v)
        for k in self.metric_names:
            self.metrics[k].append(metrics[k])
        for k, v in zip(self.names, params):
            self.params[k].append(v)
        row = {k: v[-1] for k, v in self.cols.items()}
        row.update({k: v[-1] for k, v in self.metrics.items()})
        row.update({k: v[-1] for k, v in self.params.items()})
        return row

    def history(self, n: int | None = None, best: int | None = None,
                batch: int | None = None) -> FitHistory:
        n = len(self) if n is None else n
        tail = () if batch is None else (batch,)

        def arr(values, shape=(), dtype=float):
            return np.asarray(values[:n], dtype=dtype).reshape((n,) + tail + shape)

        return FitHistory(
            step=np.asarray(self.cols["step"][:n], dtype=np.int64).reshape(n),
            loss=arr(self.cols["loss"]),
            grad_norm=arr(self.cols["grad_norm"]),
            wall_time=arr(self.cols["wall_time"]),
            skipped=arr(self.cols["skipped"], dtype=bool),
            params={k: np.asarray(v[:n], float).reshape((n,) + tail + self._shape(k, v, tail))
                    for k, v in self.params.items()},
            metrics={k: arr(v) for k, v in self.metrics.items()},
            best=best,
        )

    @staticmethod
    def _shape(k, v, tail):
        return np.shape(v[0])[len(tail):] if v else ()


def check_common(steps, on_nonfinite, checkpoint_every, redraw, key, resume, checkpoint):
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}.")
    if on_nonfinite not in ("stop", "skip"):
        raise ValueError(f"on_nonfinite must be 'stop' or 'skip', got {on_nonfinite!r}.")
    if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, int) \
            or checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be an integer >= 1, got {checkpoint_every!r}.")
    if redraw and key is None:
        raise ValueError("redraw=True needs a key (the step key is fold_in(key, step)).")
    if resume and checkpoint is None:
        raise ValueError("resume=True needs checkpoint=<path> to resume from.")


def run(
    model,
    loss_fn: Callable,
    optimizer: optax.GradientTransformation,
    *,
    where: Callable,
    steps: int,
    bounds,
    key,
    redraw: bool,
    on_nonfinite: OnNonFinite,
    checkpoint: str | os.PathLike | None,
    checkpoint_every: int,
    resume: bool,
    callback: Callable[[dict], None] | None,
    progress: bool,
    starts=None,
):
    """The loop of ``fit`` (``starts is None``) and ``fit_multistart``."""
    check_common(steps, on_nonfinite, checkpoint_every, redraw, key, resume, checkpoint)
    if not callable(loss_fn):
        raise ValueError(f"loss_fn must be a function (model, key) -> loss, got {loss_fn!r}.")
    if not isinstance(optimizer, optax.GradientTransformation):
        raise ValueError(
            f"optimizer must be an optax.GradientTransformation, got {type(optimizer).__name__}."
        )
    sel: Selection = select(model, where, bounds)
    x0 = [as_float_array(v) for v in sel.values]
    batch = None
    if starts is not None:
        x0, batch = _starts(sel, starts)
    u = [as_float_array(t.inverse(x)) for t, x in zip(sel.transforms, x0)]
    with jax.numpy_dtype_promotion("standard"):
        if batch is None:
            opt_state = optimizer.init(u)
            frozen = jnp.asarray(False)
        else:
            opt_state = jax.vmap(optimizer.init)(u)
            frozen = jnp.zeros(batch, bool)
    # (u, opt_state, frozen, good_u, good_opt): see _step. The initial state is "good".
    state = (u, opt_state, frozen, u, opt_state)
    # The trained leaves become arrays, so that the compiled step sees them as inputs.
    base = eqx.tree_at(sel.leaf_where, model, tuple(as_float_array(v) for v in sel.values))

    meta = {
        "format": 1,
        "names": list(sel.names),
        "shapes": [list(s) for s in sel.shapes],
        "transforms": [repr(t) for t in sel.transforms],
        "n_starts": batch,
        "key": _key_data(key),
        "redraw": bool(redraw),
    }
    rows = _Rows(sel.names)
    n0 = 0
    # Steps completed when the good state was reached (a diverged fit restarts there).
    good_n = 0
    path = None if checkpoint is None else Path(checkpoint)
    if resume and path.exists():
        saved, f = load_checkpoint(path, None)
        for field in ("names", "shapes", "transforms", "n_starts", "key", "redraw"):
            if saved.get(field) != meta[field]:
                raise ValueError(
                    f"checkpoint {path}: {field} is {saved.get(field)!r} there but "
                    f"{meta[field]!r} in this call; resume needs the same fit."
                )
        state = read_tree(path, f, state)
        rows = _Rows.from_history(FitHistory.from_dict(saved["history"]))
        n0 = int(saved["step"])
        good_n = int(saved["good_step"])
        if n0 > steps:
            raise ValueError(
                f"steps={steps}, but checkpoint {path} has already done {n0} steps."
            )

    def build(u_now):
        xs = [t.forward(ui) for t, ui in zip(sel.transforms, u_now)]
        if batch is not None:
            return xs
        return eqx.tree_at(sel.leaf_where, base, tuple(xs))

    def save(state_now, n, good):
        if path is None:
            return
        h = rows.history(n, batch=batch)
        save_checkpoint(
            path, {**meta, "step": n, "good_step": good, "steps": steps,
                   "history": h.to_dict()},
            state_now,
        )

    show = Progress(steps, sel.names) if progress else None
    stop = on_nonfinite == "stop"
    n = n0
    try:
        for k in range(n0, steps):
            t_start = time.perf_counter()
            new_state, out = _step(
                state, base, key, jnp.asarray(k, jnp.int32), loss_fn, optimizer,
                sel.transforms, sel.leaf_where, bool(redraw), stop, batch is not None,
            )
            loss, gnorm, skipped, good_here, aux, xs = jax.device_get(out)
            jax.block_until_ready(new_state)
            wall = time.perf_counter() - t_start
            row = rows.append(
                k, _to_host(loss), _to_host(gnorm),
                wall if batch is None else np.full(batch, wall), _to_host(skipped),
                {name: _to_host(v) for name, v in aux.items()}, [_to_host(x) for x in xs],
            )
            if batch is None and bool(good_here):
                good_n = k
            if batch is None and stop and bool(skipped):
                # Back to the last good state: resume=True replays the step from there.
                _, _, frozen, good_u, good_opt = new_state
                save((good_u, good_opt, jnp.zeros_like(frozen), good_u, good_opt),
                     good_n, good_n)
                raise FitDivergedError(
                    _diverged_message(k, row, sel.names, path, good_n), build(good_u),
                    rows.history(batch=batch), k,
                )
            if batch is not None and bool(np.all(_to_host(new_state[2]))):
                save(new_state, k + 1, k + 1)
                raise FitDivergedError(
                    f"fit_multistart: every start met a non-finite loss or gradient by step "
                    f"{k}; see history.loss.", None, rows.history(batch=batch), k,
                )
            state, n = new_state, k + 1
            if n % checkpoint_every == 0 or n == steps:
                save(state, n, good_n)
            if show is not None:
                show(row)
            if callback is not None:
                callback(row)
    except FitDivergedError:
        raise
    except BaseException:
        # Interrupted (KeyboardInterrupt, an error in loss_fn or callback): keep the last
        # completed step on disk, so that resume=True continues from it. (Nothing to
        # keep if no step completed, e.g. a loss_fn that fails to trace.)
        if n > n0:
            save(state, n, good_n)
        raise
    finally:
        if show is not None:
            show.close()
    return build(state[0]), rows.history(batch=batch), sel, _to_host(state[2])


def _diverged_message(k, row, names, path, good_n) -> str:
    params = ", ".join(f"{n}={_short(row[n])}" for n in names)
    where = "" if path is None else (
        f", also saved in {path} (resume=True, e.g. with a smaller learning rate, restarts "
        f"from step {good_n})"
    )
    return (
        f"fit stopped at step {k}: the loss, its gradient or the update is not finite "
        f"(loss={row['loss']}, grad_norm={row['grad_norm']}) at {params}. The fitted "
        f"model (FitDivergedError.model) keeps the last good parameters, those of step "
        f"{good_n}{where}. Lower the learning rate, tighten bounds, or pass "
        "on_nonfinite='skip'."
    )


def _short(x) -> str:
    a = np.asarray(x)
    if a.ndim == 0:
        return f"{float(a):.6g}"
    return f"[{a.size} values, mean {float(np.mean(a)):.6g}]"


def _starts(sel: Selection, starts) -> tuple[list, int]:
    leaves, structure = jax.tree.flatten(starts)
    if structure != sel.structure:
        raise ValueError(
            f"starts must have the structure of where(model), {sel.structure}, with one "
            f"array per trained leaf ({list(sel.names)}); got {structure}."
        )
    xs, batch = [], None
    for name, shape, t, v in zip(sel.names, sel.shapes, sel.transforms, leaves):
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

