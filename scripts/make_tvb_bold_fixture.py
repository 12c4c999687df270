#!/usr/bin/env python
"""Generate the TVB reference for netdyn's ``HrfBold`` monitor.

Run with the separate TVB environment (TVB is *not* a netdyn dependency)::

    python scripts/make_tvb_bold_fixture.py

Writes ``tests/fixtures/tvb_bold.npz``: a 5-node asymmetric delay-coupled
Generic2dOscillator network simulated by tvb-library 2.10 with ``HeunDeterministic``
(dt = 1 ms, 6 s), recorded by a ``Raw`` monitor and by two ``Bold`` monitors watching
``V`` (period 500 ms; the default 20 s ``FirstOrderVolterra`` kernel, and a 2 s kernel
so that the ring buffer of window means wraps around during the run). Each run is done
twice: stock TVB (float32 delay buffer) and TVB with a float64 delay buffer
(``Simulator64`` from ``make_tvb_fixtures.py``), see ``tests/fixtures/README.md`` §3.

Alignment. TVB's Bold monitor works on the absolute step counter: it averages windows
of 4 ms ending at steps that are multiples of 4 and samples at multiples of
``period / dt``. TVB starts counting at ``len(initial_conditions) - 1``, so the initial
conditions have 1001 rows (a multiple of the horizon H = 77; TVB keeps the last H rows
in order, so the netdyn ``history`` is ``initial_conditions[-H:]``): the first step is
1001, windows and samples then align with netdyn's ``t0 = 1000 ms``, and sample k is
TVB's output at ``t0 + (k + 1) * period``.

Only numpy and tvb are needed. The script drives TVB; no TVB code is copied.
"""

# ruff: noqa: E402  (tvb is imported after silencing its import-time warnings)
from __future__ import annotations

import logging
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

from tvb.datatypes import connectivity as tvb_connectivity, equations as tvb_equations
from tvb.simulator import (
    coupling as tvb_coupling,
    integrators as tvb_integrators,
    models as tvb_models,
    monitors as tvb_monitors,
    simulator as tvb_simulator,
)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_tvb_fixtures import Simulator64, f32_exact  # noqa: E402

OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "tvb_bold.npz")

N_NODES = 5
SEED = 20240925
DT = 1.0  # ms
SPEED = 2.0  # mm/ms
HORIZON = 77  # max integer delay 76 steps; 1001 = 13 * 77
N_IC = 1001  # rows of TVB initial conditions: first step 1001 -> t0 = 1000 ms
N_STEPS = 6000  # 6 s
PERIOD = 500.0  # ms
HRF_LENGTHS = {"": 20_000.0, "_short": 2_000.0}  # TVB default, and one that wraps
COUPLING_A = 0.5


def make_connectome(rng):
    """Weights [target, source] and tract lengths (mm) with max integer delay 76."""
    while True:
        w = f32_exact(rng.uniform(0.2, 1.0, size=(N_NODES, N_NODES)))
        w[rng.random((N_NODES, N_NODES)) < 0.3] = 0.0
        np.fill_diagonal(w, 0.0)
        lengths = rng.uniform(10.0, 148.0, size=(N_NODES, N_NODES))
        np.fill_diagonal(lengths, 0.0)
        lengths[0, 3] = (HORIZON - 1) * SPEED * DT  # the longest tract: 76 steps
        steps = lengths / SPEED / DT
        frac = steps - np.floor(steps)
        if (
            not np.allclose(w, w.T)
            and (w > 0).sum(axis=1).min() >= 1
            and np.all(np.abs(frac - 0.5) > 0.05)
        ):
            return w, lengths


