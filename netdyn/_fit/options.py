"""The settings of the optimization loop that ``fit`` and ``fit_multistart`` share."""

import dataclasses
import os
from collections.abc import Callable
from typing import Any, Literal

import jax
import numpy as np

from .._custom_types import Key
from .._persistence.fit_checkpoint import Checkpoint, as_checkpoint

OnNonFinite = Literal["stop", "skip"]


def check_common(steps, on_nonfinite, redraw, key):
    """``ValueError`` naming the first loop setting that is not valid."""
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}.")
    if on_nonfinite not in ("stop", "skip"):
        raise ValueError(f"on_nonfinite must be 'stop' or 'skip', got {on_nonfinite!r}.")
    if key is not None and not isinstance(key, (jax.Array, np.ndarray)):
        raise ValueError(f"key must be a PRNG key, jax.random.key(seed), got {key!r}.")
    if redraw and key is None:
        raise ValueError("redraw=True needs a key (the step key is fold_in(key, step)).")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FitOptions:
    """The keyword arguments of ``fit`` that also apply to ``fit_multistart``, with their
    defaults (documented in ``fit``), validated when built."""

    steps: int
    bounds: Any = None
    key: Key | None = None
    redraw: bool = False
    on_nonfinite: OnNonFinite = "stop"
    checkpoint: Checkpoint | str | os.PathLike | None = None
    callback: Callable[[dict], None] | None = None
    progress: bool = False

    def __post_init__(self):
        check_common(self.steps, self.on_nonfinite, self.redraw, self.key)
        object.__setattr__(self, "checkpoint", as_checkpoint(self.checkpoint))

    @property
    def every(self) -> int:
        """Save every this many steps (and at the end): the checkpoint's ``every``."""
        return self.steps if self.checkpoint is None else self.checkpoint.every

    @property
    def resume(self) -> bool:
        """Whether to continue from the checkpoint (if its file exists)."""
        return self.checkpoint is not None and self.checkpoint.resume

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
