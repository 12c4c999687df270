#!/usr/bin/env python
"""Evaluate TVB's model right-hand sides (``dfun``) for netdyn's dynamics tests.

Run with the separate TVB environment (TVB is *not* a netdyn dependency)::

    python scripts/make_dynamics_fixtures.py

Writes ``tests/fixtures/tvb_dfun.npz``: for each of TVB's ``ReducedWongWang``,
``Generic2dOscillator``, ``SupHopf``, ``JansenRit``, ``MontbrioPazoRoxin`` and ``Kuramoto``,
the value of ``model.dfun(state, coupling)`` at seeded random states and coupling arrays,
for three parameter sets:

- ``default``: TVB's default parameters;
- ``custom``: one scalar value per parameter, drawn uniformly in the parameter's TVB
  ``domain`` (its ``Range(lo, hi)``);
- ``per_node``: one value per node and parameter, drawn the same way (regional
  heterogeneity).

The script only drives TVB; no TVB code is copied. All randomness comes from seeded
``numpy.random.default_rng`` generators, so a rerun gives identical arrays.

Array conventions (TVB -> netdyn)
---------------------------------
TVB's ``dfun(state, coupling)`` takes ``state`` of shape ``[n_svar, n_node, n_mode]`` and
``coupling`` of shape ``[n_coupling_rows, n_node, n_mode]``, and returns
``[n_svar, n_node, n_mode]``. With one mode (every model here), dropping the trailing mode
axis gives exactly netdyn's ``y`` (``[states, nodes]``, rows in TVB's ``state_variables``
order), ``c`` (``[inputs, nodes]``) and ``vector_field(t, y, c)`` (``[states, nodes]``); TVB
passes no time. Coupling row ``k`` is what TVB's coupling function produced for the model:
for ``Linear``/``Kuramoto`` couplings one row per coupled variable ``cvar[k]``; for
``JansenRit``, whose intended ``SigmoidalJansenRit`` coupling returns a **single** row (the
sigmoid of ``y1 - y2`` is taken inside the coupling), the model reads ``coupling[0]`` only,
so the fixture passes one row. ``local_coupling`` is left at 0 (region simulations).

Per-node parameters are given to TVB as ``[n_node]`` arrays for the numba-vectorised
``dfun`` of ``ReducedWongWang``, ``Generic2dOscillator``, ``SupHopf`` and ``JansenRit``
(their loop axis is the node axis) and as ``[n_node, 1]`` for the NumPy ``dfun`` of
``MontbrioPazoRoxin`` and ``Kuramoto`` (which broadcast against ``[n_node, n_mode]``);
the fixture stores them as ``[n_node]``, netdyn's per-region shape. For the numba models
the script also checks that TVB's own ``_numpy_dfun`` agrees with ``dfun``.

Keys of the ``.npz`` (``<m>`` a netdyn class name, ``<s>`` a parameter-set name):

- ``<m>__state_names`` (str), ``<m>__cvar`` (int), ``<m>__state_lo`` / ``<m>__state_hi``
  (TVB ``state_variable_boundaries``, ``+-inf`` where none), ``<m>__n_coupling_inputs``;
- ``<m>__<s>__y`` ``[states, nodes]``, ``<m>__<s>__c`` ``[inputs, nodes]``,
  ``<m>__<s>__dfun`` ``[states, nodes]``;
- ``<m>__<s>__param__<name>``: every parameter entering ``dfun``, ``()`` or ``[nodes]``.
"""

# ruff: noqa: E402  (tvb is imported after silencing its import-time warnings)
from __future__ import annotations

import logging
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

from tvb.simulator import models as tvb_models

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "tvb_dfun.npz")

N_NODES = 12
SEED = 20240612

