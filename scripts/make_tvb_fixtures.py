#!/usr/bin/env python
"""Generate small TVB reference fixtures for netdyn's tests.

Run with the separate TVB environment (TVB is *not* a netdyn dependency)::

    python scripts/make_tvb_fixtures.py

Writes ``tests/fixtures/tvb_<model>.npz`` (one file per model).  Every file holds
a 5-node asymmetric delay-coupled network simulated by tvb-library with
``HeunDeterministic`` (no noise) and a ``Raw`` monitor, starting from a seeded
random initial history.  Everything is stored in netdyn's conventions; see
``tests/fixtures/README.md`` for the exact definition of every array and for the
TVB conventions that were established (by reading tvb-library 2.10 and by the
experiments in ``scripts/check_tvb_convention.py``).

Only numpy and tvb are needed.  The script only *drives* TVB; no TVB code is
copied here.
"""

# ruff: noqa: E402  (tvb is imported after silencing its import-time warnings)
from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

# TVB warns at import time about optional modules; silence that before importing.
from tvb.datatypes import connectivity as tvb_connectivity
from tvb.simulator import (
    coupling as tvb_coupling,
    integrators as tvb_integrators,
    models as tvb_models,
    monitors as tvb_monitors,
    simulator as tvb_simulator,
)
from tvb.simulator.descriptors import NDArray
from tvb.simulator.history import SparseHistory

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_DIR = os.path.join(os.path.dirname(HERE), "tests", "fixtures")

N_NODES = 5
CONNECTOME_SEED = 20240611
# speed * dt is kept fixed so every model gets the same integer delays:
# tract lengths in [5, 40] mm  ->  delays of 3..27 integration steps.
LENGTH_PER_STEP_MM = 1.5

# Established in scripts/check_tvb_convention.py (2-node directed probe) and by
# reading tvb/simulator/coupling.py: TVB's connectivity.weights[i, j] is the
# weight of the connection FROM node j (source, column) TO node i (target, row),
# which is netdyn's W[target, source].  So no transpose is needed.
TVB_WEIGHTS_ARE_TARGET_SOURCE = True


# --------------------------------------------------------------------------
# float64 variant of TVB's history
# --------------------------------------------------------------------------
# Stock TVB (tvb/simulator/history.py, BaseHistory/DenseHistory/SparseHistory)
# declares its weights, delay buffer and delayed-state arrays with dtype 'f',
# i.e. float32: every state written to the delay buffer is rounded to float32,
# the weights are cast to float32, and SparseCoupling's weighted sum is done in
# float32.  To also provide an exact float64 reference we re-declare those
# arrays as float64 in a subclass; nothing else about TVB changes.
class SparseHistory64(SparseHistory):
    weights = NDArray(("n_node", "n_node"), "d")
    es_weights = NDArray(("n_node", "n_cvar", "n_node", "n_mode"), "d")
    buffer = NDArray(("n_time", "n_cvar", "n_node", "n_mode"), "d", read_only=False)
    current_state = NDArray(("n_cvar", "n_node", "n_mode"), "d", read_only=False)
    delayed_state = NDArray(("n_node", "n_cvar", "n_node", "n_mode"), "d", read_only=False)
    nnz_weights = NDArray(("n_nnzw",), "d")


class Simulator64(tvb_simulator.Simulator):
    """TVB Simulator whose history/coupling path runs in float64."""

    def _configure_history(self, initial_conditions=None):
        self.history = SparseHistory64.from_simulator(self, initial_conditions)


def f32_exact(x):
    """Round to the nearest float32 value but keep float64 storage.

    Weights and initial history are made float32-representable so that stock
    TVB's float32 history/weights hold them exactly; only states computed
    during the run are then rounded by stock TVB.
    """
    return np.asarray(x, dtype=np.float32).astype(np.float64)