def run(sim_cls, weights, lengths, ic):
    conn = tvb_connectivity.Connectivity(
        weights=weights.copy(),
        tract_lengths=lengths.copy(),
        speed=np.array([SPEED]),
        centres=np.zeros((N_NODES, 3)),
        region_labels=np.array([f"n{i}" for i in range(N_NODES)]),
        areas=np.ones(N_NODES),
    )
    model = tvb_models.Generic2dOscillator()
    model.variables_of_interest = ("V", "W")
    bolds = [
        tvb_monitors.Bold(
            period=PERIOD,
            hrf_length=length,
            hrf_kernel=tvb_equations.FirstOrderVolterra(),
            variables_of_interest=np.array([0]),
        )
        for length in HRF_LENGTHS.values()
    ]
    sim = sim_cls(
        model=model,
        connectivity=conn,
        coupling=tvb_coupling.Linear(a=np.array([COUPLING_A]), b=np.array([0.0])),
        integrator=tvb_integrators.HeunDeterministic(dt=DT),
        monitors=(tvb_monitors.Raw(), *bolds),
        initial_conditions=ic[..., None].copy(),
        simulation_length=N_STEPS * DT,
    )
    sim.configure()
    # TVB set itself up as the module docstring says.
    assert sim.connectivity.horizon == HORIZON, sim.connectivity.horizon
    assert sim.current_step == N_IC - 1
    np.testing.assert_array_equal(sim.current_state[..., 0], ic[-1])
    for bold, length in zip(bolds, HRF_LENGTHS.values()):
        assert bold._interim_istep == 4 and bold._stock_steps == round(length / 4.0)
        assert bold.istep == round(PERIOD / DT)
    (t_raw, raw), *outs = sim.run()
    raw = np.asarray(raw)[..., 0]
    assert raw.shape == (N_STEPS, 2, N_NODES) and np.all(np.isfinite(raw))
    np.testing.assert_allclose(t_raw, (N_IC - 1 + np.arange(1, N_STEPS + 1)) * DT)
    result = {"raw": raw}
    for (t_bold, bold), suffix in zip(outs, HRF_LENGTHS):
        bold = np.asarray(bold)[:, :, :, 0]
        assert bold.shape == (N_STEPS * DT / PERIOD, 1, N_NODES), bold.shape
        result["bold" + suffix] = bold
        result["bold_times"] = np.asarray(t_bold, float)
    kernel = bolds[0].hrf_kernel.parameters
    result["kernel"] = {k: float(v) for k, v in kernel.items()}
    return result


def main():
    rng = np.random.default_rng(SEED)
    weights, lengths = make_connectome(rng)
    idelays = np.rint(lengths / SPEED / DT).astype(np.int64)
    assert idelays.max() + 1 == HORIZON
    history = np.empty((HORIZON, 2, N_NODES))
    history[:, 0] = f32_exact(rng.uniform(-1.5, 2.5, size=(HORIZON, N_NODES)))
    history[:, 1] = f32_exact(rng.uniform(-4.0, 4.0, size=(HORIZON, N_NODES)))
    # TVB keeps the last HORIZON rows; the older rows are never read.
    ic = np.concatenate([np.repeat(history[:1], N_IC - HORIZON, axis=0), history])

    stock = run(tvb_simulator.Simulator, weights, lengths, ic)
    f64 = run(Simulator64, weights, lengths, ic)
    np.testing.assert_array_equal(stock["bold_times"], f64["bold_times"])
    t0 = (N_IC - 1) * DT
    np.testing.assert_allclose(f64["bold_times"], t0 + PERIOD * np.arange(1, 13))

    from importlib.metadata import version

    kernel = f64["kernel"]
    data = dict(
        weights=weights,
        tract_lengths=lengths,
        speed=np.float64(SPEED),
        dt=np.float64(DT),
        idelays=idelays,
        history=history,
        t0=np.float64(t0),
        n_steps=np.int64(N_STEPS),
        model_name=np.array("Generic2dOscillator"),
        state_names=np.array(["V", "W"]),
        coupling_a=np.float64(COUPLING_A),
        variable=np.array("V"),
        period=np.float64(PERIOD),
        interim=np.float64(4.0),
        hrf_length=np.float64(HRF_LENGTHS[""]),
        hrf_length_short=np.float64(HRF_LENGTHS["_short"]),
        tau_s=np.float64(kernel["tau_s"]),
        tau_f=np.float64(kernel["tau_f"]),
        k_1=np.float64(kernel["k_1"]),
        V_0=np.float64(kernel["V_0"]),
        raw_V_f64=f64["raw"][:, 0],  # [T, N]: V after each step, float64 delay buffer
        bold_times=f64["bold_times"],
        bold=stock["bold"],  # [samples, 1, N], stock TVB
        bold_f64=f64["bold"],
        bold_short=stock["bold_short"],
        bold_short_f64=f64["bold_short"],
        seed=np.int64(SEED),
        tvb_version=np.array("tvb-library " + version("tvb-library")),
    )
    np.savez_compressed(OUT, **data)
    size = os.path.getsize(OUT)
    assert size < 300_000, size
    print(
        f"{OUT}: {size / 1024:.1f} KiB; V in [{data['raw_V_f64'].min():.3g}, "
        f"{data['raw_V_f64'].max():.3g}]; |raw - raw_f64| max "
        f"{np.abs(stock['raw'] - f64['raw']).max():.2e}; |bold - bold_f64| max "
        f"{np.abs(data['bold'] - data['bold_f64']).max():.2e}, short "
        f"{np.abs(data['bold_short'] - data['bold_short_f64']).max():.2e}; "
        f"bold range [{data['bold_f64'].min():.4g}, {data['bold_f64'].max():.4g}]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
