"""Simulation state and solution containers."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PyTree

from ._custom_types import State


class SimulationState(eqx.Module):
    """Everything needed to continue a simulation exactly where it stopped.

    Pass it as ``history=`` to ``simulate`` to continue: the dynamics state, the delay
    history buffer, the global step counter (which drives counter-based noise, so pieces
    join bit for bit with the same key), the monitors' states and the time reached.

    - ``y``: ``[states, nodes]`` state at the end of the run.
    - ``buffer``: ``[rows, nodes, coupled]`` history of the coupled variables (newest row
      last), or ``None`` without delayed couplings.
    - ``step``: number of steps taken since the very first run.
    - ``monitors``: ``{name: monitor state}``.
    - ``t``: the time (ms) the run ended at, its ``t1``. A continuation must start there:
      ``simulate`` refuses a ``t0`` more than ``1e-3 dt`` away (a runtime error). ``None``
      inside the time loop, and in states built by hand (then ``t0`` is not checked).

    A continuation keeps the monitors' states by name: it must have every monitor of the
    previous run, each of the same kind and shape (a renamed or removed monitor is an
    error, not a silent restart). New monitors start fresh; drop a monitor's state
    explicitly with ``dataclasses.replace(state, monitors={...})``.
    """

    y: State
    buffer: Float[Array, "rows nodes k"] | None
    step: Int[Array, ""]
    monitors: dict[str, PyTree]
    t: Float[Array, ""] | None = None

    def is_finite(self) -> Bool[Array, ""]:
        """Whether the state ``y`` and the ``buffer`` hold only finite numbers (a run that
        diverged leaves NaN or inf there)."""
        finite = jnp.all(jnp.isfinite(self.y))
        if self.buffer is not None:
            finite = finite & jnp.all(jnp.isfinite(self.buffer))
        return finite


class Solution(eqx.Module):
    """Output of ``simulate``: monitor samples, their times, and the final state.

    ``sol["name"]`` is the array of samples of monitor ``name``, ``[samples, ...]``;
    ``sol.ts["name"]`` their times (ms); ``sol.final`` a ``SimulationState``.
    """

    ys: dict[str, PyTree]
    ts: dict[str, Float[Array, " samples"]]
    final: SimulationState

    def __getitem__(self, name: str):
        return self.ys[name]
