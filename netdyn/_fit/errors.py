"""The error raised when a fit meets a non-finite loss or gradient."""


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
