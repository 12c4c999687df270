"""One step of the time loop, and the emission of monitor samples between steps."""

import jax
from jax.ad_checkpoint import checkpoint_name

from .._dynamics._base import clip_to_bounds
from .._materialise import materialised
from .._solution import SimulationState
from .._stimulus._terms import StimulusTerms
from . import _buffer
from ._couplings import CouplingTerms
from ._rows import take_rows
from ._schedule import MonitorSchedule


def make_step(network, solver, terms: CouplingTerms, schedule: MonitorSchedule, *,
              key, t0: float, dt: float, step0, dtype, stimuli: StimulusTerms | None = None):
    """``step(carry) -> carry``: advance the network by ``dt``.

    The delayed couplings are read once, from the buffer before the step (TVB's
    semantics); the instantaneous ones and the ``stimuli`` at every solver stage, at the
    stage's time. Noise is drawn from ``fold_in(key, global_step)``. The outputs are
    tagged with ``checkpoint_name`` (``"coupling"``, ``"state"``, ``"history"``,
    ``"monitor"``) for ``Policy`` strategies.
    """
    dynamics, noise = network.dynamics, network.noise
    noise_rows = () if noise is None else noise.rows(dynamics.state_names)
    clip = lambda y: clip_to_bounds(dynamics, y)  # noqa: E731

    # The solver stages are node-wise and cheap next to the delayed gather: recomputing
    # them in the backward pass keeps the per-step residuals to the step's inputs (state,
    # delayed coupling input, noise term) instead of every intermediate of every stage.
    @jax.checkpoint
    def advance(t, y, c_delayed, noise_term):
        def drift(t, y):
            dy = dynamics.vector_field(t, y, terms.input(y, c_delayed, dtype))
            # Stimuli are read at the stage's own time, like the instantaneous couplings.
            return dy if stimuli is None else stimuli.add(t, dy)

        return solver.step(drift, t, y, dt, noise_term, clip)

    def step(carry: SimulationState) -> SimulationState:
        y, buf, i = carry.y, carry.buffer, carry.step
        t = t0 + (i - step0).astype(dtype) * dt
        c_delayed = terms.delayed_input(y, buf)
        if c_delayed is not None:
            c_delayed = checkpoint_name(c_delayed, "coupling")
        noise_term = None
        if noise is not None:
            noise_term = noise.increment(key, i, y, dt, noise_rows)
        # Materialised once: monitors broadcast the new state over their rows (HrfBold's
        # pending samples), which otherwise recomputes the solver stages once per row.
        y1 = materialised(advance(t, y, c_delayed, noise_term), i)
        y1 = checkpoint_name(y1, "state")
        if buf is not None:
            buf = checkpoint_name(_buffer.push(buf, take_rows(y1, terms.cvar)), "history")
        monitors = checkpoint_name(schedule.update(carry.monitors, y1, dt), "monitor")
        return SimulationState(y1, buf, i + 1, monitors)

    return step


def make_emit(schedule: MonitorSchedule, *, step0, dt: float):
    """``emit(carry) -> (carry, samples)``, run every ``schedule.every`` steps."""

    def emit(carry: SimulationState):
        monitors, samples = schedule.emit(carry.monitors, carry.step - step0, dt)
        return SimulationState(carry.y, carry.buffer, carry.step, monitors), samples

    return emit
