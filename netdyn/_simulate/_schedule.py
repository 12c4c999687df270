"""The monitors of a run: which rows each one sees, when each one emits, and its samples."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._memory.device import check_fits
from .._monitor._base import AbstractMonitor, AbstractSingleVariableMonitor
from .._names import suggested_variable
from ._arguments import TimeGrid, whole_steps
from ._buffer import take_rows


class MonitorSchedule(eqx.Module):
    """Monitors with their state rows and periods (in steps) for one time grid.

    The loop emits every ``every = gcd(periods)`` steps; a monitor whose period is a
    multiple of that keeps its state unchanged at the emissions that are not its own and
    ``collect`` keeps only its own samples.
    """

    monitors: dict[str, AbstractMonitor]
    rows: dict[str, tuple[int, ...]] = eqx.field(static=True)
    periods: dict[str, int] = eqx.field(static=True)
    every: int = eqx.field(static=True)
    n_steps: int = eqx.field(static=True)
    # Steps between each monitor's ``advance`` (1: none), from ``advance_every(dt)``.
    advances: dict[str, int] = eqx.field(static=True)

    @classmethod
    def build(cls, monitors, dynamics, grid: TimeGrid) -> "MonitorSchedule":
        """Check ``monitors`` against the model's state variables and the time grid."""
        monitors = {} if monitors is None else dict(monitors)
        rows, periods = {}, {}
        for name, m in monitors.items():
            if not isinstance(m, AbstractMonitor):
                raise ValueError(
                    f"monitor {name!r} is not an AbstractMonitor: {type(m).__name__}."
                )
            periods[name] = _period_steps(name, m, grid)
        _check_whole_periods(periods, grid)
        for name, m in monitors.items():
            rows[name] = _monitor_rows(name, m, dynamics)
        every = math.gcd(*periods.values()) if periods else grid.n_steps
        advances = {name: m.advance_every(grid.dt) for name, m in monitors.items()}
        return cls(monitors, rows, periods, every, grid.n_steps, advances)

    def init(self, y0, dt: float, previous: dict) -> dict:
        """The monitors' states at the start of the run: the previous run's (continuation,
        matched by name) or fresh ones (new monitors).

        Every monitor of the previous run must be in this one, with a state of the same
        structure and shapes: a renamed, removed or replaced monitor is an error rather
        than a silent restart of its state.
        """
        missing = [name for name in previous if name not in self.monitors]
        if missing:
            raise ValueError(
                f"history: the SimulationState holds the state of monitor(s) {missing}, "
                f"which this run does not have (its monitors: {list(self.monitors)}). A "
                "continuation keeps each monitor's state by name: pass the same monitors (a "
                "renamed monitor would restart), or drop their state first with "
                "dataclasses.replace(state, monitors={...})."
            )
        states = {}
        for name, m in self.monitors.items():
            fresh = m.init(take_rows(y0, self.rows[name]), dt)
            if name not in previous:
                states[name] = fresh
                continue
            old = previous[name]
            if jax.tree.structure(old) != jax.tree.structure(fresh) or [
                jnp.shape(a) for a in jax.tree.leaves(old)
            ] != [jnp.shape(a) for a in jax.tree.leaves(fresh)]:
                raise ValueError(
                    f"history: the state of monitor {name!r} in the SimulationState does not "
                    f"fit this run's {type(m).__name__} (another kind of monitor, other "
                    "variables or another network); a continuation needs the same monitors."
                )
            # A state from a run of another dtype joins this run's carry in its dtype.
            states[name] = jax.tree.map(
                lambda a, f: jnp.asarray(a).astype(f.dtype), old, fresh
            )
        self._check_memory(states, dt)
        return states

    def _check_memory(self, states: dict, dt: float) -> None:
        """Refuse a run whose stacked samples cannot fit in the device's memory, with the
        sizes named, instead of an allocation failure deep in XLA (or NumPy)."""
        n_emit = self.n_steps // self.every
        parts, total = [], 0
        for name, m in self.monitors.items():
            sample = jax.eval_shape(lambda s, m=m: m.emit(s, dt)[1], states[name])
            per_sample = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(sample))
            shapes = ", ".join(f"{x.dtype}{list(x.shape)}" for x in jax.tree.leaves(sample))
            # Every emission stacks a sample of each monitor, and a float64 time stamp.
            total += n_emit * (per_sample + 8)
            parts.append(f"{name!r}: {n_emit} samples of {shapes}")
        check_fits(total, "the monitors would store",
                   f"samples over {self.n_steps} steps ({'; '.join(parts)})",
                   ". Use longer periods or fewer variables, or run in pieces "
                   "(history=sol.final continues a run exactly).")

    def update(self, states: dict, y, dt: float, steps_done) -> dict:
        """Every monitor folds in the state ``y`` after a step, the ``steps_done``-th of this
        run; one whose ``advance_every(dt)`` is ``n > 1`` then runs ``advance`` at every
        ``n``-th step (``lax.cond``: the other steps skip its work)."""
        new = {}
        for name, m in self.monitors.items():
            state = m.update(states[name], take_rows(y, self.rows[name]), dt)
            n = self.advances[name]
            if n > 1:
                state = jax.lax.cond(steps_done % n == 0, lambda s, m=m: m.advance(s, dt),
                                     lambda s: s, state)
            new[name] = state
        return new

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
    return steps


