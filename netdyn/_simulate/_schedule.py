"""The monitors of a run: which rows each one sees, when each one emits, and its samples."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._monitor._base import AbstractMonitor
from ._arguments import TimeGrid, whole_steps
from ._rows import take_rows


@dataclasses.dataclass(frozen=True)
class MonitorSchedule:
    """Monitors with their state rows and periods (in steps) for one time grid.

    The loop emits every ``every = gcd(periods)`` steps; a monitor whose period is a
    multiple of that keeps its state unchanged at the emissions that are not its own and
    ``collect`` keeps only its own samples.
    """

    monitors: dict[str, AbstractMonitor]
    rows: dict[str, tuple[int, ...]]
    periods: dict[str, int]
    every: int

    @classmethod
    def build(cls, monitors, state_names, grid: TimeGrid) -> "MonitorSchedule":
        """Check ``monitors`` against the state variables and the time grid."""
        monitors = {} if monitors is None else dict(monitors)
        rows, periods = {}, {}
        for name, m in monitors.items():
            if not isinstance(m, AbstractMonitor):
                raise ValueError(
                    f"monitor {name!r} is not an AbstractMonitor: {type(m).__name__}."
                )
            periods[name] = _period_steps(name, m, grid)
            rows[name] = _monitor_rows(name, m, state_names)
        every = math.gcd(*periods.values()) if periods else grid.n_steps
        return cls(monitors, rows, periods, every)

    def init(self, y0, dt: float, previous: dict) -> dict:
        """Fresh monitor states, or the previous run's where their structure matches."""
        states = {}
        for name, m in self.monitors.items():
            fresh = m.init(take_rows(y0, self.rows[name]), dt)
            old = previous.get(name)
            same = old is not None and jax.tree.structure(old) == jax.tree.structure(fresh)
            states[name] = old if same else fresh
        return states

    def update(self, states: dict, y, dt: float) -> dict:
        """Every monitor folds in the state ``y`` after a step."""
        return {
            name: m.update(states[name], take_rows(y, self.rows[name]), dt)
            for name, m in self.monitors.items()
        }

    def emit(self, states: dict, steps_done, dt: float) -> tuple[dict, dict]:
        """Samples of every monitor after ``steps_done`` steps of this run, new states."""
        new, samples = {}, {}
        for name, m in self.monitors.items():
            state, sample = m.emit(states[name], dt)
            if self.periods[name] != self.every:
                due = steps_done % self.periods[name] == 0
                state = jax.tree.map(
                    lambda a, b: jnp.where(due, a, b), state, states[name]
                )
            new[name], samples[name] = state, sample
        return new, samples

    def collect(self, stacked: dict, grid: TimeGrid, fresh_run: bool, dtype):
        """Each monitor's own samples (after its warm-up on a fresh run) and their times."""
        ys, ts = {}, {}
        for name, m in self.monitors.items():
            r = self.periods[name] // self.every
            period = self.periods[name] * grid.dt
            n_samples = grid.n_steps // self.periods[name]
            # Warm-up counts from the start of a fresh run; a continuation keeps every sample.
            drop = math.floor(m.warmup / period + 1e-9) if fresh_run else 0
            if drop >= n_samples:
                raise ValueError(
                    f"monitor {name!r}: warmup ({m.warmup} ms) leaves no sample of the "
                    f"{n_samples} in this run (period {period} ms)."
                )
            ys[name] = jax.tree.map(
                lambda s, r=r, drop=drop: s[r - 1 :: r][drop:], stacked[name]
            )
            ends = grid.t0 + period * np.arange(drop + 1, n_samples + 1)
            ts[name] = jnp.asarray(ends + m.sample_offset(period, grid.dt), dtype)
        return ys, ts


def _period_steps(name: str, m: AbstractMonitor, grid: TimeGrid) -> int:
    if m.period is None:
        steps = 1
    else:
        if not m.period > 0:
            raise ValueError(f"monitor {name!r}: period must be positive, got {m.period}.")
        steps = whole_steps(f"monitor {name!r} period", m.period, grid.dt)
    if grid.n_steps % steps:
        raise ValueError(
            f"the duration ({grid.t1 - grid.t0} ms) is not a whole number of periods of "
            f"monitor {name!r} ({steps * grid.dt} ms)."
        )
    return steps


def _monitor_rows(name: str, monitor: AbstractMonitor, state_names) -> tuple[int, ...]:
    if monitor.variables is None:
        return tuple(range(len(state_names)))
    unknown = [v for v in monitor.variables if v not in state_names]
    if unknown or not monitor.variables:
        raise ValueError(
            f"monitor {name!r}: unknown variable(s) {list(monitor.variables)}; "
            f"state variables are {state_names}."
        )
    return tuple(state_names.index(v) for v in monitor.variables)
