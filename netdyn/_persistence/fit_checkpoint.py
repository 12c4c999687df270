"""``nd.Checkpoint``: where a fit keeps its state, how often, and whether it resumes."""

import dataclasses
import os


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """Where a fit keeps its state, how often it saves it, and whether it resumes from it:
    ``nd.fit(..., checkpoint=nd.Checkpoint("fit.eqx", every=5, resume=True))``. A plain
    path, ``checkpoint="fit.eqx"``, is ``Checkpoint("fit.eqx")``.

    - ``path``: the file. Every ``every`` steps, at the end, on an interruption (an
      exception, ``KeyboardInterrupt``) and before raising ``FitDivergedError`` (then the
      last good state), the state after the last completed step is written there
      atomically (a temporary file, then ``os.replace``): the trained leaves'
      unconstrained values, the optimizer state, the step counter and the history, with
      the parameter names, shapes, transforms and key, under a SHA-256 checksum that is
      verified on resume. A process killed by a signal keeps the last periodic save; with
      several processes, process 0 writes the file.
    - ``every``: save every ``every`` steps, an integer >= 1 (default 10).
    - ``resume``: continue from ``path`` if the file exists (else start afresh). The
      continued fit is bit-for-bit the uninterrupted one: same parameters, same history
      (the rows before the resume are those recorded). The model, ``where``, ``bounds``,
      ``key``, ``redraw`` and the optimizer must be those of the interrupted call
      (checked, except the optimizer's hyper-parameters). A loss compiled differently
      (e.g. another solver ``remat``, equal in exact arithmetic) gives the steps after
      the resume to rounding (~1e-16 relative), not bit for bit.

    ``nd.saved_steps(path)`` says how far a saved fit got.
    """

    path: str | os.PathLike
    every: int = 10
    resume: bool = False

    def __post_init__(self):
        if not isinstance(self.path, str | os.PathLike):
            raise ValueError(f"Checkpoint path must be a file path (str or os.PathLike), "
                             f"got {self.path!r}.")
        if isinstance(self.every, bool) or not isinstance(self.every, int) or self.every < 1:
            raise ValueError(f"Checkpoint every must be an integer >= 1, got {self.every!r}.")
        if not isinstance(self.resume, bool):
            raise ValueError(f"Checkpoint resume must be True or False, got {self.resume!r}.")


def as_checkpoint(checkpoint) -> Checkpoint | None:
    """``checkpoint`` (an ``nd.Checkpoint``, a path standing for ``Checkpoint(path)``, or
    ``None``) as a ``Checkpoint`` or ``None``; ``ValueError`` for anything else."""
    if checkpoint is None or isinstance(checkpoint, Checkpoint):
        return checkpoint
    if isinstance(checkpoint, str | os.PathLike):
        return Checkpoint(checkpoint)
    raise ValueError(f"checkpoint must be an nd.Checkpoint, a file path or None, got "
                     f"{checkpoint!r}.")