# netdyn name -> TVB class, parameters entering dfun, NumPy dfun?, coupling rows,
# ranges of the random states, sampler of the coupling input.
# State ranges are chosen where the nonlinearities are sensitive to their parameters
# (e.g. Jansen-Rit's sigmoids around their thresholds), not TVB's wide initial ranges.
SPECS = {
    "ReducedWongWang": dict(
        cls=tvb_models.ReducedWongWang,
        params=["a", "b", "d", "gamma", "tau_s", "w", "J_N", "I_o"],
        numpy_dfun=False,
        rows=1,
        ranges={"S": (0.0, 1.0)},
        coupling=lambda rng, shape: rng.uniform(0.0, 2.0, shape),
    ),
    "Generic2dOscillator": dict(
        cls=tvb_models.Generic2dOscillator,
        params=["tau", "I", "a", "b", "c", "d", "e", "f", "g", "alpha", "beta", "gamma"],
        numpy_dfun=False,
        rows=1,
        ranges={"V": (-2.0, 4.0), "W": (-6.0, 6.0)},
        coupling=lambda rng, shape: rng.normal(0.0, 1.0, shape),
    ),
    "SupHopf": dict(
        cls=tvb_models.SupHopf,
        params=["a", "omega"],
        numpy_dfun=False,
        rows=2,
        ranges={"x": (-2.0, 2.0), "y": (-2.0, 2.0)},
        coupling=lambda rng, shape: rng.normal(0.0, 1.0, shape),
    ),
    "JansenRit": dict(
        cls=tvb_models.JansenRit,
        params=["A", "B", "a", "b", "v0", "nu_max", "r", "J", "a_1", "a_2", "a_3", "a_4", "mu"],
        numpy_dfun=False,
        rows=1,  # SigmoidalJansenRit's single output row
        ranges={
            "y0": (-0.05, 0.15),
            "y1": (0.0, 25.0),
            "y2": (0.0, 20.0),
            "y3": (-1.0, 1.0),
            "y4": (-5.0, 5.0),
            "y5": (-5.0, 5.0),
        },
        coupling=lambda rng, shape: rng.uniform(0.0, 0.02, shape),
    ),
    "MontbrioPazoRoxin": dict(
        cls=tvb_models.MontbrioPazoRoxin,
        params=["tau", "I", "Delta", "J", "eta", "cr", "cv"],
        numpy_dfun=True,
        rows=2,
        ranges={"r": (0.0, 2.0), "V": (-2.0, 1.5)},
        coupling=lambda rng, shape: rng.normal(0.0, 1.0, shape),
    ),
    "Kuramoto": dict(
        cls=tvb_models.Kuramoto,
        params=["omega"],
        numpy_dfun=True,
        rows=1,
        ranges={"theta": (0.0, 2.0 * np.pi)},
        coupling=lambda rng, shape: rng.normal(0.0, 1.0, shape),
    ),
}


def _bounds(model):
    names = list(model.state_variables)
    lo = np.full(len(names), -np.inf)
    hi = np.full(len(names), np.inf)
    for name, (low, high) in (model.state_variable_boundaries or {}).items():
        big = np.finfo(np.float64).max  # TVB's stand-in for an open bound
        i = names.index(name)
        lo[i] = -np.inf if low is None or low <= -big else low
        hi[i] = np.inf if high is None or high >= big else high
    return lo, hi


def _param_values(spec, which, rng):
    """netdyn-shaped values (``()`` or ``[nodes]``) of the parameters, or None for defaults."""
    if which == "default":
        return None
    values = {}
    for name in spec["params"]:
        domain = getattr(spec["cls"], name).domain
        shape = () if which == "custom" else (N_NODES,)
        values[name] = rng.uniform(domain.lo, domain.hi, shape)
    return values


def _to_tvb(value, numpy_dfun):
    value = np.asarray(value, dtype=np.float64)
    if value.ndim == 0:
        return value.reshape(1)
    return value[:, None] if numpy_dfun else value


def _evaluate(name, spec, which, rng):
    values = _param_values(spec, which, rng)
    kwargs = {} if values is None else {
        k: _to_tvb(v, spec["numpy_dfun"]) for k, v in values.items()
    }
    model = spec["cls"](**kwargs)
    model.configure()
    names = list(model.state_variables)
    y = np.stack([rng.uniform(*spec["ranges"][s], N_NODES) for s in names])
    c = spec["coupling"](rng, (spec["rows"], N_NODES))
    dfun = np.array(model.dfun(y[..., None].copy(), c[..., None].copy()), copy=True)[..., 0]
    if not spec["numpy_dfun"]:
        ref = np.asarray(model._numpy_dfun(y.copy(), c.copy()))
        if ref.shape != dfun.shape or not np.allclose(ref, dfun, rtol=1e-12, atol=1e-300):
            raise AssertionError(f"{name}/{which}: TVB's dfun and _numpy_dfun disagree")
    out = {"y": y, "c": c, "dfun": dfun}
    for p in spec["params"]:
        v = np.asarray(getattr(model, p), dtype=np.float64)
        out[f"param__{p}"] = v.reshape(-1)[0] if v.size == 1 else v.reshape(N_NODES)
    return model, out


def main():
    rng = np.random.default_rng(SEED)
    arrays = {}
    for name, spec in SPECS.items():
        for which in ("default", "custom", "per_node"):
            model, out = _evaluate(name, spec, which, rng)
            for k, v in out.items():
                arrays[f"{name}__{which}__{k}"] = v
        lo, hi = _bounds(model)
        arrays[f"{name}__state_names"] = np.array(list(model.state_variables), dtype=str)
        arrays[f"{name}__cvar"] = np.asarray(model.cvar, dtype=np.int64)
        arrays[f"{name}__state_lo"] = lo
        arrays[f"{name}__state_hi"] = hi
        arrays[f"{name}__n_coupling_inputs"] = np.int64(spec["rows"])
        print(f"{name}: states {list(model.state_variables)}, cvar {model.cvar.tolist()}, "
              f"bounds lo {lo.tolist()} hi {hi.tolist()}")
    np.savez(OUT, **arrays)
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes, {len(arrays)} arrays)")


if __name__ == "__main__":
    main()
