"""One step of the time loop, and the emission of monitor samples between steps."""

from typing import Any

import equinox as eqx
import jax
from jax.ad_checkpoint import checkpoint_name

from .. import _xla_tricks
from .._dynamics._base import clip_to_bounds
from .._solution import SimulationState
from .._stimulus._terms import StimulusTerms
from . import _buffer
from ._buffer import take_rows
from ._couplings import CouplingTerms
from ._schedule import MonitorSchedule


def make_step(dynamics, noise, solver, terms: CouplingTerms, schedule: MonitorSchedule, *,
              key, t0: float, dt: float, step0, dtype, stimuli: StimulusTerms | None = None):
    """``step(carry) -> carry``: advance the network by ``dt``.

    The delayed couplings are read once, from the buffer before the step (TVB's
    semantics); the instantaneous ones and the ``stimuli`` at every solver stage, at the
    stage's time. Noise is drawn from ``fold_in(key, global_step)``. The outputs are
    tagged with ``checkpoint_name`` (``"coupling"``, ``"state"``, ``"history"``,
    ``"monitor"``) for ``Policy`` strategies. The solver stages are recomputed in the
    backward pass unless the solver's strategy saves them (``stages="save"``).
    """
    advance = make_advance(dynamics, noise, solver, terms, key=key, t0=t0, dt=dt, step0=step0,
                           dtype=dtype, stimuli=stimuli,
                           remat=solver.remat.stages == "recompute")

    def step(carry: SimulationState) -> SimulationState:
        y, buf, i = carry.y, carry.buffer, carry.step
        c_delayed = terms.delayed_input(y, buf)
        if c_delayed is not None:
            c_delayed = checkpoint_name(c_delayed, "coupling")
        # Monitors broadcast the new state over their rows (HrfBold's pending samples).
        y1 = checkpoint_name(_xla_tricks.materialise(advance(y, i, c_delayed), i), "state")
        if buf is not None:
            buf = checkpoint_name(_buffer.push(buf, take_rows(y1, terms.cvar)), "history")
        monitors = checkpoint_name(schedule.update(carry.monitors, y1, dt, i + 1 - step0),
                                   "monitor")
        return SimulationState(y1, buf, i + 1, monitors)

    return step


def make_advance(dynamics, noise, solver, terms: CouplingTerms, *, key, t0: float, dt: float,
                 step0, dtype, stimuli: StimulusTerms | None = None, remat: bool = True):
    """``advance(y, step, delayed_input) -> y1``: the solver step of the network (its
    ``dynamics`` and ``noise``, coupled by ``terms``) once the delayed coupling input is
    read (noise, instantaneous couplings, stimuli, stages).

    Written for one network; the batched time loop (``_batched``) runs it under ``vmap``
    with ``remat=False`` (it is never differentiated, and ``jax.checkpoint`` under
    ``vmap`` moves the batch to the leading axis).
    """
    noise_rows = () if noise is None else noise.rows(dynamics.state_names)
    clip = lambda y: clip_to_bounds(dynamics, y)  # noqa: E731

    def stages(t, y, c_delayed, noise_term):
        def drift(t, y):
            dy = dynamics.vector_field(t, y, terms.input(y, c_delayed, dtype))
            # Stimuli are read at the stage's own time, like the instantaneous couplings.
            return dy if stimuli is None else stimuli.add(t, dy)

        return solver.step(drift, t, y, dt, noise_term, clip)

    if remat:
        # The solver stages are node-wise and cheap next to the delayed gather:
        # recomputing them in the backward pass keeps the per-step residuals to the
        # step's inputs (state, delayed coupling input, noise term) instead of every
        # intermediate of every stage.
        stages = jax.checkpoint(stages)

    def advance(y, i, c_delayed):
        t = t0 + (i - step0).astype(dtype) * dt
        noise_term = None
        if noise is not None:
            noise_term = noise.increment(key, i, y, dt, noise_rows)
        return stages(t, y, c_delayed, noise_term)

    return advance


class LoopParts(eqx.Module):
    """Everything the time loop of one run reads, as one pytree (``_loop``'s boundary
    passes its arrays explicitly, as ``custom_vmap`` and ``custom_jvp`` require)."""

    dynamics: Any
    noise: Any
    solver: Any
    terms: CouplingTerms  # the couplings with the graph
    schedule: MonitorSchedule
    stimuli: StimulusTerms | None
    key: Any
    step0: Any
    t0: float = eqx.field(static=True)
    dt: float = eqx.field(static=True)
    dtype: Any = eqx.field(static=True)

    def advance(self, remat: bool = True):
        """``make_advance`` for these parts."""
        return make_advance(self.dynamics, self.noise, self.solver, self.terms, key=self.key,
                            t0=self.t0, dt=self.dt, step0=self.step0, dtype=self.dtype,
                            stimuli=self.stimuli, remat=remat)

    def step(self):
        """``make_step`` for these parts."""
        return make_step(self.dynamics, self.noise, self.solver, self.terms, self.schedule,
                         key=self.key, t0=self.t0, dt=self.dt, step0=self.step0,
                         dtype=self.dtype, stimuli=self.stimuli)

    def emit(self):
        """``make_emit`` for these parts."""
        return make_emit(self.schedule, step0=self.step0, dt=self.dt)


def make_emit(schedule: MonitorSchedule, *, step0, dt: float):
    """``emit(carry) -> (carry, samples)``, run every ``schedule.every`` steps."""

    def emit(carry: SimulationState):
        monitors, samples = schedule.emit(carry.monitors, carry.step - step0, dt)
        return SimulationState(carry.y, carry.buffer, carry.step, monitors), samples

    return emit
