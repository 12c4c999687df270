"""What a fit's checkpoint holds, and resuming from it: the fit must be the same one."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from .checkpoint import read_checkpoint, read_tree, save_checkpoint
from .history import FitHistory, HistoryRows
from .select import Selection

# What identifies a fit: a checkpoint resumes only a call that agrees on all of these.
_SAME_FIT = ("names", "shapes", "transforms", "n_starts", "key", "redraw")


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
                 steps: int):
        self.path = None if path is None else Path(path)
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
        if self.path is None:
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
        for field in _SAME_FIT:
            if saved.get(field) != self.meta[field]:
                raise ValueError(
                    f"checkpoint {self.path}: {field} is {saved.get(field)!r} there but "
                    f"{self.meta[field]!r} in this call; resume needs the same fit."
                )
        state = read_tree(self.path, leaves, state)
        rows = HistoryRows.from_history(FitHistory.from_dict(saved["history"]))
        n, good = int(saved["step"]), int(saved["good_step"])
        if n > self.steps:
            raise ValueError(
                f"steps={self.steps}, but checkpoint {self.path} has already done {n} steps."
            )
        return state, rows, n, good
