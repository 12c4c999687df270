"""Neural-mass dynamics: TVB's right-hand sides, pytree behaviour, analytical solutions.

``tests/fixtures/tvb_dfun.npz`` holds TVB's own ``dfun`` evaluated at random states and
coupling inputs (default, custom scalar and per-node parameters); it is made by
``tests/fixtures/make_dynamics_fixtures.py`` with tvb-library 2.10, which documents the mapping
of TVB's arrays to netdyn's (drop TVB's trailing mode axis).
"""

import dataclasses
import math
import pathlib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import ALL_DYNAMICS

import netdyn as nd

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "tvb_dfun.npz"
MODELS = [
    "ReducedWongWang",
    "Generic2dOscillator",
    "SupHopf",
    "JansenRit",
    "MontbrioPazoRoxin",
    "Kuramoto",
    "ReducedWongWangExcInh",
]
PARAMETER_SETS = ["default", "custom", "per_node"]


@pytest.fixture(scope="module")
def tvb():
    with np.load(FIXTURE) as data:
        return {k: data[k] for k in data.files}


def _ids(dynamics):
    return type(dynamics).__name__


def _parameters(dynamics):
    """Names of the model parameters (array leaves other than initial values)."""
    return [
        f.name
        for f in dataclasses.fields(dynamics)
        if not f.metadata.get("static", False) and not f.name.startswith("initial_")
    ]


def _tvb_params(tvb, model, which):
    prefix = f"{model}__{which}__param__"
    return {k[len(prefix):]: v for k, v in tvb.items() if k.startswith(prefix)}


def _random_inputs(dynamics, n_nodes, seed=0):
    rng = np.random.default_rng(seed)
    y = np.asarray(dynamics.initial_state(n_nodes))
    y = y + 0.1 * rng.standard_normal(y.shape)
    c = 0.1 * rng.standard_normal((dynamics.n_coupling_inputs, n_nodes))
    return jnp.asarray(y), jnp.asarray(c)


# ---------------------------------------------------------------------------------------
# Against TVB's dfun
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", PARAMETER_SETS)
@pytest.mark.parametrize("model", MODELS)
def test_vector_field_matches_tvb_dfun(tvb, model, which):
    params = _tvb_params(tvb, model, which)
    dynamics = getattr(nd, model)(**{k: jnp.asarray(v) for k, v in params.items()})
    assert sorted(params) == sorted(_parameters(dynamics))
    y = tvb[f"{model}__{which}__y"]
    c = tvb[f"{model}__{which}__c"]
    ref = tvb[f"{model}__{which}__dfun"]
    out = np.asarray(dynamics.vector_field(0.0, jnp.asarray(y), jnp.asarray(c)))
    assert out.shape == ref.shape
    # Relative to each state's magnitude, so that near-cancelling entries don't dominate.
    scale = np.max(np.abs(ref), axis=1, keepdims=True)
    assert np.all(scale > 0)
    assert np.max(np.abs(out - ref) / scale) < 1e-12


@pytest.mark.parametrize("model", MODELS)
def test_structure_matches_tvb(tvb, model):
    dynamics = getattr(nd, model)()
    names = tuple(str(s) for s in tvb[f"{model}__state_names"])
    assert dynamics.state_names == names
    assert dynamics.coupled_variables == tuple(names[i] for i in tvb[f"{model}__cvar"])
    assert dynamics.n_coupling_inputs == int(tvb[f"{model}__n_coupling_inputs"])
    lo, hi = tvb[f"{model}__state_lo"], tvb[f"{model}__state_hi"]
    for name, low, high in zip(names, lo, hi):
        bounded = np.isfinite(low) or np.isfinite(high)
        assert (name in dynamics.state_bounds) == bounded
        if bounded:
            assert dynamics.state_bounds[name] == (low, high)


@pytest.mark.parametrize("model", MODELS)
def test_defaults_match_tvb(tvb, model):
    dynamics = getattr(nd, model)()
    for name, value in _tvb_params(tvb, model, "default").items():
        assert float(getattr(dynamics, name)) == float(value), name


