"""The error raised when a fit meets a non-finite loss or gradient."""

import numpy as np


class FitDivergedError(RuntimeError):
    """A fit stopped because the loss, its gradient or the update was NaN or infinite.

    The non-finite update is never applied. **Attributes**: ``model``, the model with the
    last good parameters (the latest at which the loss and gradient were finite, usually
    those of the step before the failing one; also the ones in the checkpoint file, if
    any, so that resuming restarts from them), ``history``, the
    ``FitHistory`` up to and including the failing step (its last row holds the
    non-finite value, marked ``skipped``), ``step``, the index of the failing step.
    """

    def __init__(self, message: str, model, history, step: int):
        super().__init__(message)
        self.model = model
        self.history = history
        self.step = step


def diverged_message(k: int, row: dict, names, path, good_n: int) -> str:
    """What ``fit`` says when step ``k`` is not finite (``row``, its history row) and it
    goes back to the state of step ``good_n`` (saved in ``path`` unless ``None``)."""
    params = ", ".join(f"{n}={_short(row[n])}" for n in names)
    where = "" if path is None else (
        f", also saved in {path} (a resume, nd.Checkpoint(path, resume=True), e.g. with "
        f"a smaller learning rate, restarts from step {good_n})"
    )
    if not np.isfinite(row["loss"]):
        what = "the loss is not finite"
    elif not np.isfinite(row["grad_norm"]):
        what = "the gradient of the loss is not finite"
    else:
        # The loss and gradient are finite there: the optimizer's step made the new
        # parameters (or the unconstrained values it updates) NaN or infinite.
        what = "the optimizer's update gives non-finite parameters"
    return (
        f"fit stopped at step {k}: {what} "
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