# --------------------------------------------------------------------------
# connectome
# --------------------------------------------------------------------------
def make_connectome(seed: int = CONNECTOME_SEED, n: int = N_NODES):
    """Random asymmetric weights [target, source] and tract lengths (mm)."""
    rng = np.random.default_rng(seed)
    while True:
        w = f32_exact(rng.uniform(0.2, 1.0, size=(n, n)))
        w[rng.random((n, n)) < 0.3] = 0.0  # some absent connections
        np.fill_diagonal(w, 0.0)
        lengths = rng.uniform(5.0, 40.0, size=(n, n))  # not symmetric either
        np.fill_diagonal(lengths, 0.0)
        steps = lengths / LENGTH_PER_STEP_MM
        frac = steps - np.floor(steps)
        ok = (
            not np.allclose(w, w.T)
            and (w > 0).sum(axis=1).min() >= 1  # every node has an afferent
            and (w == 0).sum() > n  # some off-diagonal zeros
            # keep away from .5 so rint(d/dt) is unambiguous even in float32
            and np.all(np.abs(frac - 0.5) > 0.05)
        )
        if ok:
            return w, lengths


# --------------------------------------------------------------------------
# model specifications
# --------------------------------------------------------------------------
# Parameters listed here are the ones that enter the model's dfun.  Values are
# read back from the configured TVB model, so the stored values are exactly the
# ones TVB used.  Overrides of TVB defaults are listed in `overrides`.
SPECS = {
    "reduced_wong_wang": dict(
        model_cls=tvb_models.ReducedWongWang,
        params=["a", "b", "d", "gamma", "tau_s", "w", "J_N", "I_o"],
        overrides={},
        coupling=("Linear", dict(a=0.5, b=0.0)),
        dt=0.5,
        n_steps=400,
        init_ranges={"S": (0.1, 0.9)},
        seed=1,
    ),
    "generic_2d_oscillator": dict(
        model_cls=tvb_models.Generic2dOscillator,
        params=["tau", "I", "a", "b", "c", "d", "e", "f", "g", "alpha", "beta", "gamma"],
        overrides={},
        coupling=("Linear", dict(a=0.5, b=0.0)),
        dt=0.5,
        n_steps=400,
        init_ranges={"V": (-1.5, 2.5), "W": (-4.0, 4.0)},
        seed=2,
    ),
    "sup_hopf": dict(
        model_cls=tvb_models.SupHopf,
        params=["a", "omega"],
        overrides={"a": 0.2},  # default -0.5 is a damped focus; 0.2 -> limit cycle
        coupling=("Linear", dict(a=0.5, b=0.0)),
        dt=0.1,
        n_steps=400,
        init_ranges={"x": (-1.0, 1.0), "y": (-1.0, 1.0)},
        seed=3,
    ),
    "jansen_rit": dict(
        model_cls=tvb_models.JansenRit,
        params=["A", "B", "a", "b", "v0", "nu_max", "r", "J", "a_1", "a_2", "a_3", "a_4", "mu"],
        overrides={},
        coupling=(
            "SigmoidalJansenRit",
            dict(a=10.0, cmin=0.0, cmax=0.005, midpoint=6.0, r=0.56),
        ),
        dt=0.1,
        n_steps=300,
        init_ranges={
            "y0": (0.0, 0.2),
            "y1": (10.0, 25.0),
            "y2": (5.0, 20.0),
            "y3": (-0.5, 0.5),
            "y4": (-2.0, 2.0),
            "y5": (-2.0, 2.0),
        },
        seed=4,
    ),
    "montbrio_pazo_roxin": dict(
        model_cls=tvb_models.MontbrioPazoRoxin,
        params=["tau", "I", "Delta", "J", "eta", "cr", "cv"],
        overrides={"cv": 0.5},  # default cv=0 would leave coupling row 1 (V) untested
        coupling=("Linear", dict(a=0.5, b=0.0)),
        dt=0.01,
        n_steps=500,
        init_ranges={"r": (0.05, 1.5), "V": (-2.0, 1.0)},
        seed=5,
    ),
    "kuramoto": dict(
        model_cls=tvb_models.Kuramoto,
        params=["omega"],
        overrides={},
        coupling=("Kuramoto", dict(a=1.0)),
        dt=0.1,
        n_steps=400,
        init_ranges={"theta": (0.0, 2.0 * np.pi)},
        seed=6,
    ),
}


