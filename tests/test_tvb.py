"""Reproduction of TVB (tvb-library 2.10) trajectories: deterministic Heun with delays.

Fixtures are made by ``tests/fixtures/make_tvb_fixtures.py`` (see ``tests/fixtures/README.md``):
a 5-node asymmetric connectome, random initial history, Raw monitor. TVB's delay buffer is
float32; ``raw_f64`` is the same TVB run with a float64 buffer, ``raw`` is stock TVB.
"""

import pathlib

import numpy as np
import pytest

import netdyn as nd

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def _params(data):
    # Scalars, or [nodes] arrays for per-region parameters (ReducedWongWangExcInh's J_i,
    # LinearDynamics' gamma, WilsonCowan's P, LarterBreakspear's aee, CoombesByrne2D's eta).
    return {k[len("param_"):]: (float(data[k]) if data[k].ndim == 0 else data[k])
            for k in data.files if k.startswith("param_")}


def _coupling(data):
    name, a = str(data["coupling_name"]), float(data["coupling_a"])
    if name == "Linear":
        return nd.DelayedLinear(G=a)
    if name == "Kuramoto":
        return nd.DelayedKuramotoSine(G=a)
    if name == "Difference":
        return nd.DelayedDifference(G=a)
    if name == "SigmoidalJansenRit":
        return nd.DelayedSigmoidalJansenRit(
            G=a,
            cmin=float(data["coupling_cmin"]),
            cmax=float(data["coupling_cmax"]),
            midpoint=float(data["coupling_midpoint"]),
            r=float(data["coupling_r"]),
        )
    if name == "HyperbolicTangent":
        return nd.DelayedHyperbolicTangent(
            G=a,
            b=float(data["coupling_b"]),
            midpoint=float(data["coupling_midpoint"]),
            sigma=float(data["coupling_sigma"]),
        )
    raise AssertionError(f"no netdyn equivalent for TVB coupling {name}")


MODELS = [
    "reduced_wong_wang",
    "generic_2d_oscillator",
    "sup_hopf",
    "jansen_rit",
    "montbrio_pazo_roxin",
    "kuramoto",
    "wong_wang_exc_inh",
    "linear",
    "wilson_cowan",
    "larter_breakspear",
    "coombes_byrne_2d",
    "epileptor",
]

# netdyn's name where TVB's model name is taken: nd.Linear is the coupling.
NETDYN_NAMES = {"Linear": "LinearDynamics"}


def _dynamics(data, dtype=np.float64):
    name = str(data["model_name"])
    params = {k: v if isinstance(v, float) else np.asarray(v, dtype)
              for k, v in _params(data).items()}
    return getattr(nd, NETDYN_NAMES.get(name, name))(**params)


def _simulate(data, dtype=np.float64):
    """netdyn's run of the fixture's network, its arrays (weights, lengths, per-region
    parameters, history) in ``dtype``: the Raw samples and their times."""
    dt = float(data["dt"])
    graph = nd.DelayGraph.from_lengths(np.asarray(data["weights"], dtype),
                                       np.asarray(data["tract_lengths"], dtype),
                                       float(data["speed"]))
    # The delay convention: TVB's integer delays are rint(d / dt).
    np.testing.assert_array_equal(np.rint(np.asarray(graph.delays) / dt), data["idelays"])
    net = nd.Network(_dynamics(data, dtype), _coupling(data), graph)
    t0, n = float(data["t0"]), int(data["n_steps"])
    sol = nd.simulate(net, nd.Heun(), t0=t0, t1=t0 + n * dt, dt=dt,
                      history=np.asarray(data["history"], dtype), monitors={"raw": nd.Raw()})
    return sol["raw"], sol.ts["raw"]


@pytest.mark.parametrize("model", MODELS)
def test_matches_tvb(model):
    data = np.load(FIXTURES / f"tvb_{model}.npz")
    dynamics = _dynamics(data)
    assert tuple(dynamics.state_names) == tuple(str(s) for s in data["state_names"])
    cvar = tuple(dynamics.state_names[i] for i in data["cvar"])
    assert dynamics.coupled_variables == cvar
    raw, ts = _simulate(data)
    raw = np.asarray(raw)
    np.testing.assert_allclose(ts, data["times"], rtol=1e-12)
    # 1e-10 of the largest state: what the NumPy re-simulation of check_tvb_convention.py
    # is held to (every model agrees to about 1e-15).
    scale = np.max(np.abs(data["raw_f64"]))
    np.testing.assert_allclose(raw, data["raw_f64"], rtol=0, atol=1e-10 * scale)
    # Stock TVB rounds its history buffer to float32.
    np.testing.assert_allclose(raw, data["raw"], rtol=0, atol=1e-6 * scale)


@pytest.mark.parametrize(
    "model", ["linear", "wilson_cowan", "larter_breakspear", "coombes_byrne_2d", "epileptor"])
def test_float32_matches_tvb(model):
    # The whole run in float32 (weights, parameters, history, state) stays finite and
    # within float32 round-off of stock TVB: 7e-8 (linear), 3e-7 (wilson_cowan), 8e-7
    # (larter_breakspear) and 2e-7 (coombes_byrne_2d) of the largest state, at most
    # 1.5e-6 over every fixture here but epileptor's (8.4e-6: its discharges amplify
    # round-off; stock TVB's own float32 buffer moves it by 6e-8).
    data = np.load(FIXTURES / f"tvb_{model}.npz")
    raw, _ = _simulate(data, np.float32)
    assert raw.dtype == np.float32
    assert np.all(np.isfinite(np.asarray(raw)))
    scale = np.max(np.abs(data["raw"]))
    np.testing.assert_allclose(np.asarray(raw, np.float64), data["raw"], rtol=0,
                               atol=1e-5 * scale)


def test_tvb_reads_the_written_connectivity_zip(tmp_path):
    # TVB's own reader (tvb-library, when installed) must see exactly the weights, tract
    # lengths, labels and centres that netdyn wrote.
    connectivity = pytest.importorskip("tvb.datatypes.connectivity")
    data = nd.datasets.load("hcp")
    path = tmp_path / "hcp.zip"
    nd.datasets.write_tvb_zip(data, path)
    c = connectivity.Connectivity.from_file(str(path))
    c.configure()
    np.testing.assert_array_equal(c.weights, np.asarray(data.weights))
    np.testing.assert_array_equal(c.tract_lengths, np.asarray(data.lengths))
    assert list(c.region_labels) == list(data.labels)
    assert c.centres.shape == (len(data.labels), 3)
