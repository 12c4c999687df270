"""The settings of the optimization loop that ``fit`` and ``fit_multistart`` share."""

import dataclasses
import os
from collections.abc import Callable
from typing import Any, Literal

import jax
import numpy as np

from .._custom_types import Key

OnNonFinite = Literal["stop", "skip"]


def check_common(steps, on_nonfinite, checkpoint_every, redraw, key, resume, checkpoint):
    """``ValueError`` naming the first loop setting that is not valid."""
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}.")
    if on_nonfinite not in ("stop", "skip"):
        raise ValueError(f"on_nonfinite must be 'stop' or 'skip', got {on_nonfinite!r}.")
    if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, int) \
            or checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be an integer >= 1, got {checkpoint_every!r}.")
    if key is not None and not isinstance(key, (jax.Array, np.ndarray)):
        raise ValueError(f"key must be a PRNG key, jax.random.key(seed), got {key!r}.")
    if redraw and key is None:
        raise ValueError("redraw=True needs a key (the step key is fold_in(key, step)).")
    if resume and checkpoint is None:
        raise ValueError("resume=True needs checkpoint=<path> to resume from.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FitOptions:
    """The keyword arguments of ``fit`` that also apply to ``fit_multistart``, with their
    defaults (documented in ``fit``), validated when built."""

    steps: int
    bounds: Any = None
    key: Key | None = None
    redraw: bool = False
    on_nonfinite: OnNonFinite = "stop"
    checkpoint: str | os.PathLike | None = None
    checkpoint_every: int = 10
    resume: bool = False
    callback: Callable[[dict], None] | None = None
    progress: bool = False

    def __post_init__(self):
        check_common(self.steps, self.on_nonfinite, self.checkpoint_every, self.redraw,
                     self.key, self.resume, self.checkpoint)

    @classmethod
    def from_keywords(cls, caller: str, options: dict[str, Any]) -> "FitOptions":
        """``FitOptions(**options)``, with Python's own ``TypeError`` for a keyword that is
        not an option, but naming ``caller`` (the public function) rather than this class."""
        known = {f.name for f in dataclasses.fields(cls)}
        for name in options:
            if name not in known:
                raise TypeError(
                    f"{caller}() got an unexpected keyword argument {name!r} (options: "
                    f"{', '.join(sorted(known))})."
                )
        if "steps" not in options:
            raise TypeError(f"{caller}() missing 1 required keyword-only argument: 'steps'")
        return cls(**options)