def _ms(steps: int, dt: float) -> str:
    """``steps * dt`` ms as a short number (no float noise such as 59760.00000000001)."""
    return repr(float(f"{steps * dt:.12g}"))


def _check_whole_periods(periods: dict[str, int], grid: TimeGrid) -> None:
    """The run must be a whole number of every monitor's period; the error names the
    nearest durations that are (multiples of all the periods) and ``whole_periods``."""
    late = [name for name, steps in periods.items() if grid.n_steps % steps]
    if not late:
        return
    name, dt = late[0], grid.dt
    common = math.lcm(*periods.values())
    below = grid.n_steps // common * common
    one = common == periods[name]  # only this monitor's period matters

    def text(steps: int) -> str:
        n = steps // common
        return f"{_ms(steps, dt)} ms" + (f" ({n} period{'s' if n > 1 else ''})" if one else "")

    nearest = (f"the nearest are {text(below)} and {text(below + common)}" if below else
               f"the shortest is {text(common)}")
    every = "" if one else f" (whole periods of every monitor: multiples of {_ms(common, dt)} ms)"
    duration = grid.t1 - grid.t0
    raise ValueError(
        f"the duration ({duration} ms) is not a whole number of periods of monitor "
        f"{name!r} ({_ms(periods[name], dt)} ms). Valid durations{every}: {nearest}; "
        f"nd.whole_periods({duration}, {_ms(common, dt)}) rounds a duration to whole periods."
    )


def _monitor_rows(name: str, monitor: AbstractMonitor, dynamics) -> tuple[int, ...]:
    """The state rows ``monitor`` sees; unknown or missing names get an error suggesting
    the model's own names."""
    state_names = dynamics.state_names
    model = type(dynamics).__name__
    variables = monitor.variables
    if variables is None:
        if isinstance(monitor, AbstractSingleVariableMonitor) and len(state_names) > 1:
            raise ValueError(
                f"monitor {name!r}: {type(monitor).__name__} is driven by exactly one state "
                f"variable, and {model} has {len(state_names)} {state_names}; pass e.g. "
                f"variables={(suggested_variable(None, dynamics),)!r} (its coupled variable)."
            )
        return tuple(range(len(state_names)))
    if isinstance(variables, str):  # one name, also for monitors without the converter
        variables = (variables,)
    unknown = [v for v in variables if v not in state_names]
    if unknown or not variables:
        suggestion = tuple(dict.fromkeys(
            v if v in state_names else suggested_variable(v, dynamics) for v in variables))
        raise ValueError(
            f"monitor {name!r}: unknown variable(s) {unknown}; {model}'s state variables "
            f"are {state_names}: did you mean variables={suggestion!r}?"
        )
    return tuple(state_names.index(v) for v in variables)