def _make_coupling(name, kw):
    cls = getattr(tvb_coupling, name)
    return cls(**{k: np.array([float(v)]) for k, v in kw.items()})


def _tvb_version():
    try:
        from importlib.metadata import version

        return "tvb-library " + version("tvb-library")
    except Exception:  # pragma: no cover
        return "tvb-library ?"


def _scalar(x):
    x = np.asarray(x, dtype=float)
    assert x.size == 1, x
    return float(x.reshape(()))


def run_one(key: str, spec: dict) -> dict:
    weights, lengths = make_connectome()
    n = weights.shape[0]
    dt = float(spec["dt"])
    speed = LENGTH_PER_STEP_MM / dt

    w_tvb = weights if TVB_WEIGHTS_ARE_TARGET_SOURCE else weights.T
    l_tvb = lengths if TVB_WEIGHTS_ARE_TARGET_SOURCE else lengths.T
    def make_conn():
        conn = tvb_connectivity.Connectivity(
            weights=w_tvb.copy(),
            tract_lengths=l_tvb.copy(),
            speed=np.array([speed]),
            centres=np.random.default_rng(0).uniform(-50, 50, (n, 3)),
            region_labels=np.array([f"n{i}" for i in range(n)]),
            areas=np.ones(n),
        )
        conn.configure()
        return conn

    conn = make_conn()
    conn.set_idelays(dt)  # horizon is only known after this (sim.configure redoes it)
    horizon = int(conn.horizon)

    state_names = list(spec["model_cls"].state_variables)
    n_svar = len(state_names)

    # random initial history, netdyn layout [H, n_svar, N]; row -1 = state at t0
    rng = np.random.default_rng(1000 + spec["seed"])
    history = np.empty((horizon, n_svar, n))
    for k, sv in enumerate(state_names):
        lo, hi = spec["init_ranges"][sv]
        history[:, k, :] = f32_exact(rng.uniform(lo, hi, size=(horizon, n)))

    cname, ckw = spec["coupling"]

    def simulate(sim_cls):
        model = spec["model_cls"](
            **{k: np.array([float(v)]) for k, v in spec["overrides"].items()}
        )
        model.variables_of_interest = tuple(model.state_variables)  # Raw sees all
        conn = make_conn()
        sim = sim_cls(
            model=model,
            connectivity=conn,
            coupling=_make_coupling(cname, ckw),
            integrator=tvb_integrators.HeunDeterministic(dt=dt),
            monitors=(tvb_monitors.Raw(),),
            # TVB wants [time, svar, node, mode].  Row order needs no change:
            # TVB's buffer row k (k = 0..H-1) holds the state at
            # t0 - (H-1-k) dt, exactly netdyn's layout (see README).
            initial_conditions=history[..., None].copy(),
            simulation_length=spec["n_steps"] * dt,
        )
        sim.configure()  # configure exactly once: it bumps current_step by H-1

        # sanity: TVB set itself up the way the README says
        assert sim.connectivity.horizon == horizon
        assert sim.good_history_shape == (horizon, n_svar, n, 1)
        assert sim.current_step == horizon - 1
        np.testing.assert_array_equal(sim.current_state[..., 0], history[-1])
        np.testing.assert_array_equal(
            sim.history.buffer[..., 0], history[:, model.cvar, :]
        )
        np.testing.assert_array_equal(sim.history.weights, w_tvb)
        idl = np.asarray(sim.connectivity.idelays, dtype=np.int64)
        np.testing.assert_array_equal(idl, np.rint(l_tvb / speed / dt).astype(int))

        (times, raw), = sim.run(n_steps=int(spec["n_steps"]))
        raw = raw[..., 0]  # drop mode axis -> [T, n_svar, N]
        assert raw.shape == (spec["n_steps"], n_svar, n), raw.shape
        assert np.all(np.isfinite(raw))
        return sim, idl, np.asarray(times, float), np.asarray(raw, float)

    sim, idelays, times, raw = simulate(tvb_simulator.Simulator)
    assert sim.history.buffer.dtype == np.float32  # stock TVB
    sim64, idelays64, times64, raw64 = simulate(Simulator64)
    assert sim64.history.buffer.dtype == np.float64
    np.testing.assert_array_equal(idelays, idelays64)
    np.testing.assert_array_equal(times, times64)
    model = sim.model

    out = dict(
        weights=weights,  # netdyn W[target, source]
        tract_lengths=lengths,  # same [target, source] orientation, mm
        speed=np.float64(speed),
        dt=np.float64(dt),
        idelays=idelays if TVB_WEIGHTS_ARE_TARGET_SOURCE else idelays.T,
        horizon=np.int64(horizon),
        coupling_name=np.array(cname),
        coupling_a=np.float64(_scalar(sim.coupling.a)),
        model_name=np.array(type(model).__name__),
        state_names=np.array(state_names),
        cvar=np.asarray(model.cvar, dtype=np.int64),
        history=history,
        t0=np.float64((horizon - 1) * dt),
        times=times,
        raw=raw,  # stock TVB (float32 delay buffer)
        raw_f64=raw64,  # TVB with float64 history buffer (SparseHistory64)
        n_steps=np.int64(spec["n_steps"]),
        history_seed=np.int64(1000 + spec["seed"]),
        connectome_seed=np.int64(CONNECTOME_SEED),
        tvb_version=np.array(_tvb_version()),
    )
    for k in ckw:
        if k != "a":
            out[f"coupling_{k}"] = np.float64(_scalar(getattr(sim.coupling, k)))
    for p in spec["params"]:
        out[f"param_{p}"] = np.float64(_scalar(getattr(sim.model, p)))
    # state variable boundaries (TVB clamps after each Heun stage); +-inf = none
    lo = np.full(n_svar, -np.inf)
    hi = np.full(n_svar, np.inf)
    svb = model.state_variable_boundaries
    if svb:
        for sv, (b_lo, b_hi) in svb.items():
            k = state_names.index(sv)
            # TVB's Model._setup_sv_boundaries replaces None/+-inf by
            # +-finfo(float64).max; store those as +-inf (= no bound).
            big = np.finfo(np.float64).max
            lo[k] = -np.inf if b_lo is None or float(b_lo) <= -big else float(b_lo)
            hi[k] = np.inf if b_hi is None or float(b_hi) >= big else float(b_hi)
    out["state_lo"] = lo
    out["state_hi"] = hi
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help=f"subset of {list(SPECS)} (default: all)")
    ap.add_argument("--out", default=FIXTURE_DIR)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for key in args.models or list(SPECS):
        if key not in SPECS:
            ap.error(f"unknown model {key!r}; choose from {list(SPECS)}")
        data = run_one(key, SPECS[key])
        path = os.path.join(args.out, f"tvb_{key}.npz")
        np.savez_compressed(path, **data)
        size = os.path.getsize(path)
        assert size < 200_000, (path, size)
        print(
            f"{path}: {size / 1024:.1f} KiB  H={int(data['horizon'])} "
            f"T={data['raw'].shape[0]} svars={[str(v) for v in data['state_names']]} "
            f"delays {data['idelays'][data['weights'] > 0].min()}..{data['idelays'].max()} steps  "
            f"raw range [{data['raw'].min():.3g}, {data['raw'].max():.3g}]  "
            f"|raw - raw_f64|max={np.abs(data['raw'] - data['raw_f64']).max():.2e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
