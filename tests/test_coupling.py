"""Couplings against a NumPy loop oracle, on every graph layout (graphs: ``test_graph.py``).

The oracle is written from the equations with plain Python loops over steps, targets and
sources. Convention checked: step ``n -> n + 1`` uses ``x_j(t_n - d_ij)``, read at the
nearest step ``rint(d / dt)`` or interpolated linearly between the two neighbouring steps;
the target's own value ``x_i`` is the current one; history row ``-1`` is the state at
``t0``.
"""

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest
import toy_networks as toy
from coupling_oracle import oracle, relax1_np, relax2_np
from helpers import ALL_COUPLINGS
from toy_networks import DT

import netdyn as nd

N_STEPS = 40


# --- the comparison ------------------------------------------------------------------------


# Every coupling on the sparse layout is in the default run only for Linear and
# DelayedLinear (each case is a program of its own to compile); the others with -m slow.
# By default the sparse layout of every coupling is held to the dense one by
# test_graph.py::test_sparse_equals_dense (all couplings, delayed ones interpolated, with
# noise), and its nearest and linear delayed reads to NumPy by
# test_graph.py::test_delayed_reads_match_numpy.
SPARSE_BY_DEFAULT = (nd.Linear, nd.DelayedLinear)


def _cases():
    for c in ALL_COUPLINGS:
        name = type(c).__name__
        marks = {"dense": (), "sparse": () if type(c) in SPARSE_BY_DEFAULT
                 else pytest.mark.slow}
        if isinstance(c, nd.AbstractDelayedCoupling):
            for interp in ("nearest", "linear"):
                for kind in ("dense", "sparse"):
                    yield pytest.param(c, interp, kind, id=f"{name}-{interp}-{kind}",
                                       marks=marks[kind])
        else:
            for kind in ("dense", "sparse"):
                yield pytest.param(c, None, kind, id=f"{name}-{kind}", marks=marks[kind])


@pytest.mark.parametrize("coupling,interpolation,kind", list(_cases()))
def test_matches_numpy_looporacle(coupling, interpolation, kind):
    weights, delays = toy.connectome()
    n = weights.shape[0]
    if interpolation is not None:
        coupling = dataclasses.replace(coupling, interpolation=interpolation)
    graph = toy.graph(kind, weights, delays if interpolation else None)
    jr = toy.is_jansen_rit(coupling)
    dynamics = toy.Relax1() if jr else toy.Relax2()
    history = toy.random_history(int(delays.max() / DT) + 4, n)
    sol = nd.simulate(
        nd.Network(dynamics, coupling, graph), nd.Euler(), t0=0.0, t1=N_STEPS * DT, dt=DT,
        monitors={"raw": nd.Raw()}, history=jnp.asarray(history),
    )
    expected = oracle(
        coupling, weights, delays if interpolation else None, history, N_STEPS, DT,
        relax1_np if jr else relax2_np,
    )
    got = np.asarray(sol["raw"])
    assert got.shape == expected.shape
    assert np.abs(expected).max() < 10.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # The coupling matters: dropping it changes the trajectory by far more than 1e-12.
    free = oracle(
        nd.DelayedLinear(G=0.0), weights, delays, history, N_STEPS, DT,
        relax1_np if jr else relax2_np,
    )
    assert np.abs(free - expected).max() > 1e-3


def test_jansen_rit_coupling_needs_two_variables():
    weights, delays = toy.connectome()
    graph = nd.DelayGraph(weights, delays)
    net = nd.Network(toy.Integrator(), nd.DelayedSigmoidalJansenRit(), graph)
    with pytest.raises(ValueError, match="two coupled variables"):
        nd.simulate(net, nd.Euler(), t0=0.0, t1=5.0, dt=DT)