# ---------------------------------------------------------------------------------------
# Pytree behaviour, for every dynamics
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_shapes_and_initial_state(dynamics):
    n = 5
    y0 = dynamics.initial_state(n)
    assert y0.shape == (len(dynamics.state_names), n)
    assert y0.dtype == jnp.float64
    for name, row in zip(dynamics.state_names, np.asarray(y0)):
        low, high = dynamics.state_bounds.get(name, (-np.inf, np.inf))
        assert np.all((row >= low) & (row <= high))
    y, c = _random_inputs(dynamics, n)
    dy = dynamics.vector_field(0.0, y, c)
    assert dy.shape == (len(dynamics.state_names), n)
    assert dy.dtype == jnp.float64
    assert np.all(np.isfinite(np.asarray(dy)))
    assert dynamics.vector_field(0.0, y0, jnp.zeros_like(c)).shape == y0.shape


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_initial_fields_set_initial_state(dynamics):
    initial = [f.name for f in dataclasses.fields(dynamics) if f.name.startswith("initial_")]
    for name in initial:
        row = dynamics.state_names.index(name[len("initial_"):])
        edited = eqx.tree_at(lambda d: getattr(d, name), dynamics, jnp.arange(4.0))
        np.testing.assert_array_equal(edited.initial_state(4)[row], np.arange(4.0))


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_every_parameter_changes_vector_field(dynamics):
    y, c = _random_inputs(dynamics, 4)
    base = np.asarray(dynamics.vector_field(0.0, y, c))
    for name in _parameters(dynamics):
        value = float(getattr(dynamics, name))
        edited = eqx.tree_at(lambda d: getattr(d, name), dynamics, value + 0.1 * (abs(value) + 1))
        out = np.asarray(edited.vector_field(0.0, y, c))
        assert np.max(np.abs(out - base)) > 1e-9 * (np.max(np.abs(base)) + 1), name


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_jit_vmap_over_parameter(dynamics):
    y, c = _random_inputs(dynamics, 3)
    name = _parameters(dynamics)[0]
    value = float(getattr(dynamics, name))
    values = value * jnp.array([0.9, 1.0, 1.1]) + jnp.array([-0.01, 0.0, 0.01])

    @jax.jit
    @jax.vmap
    def batched(p):
        return eqx.tree_at(lambda d: getattr(d, name), dynamics, p).vector_field(0.0, y, c)

    out = np.asarray(batched(values))
    assert out.shape == (3, len(dynamics.state_names), 3)
    for k, p in enumerate(np.asarray(values)):
        one = eqx.tree_at(lambda d: getattr(d, name), dynamics, float(p))
        np.testing.assert_allclose(out[k], one.vector_field(0.0, y, c), rtol=1e-14, atol=1e-15)
    assert not np.allclose(out[0], out[2])


@pytest.mark.parametrize("dynamics", ALL_DYNAMICS, ids=_ids)
def test_per_region_parameters(dynamics):
    n = 4
    y, c = _random_inputs(dynamics, n, seed=1)
    names = _parameters(dynamics)
    # Node k gets every parameter shifted by 5 % k: node 0 keeps the defaults.
    defaults = {p: float(getattr(dynamics, p)) for p in names}
    vectors = {p: v + 0.05 * np.arange(n) * (abs(v) + 1) for p, v in defaults.items()}

    def leaves(d):
        return [getattr(d, p) for p in names]

    regional = eqx.tree_at(leaves, dynamics, [jnp.asarray(vectors[p]) for p in names])
    out = np.asarray(regional.vector_field(0.0, y, c))
    for k in range(n):
        node = eqx.tree_at(leaves, dynamics, [float(vectors[p][k]) for p in names])
        col = node.vector_field(0.0, y[:, k : k + 1], c[:, k : k + 1])
        np.testing.assert_allclose(out[:, k : k + 1], col, rtol=1e-14, atol=1e-15)


# ---------------------------------------------------------------------------------------
# Analytical solutions
# ---------------------------------------------------------------------------------------


def _uncoupled(dynamics, n):
    return nd.Network(dynamics, nd.Linear(G=0.0), nd.DenseGraph(np.zeros((n, n))))


def test_sup_hopf_limit_cycle():
    # Uncoupled: r' = r (a - r^2), phi' = omega, so r(t)^2 = a / (1 + (a / r0^2 - 1) e^{-2at}).
    a, t1, dt = 0.25, 60.0, 0.005
    omega = np.array([0.5, 1.0, 1.5, 2.0])
    r0 = np.array([0.05, 0.3, 0.8, 1.2])
    phi0 = np.array([0.0, 1.0, 2.0, 3.0])
    y0 = np.stack([r0 * np.cos(phi0), r0 * np.sin(phi0)])
    dynamics = nd.SupHopf(a=a, omega=jnp.asarray(omega))
    sol = nd.simulate(_uncoupled(dynamics, 4), nd.RK4(), t0=0.0, t1=t1, dt=dt,
                      history=jnp.asarray(y0), monitors={"raw": nd.Raw(period=1.0)})
    t = np.asarray(sol.ts["raw"])[:, None]
    r = np.sqrt(a / (1.0 + (a / r0**2 - 1.0) * np.exp(-2.0 * a * t)))
    phi = phi0 + omega * t
    raw = np.asarray(sol["raw"])
    # RK4's global error is 4.8e-9 here (1.2e-6 at dt = 0.02: fourth order).
    np.testing.assert_allclose(raw[:, 0], r * np.cos(phi), rtol=0, atol=2e-8)
    np.testing.assert_allclose(raw[:, 1], r * np.sin(phi), rtol=0, atol=2e-8)
    np.testing.assert_allclose(np.hypot(raw[-1, 0], raw[-1, 1]), math.sqrt(a), rtol=1e-9)


def test_kuramoto_free_rotation():
    omega = np.array([0.3, 1.0, 2.5])
    theta0 = np.array([0.0, 1.0, -2.0])
    dynamics = nd.Kuramoto(omega=jnp.asarray(omega))
    sol = nd.simulate(_uncoupled(dynamics, 3), nd.RK4(), t0=0.0, t1=20.0, dt=0.1,
                      history=jnp.asarray(theta0[None]), monitors={"raw": nd.Raw()})
    t = np.asarray(sol.ts["raw"])[:, None]
    np.testing.assert_allclose(np.asarray(sol["raw"])[:, 0], theta0 + omega * t,
                               rtol=1e-13, atol=1e-13)
