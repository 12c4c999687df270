"""What a fit's checkpoint holds, and resuming from it: the fit must be the same one."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from .atomic import check_writable
from .checkpoint import read_checkpoint, read_tree, save_checkpoint
from .history import FitHistory, HistoryRows
from .select import Selection

# What identifies a fit: a checkpoint resumes only a call that agrees on all of these.
_SAME_FIT = ("names", "shapes", "transforms", "n_starts", "key", "redraw")
_FIELDS = _SAME_FIT + ("step", "good_step", "steps", "history")
_HISTORY_FIELDS = ("step", "loss", "grad_norm", "wall_time", "skipped", "params", "metrics")


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _history(path: Path, saved: dict) -> FitHistory:
    """The checkpoint's history, checked against its step counts (``ValueError``)."""
    n, good, total = saved["step"], saved["good_step"], saved["steps"]
    for name, value in (("step", n), ("good_step", good), ("steps", total)):
        if not _count(value):
            raise ValueError(
                f"checkpoint {path}: {name} must be an integer >= 0, got {value!r}."
            )
    if not good <= n <= total:
        raise ValueError(
            f"checkpoint {path}: its step counts are out of range (good_step={good}, "
            f"step={n}, steps={total}; 0 <= good_step <= step <= steps is needed)."
        )
    h = saved["history"]
    if not isinstance(h, dict):
        raise ValueError(f"checkpoint {path}: history must be a JSON object.")
    for field in _HISTORY_FIELDS:
        if field not in h:
            raise ValueError(f"checkpoint {path} has no field 'history.{field}'.")
    try:
        history = FitHistory.from_dict(h)
    except (ValueError, TypeError, AttributeError) as e:
        raise ValueError(f"checkpoint {path}: its history cannot be read: {e}.") from None
    if list(history.params) != saved["names"]:
        raise ValueError(
            f"checkpoint {path}: history.params holds {list(history.params)}, but the fit "
            f"trains {saved['names']}."
        )
    tail = () if saved["n_starts"] is None else (saved["n_starts"],)
    columns = {name: (getattr(history, name), ()) for name in _HISTORY_FIELDS[1:5]}
    columns.update({f"params.{k}": (v, tuple(shape)) for (k, v), shape
                    in zip(history.params.items(), saved["shapes"])})
    columns.update({f"metrics.{k}": (v, ()) for k, v in history.metrics.items()})
    for name, (value, shape) in columns.items():
        want = (n,) + tail + shape
        # (An empty history has lost its trailing axes in JSON: [] is all it holds.)
        if value.shape != want and not (n == 0 and value.size == 0):
            raise ValueError(
                f"checkpoint {path}: history.{name} has shape {value.shape}, but step={n} "
                f"needs {want}."
            )
    if not np.array_equal(history.step, np.arange(n)):
        raise ValueError(
            f"checkpoint {path}: step={n}, but its history holds steps "
            f"{history.step.tolist()[:8]}{'...' if len(history) > 8 else ''}; they must be "
            f"0, ..., {n - 1}."
        )
    return history


def _key_data(key) -> list[int] | None:
    if key is None:
        return None
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return np.asarray(key).ravel().tolist()


class FitCheckpoint:
    """The checkpoint file of one fit (``path``, ``None`` for none): the loop's state after
    ``step`` completed steps, the history so far, and what identifies the fit."""

    def __init__(self, path, sel: Selection, batch: int | None, key, redraw: bool,
                 steps: int, writer: bool = True):
        self.path = None if path is None else Path(path)
        # With several processes, one (``writer``) writes the file and every one reads it.
        self.writer = writer
        if self.path is not None and writer:
            check_writable(self.path, "checkpoint")
        self.batch = batch
        self.steps = steps
        self.meta = {
            "format": 1,
            "names": list(sel.names),
            "shapes": [list(s) for s in sel.shapes],
            "transforms": [repr(t) for t in sel.transforms],
            "n_starts": batch,
            "key": _key_data(key),
            "redraw": bool(redraw),
        }

    def save(self, state, rows: HistoryRows, n: int, good: int) -> None:
        """Write ``state`` after ``n`` steps (the first ``n`` rows), ``good`` being the step
        count when the last good state was reached (see ``step.step``)."""
        if self.path is None or not self.writer:
            return
        h = rows.history(n, batch=self.batch)
        save_checkpoint(
            self.path, {**self.meta, "step": n, "good_step": good, "steps": self.steps,
                        "history": h.to_dict()},
            state,
        )

    def restore(self, state) -> tuple[object, HistoryRows, int, int]:
        """``(state, rows, n, good)`` saved in the file, ``state`` giving the structure;
        ``ValueError`` if the file belongs to another fit or has more steps than this one."""
        saved, leaves = read_checkpoint(self.path)
        for field in _FIELDS:
            if field not in saved:
                raise ValueError(f"checkpoint {self.path} has no field {field!r}.")
        for field in _SAME_FIT:
            if saved.get(field) != self.meta[field]:
                raise ValueError(
                    f"checkpoint {self.path}: {field} is {saved.get(field)!r} there but "
                    f"{self.meta[field]!r} in this call; resume needs the same fit."
                )
        rows = HistoryRows.from_history(_history(self.path, saved))
        state = read_tree(self.path, leaves, state)
        n, good = saved["step"], saved["good_step"]
        if n > self.steps:
            raise ValueError(
                f"steps={self.steps}, but checkpoint {self.path} has already done {n} steps."
            )
        return state, rows, n, good
