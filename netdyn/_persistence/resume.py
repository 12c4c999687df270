"""What a fit's checkpoint holds, and resuming from it: the fit must be the same one."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from .._fit.history import FitHistory, HistoryRows
from .._parameters.fitted import FittedParameters
from .atomic import check_writable
from .checkpoint import read_checkpoint, read_tree, save_checkpoint

# What identifies a fit: a checkpoint resumes only a call that agrees on all of these.
_SAME_FIT = ("names", "shapes", "transforms", "n_starts", "key", "redraw")
_FIELDS = _SAME_FIT + ("step", "good_step", "steps", "history")
_HISTORY_FIELDS = ("step", "loss", "grad_norm", "wall_time", "skipped", "params", "metrics")


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _list_of(value, test) -> bool:
    return isinstance(value, list) and all(test(v) for v in value)


def _header_rules(saved: dict) -> dict:
    """``{field: (whether the field's value is valid, what a valid one is)}``."""
    names, n_starts = saved["names"], saved["n_starts"]
    size = len(names) if isinstance(names, list) else None
    return {
        "names": (_list_of(names, lambda v: isinstance(v, str)), "a list of names"),
        "shapes": (_list_of(saved["shapes"], lambda v: _list_of(v, _count))
                   and len(saved["shapes"]) == size,
                   "a list of shapes (lists of whole numbers >= 0), one per name"),
        "transforms": (_list_of(saved["transforms"], lambda v: isinstance(v, str))
                       and len(saved["transforms"]) == size, "a list of text, one per name"),
        "n_starts": (n_starts is None or (_count(n_starts) and n_starts >= 1),
                     "null or an integer >= 1"),
        "key": (saved["key"] is None or _list_of(saved["key"], _count),
                "null or a list of integers >= 0"),
        "redraw": (isinstance(saved["redraw"], bool), "true or false"),
    }


def read_header(path: str | Path) -> tuple[dict, bytes, FitHistory]:
    """``(header, leaves, history)`` of checkpoint ``path`` (see ``read_checkpoint``), every
    field of the header checked: ``ValueError`` naming the file and the field."""
    path = Path(path)
    saved, leaves = read_checkpoint(path)
    for field in _FIELDS:
        if field not in saved:
            raise ValueError(f"checkpoint {path} has no field {field!r}.")
    for field, (ok, what) in _header_rules(saved).items():
        if not ok:
            raise ValueError(
                f"checkpoint {path}: {field} must be {what}, got {saved[field]!r}."
            )
    return saved, leaves, _history(path, saved)


def saved_steps(path: str | Path) -> tuple[int, int]:
    """How far the fit saved in checkpoint ``path`` (``fit(..., checkpoint=path)``, or
    ``fit_multistart``'s) got, read from its header (the file's checksum verified, its
    arrays not restored).

    **Returns** ``(steps done, steps in all)``: ``fit(...,
    checkpoint=nd.Checkpoint(path, resume=True))`` continues at step ``done + 1`` of
    ``steps``.

    **Raises** ``ValueError`` naming the file: not a checkpoint, corrupt (its SHA-256
    checksum), or a header field that is missing or not valid (naming the field);
    ``FileNotFoundError`` if there is no file.
    """
    saved, _, _ = read_header(path)
    return saved["step"], saved["steps"]


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

    def __init__(self, path, params: FittedParameters, batch: int | None, key, redraw: bool,
                 steps: int, writer: bool = True, chained: bool = False):
        self.path = None if path is None else Path(path)
        # With several processes, one (``writer``) writes the file and every one reads it.
        self.writer = writer
        if self.path is not None and writer:
            check_writable(self.path, "checkpoint")
        self.batch = batch
        self.steps = steps
        self.meta = {
            "format": 1,
            "names": list(params.names),
            "shapes": [list(s) for s in params.shapes],
            "transforms": [repr(t) for t in params.transforms],
            "n_starts": batch,
            "key": _key_data(key),
            "redraw": bool(redraw),
            # Whether the state holds a chained loss's carry (absent: no carry, as in the
            # checkpoints written before chained losses).
            "chained": bool(chained),
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
        saved, leaves, history = read_header(self.path)
        for field in _SAME_FIT:
            if saved[field] != self.meta[field]:
                raise ValueError(
                    f"checkpoint {self.path}: {field} is {saved[field]!r} there but "
                    f"{self.meta[field]!r} in this call; resume needs the same fit."
                )
        if saved.get("chained", False) != self.meta["chained"]:
            raise ValueError(
                f"checkpoint {self.path}: it was written by a fit "
                f"{'with' if saved.get('chained', False) else 'without'} a chained loss "
                f"(nd.Chained), this call is {'with' if self.meta['chained'] else 'without'} "
                "one; resume needs the same fit."
            )
        rows = HistoryRows.from_history(history)
        state = read_tree(self.path, leaves, state)
        n, good = saved["step"], saved["good_step"]
        if n > self.steps:
            raise ValueError(
                f"steps={self.steps}, but checkpoint {self.path} has already done {n} steps."
            )
        return state, rows, n, good
