"""Couplings against a NumPy loop oracle, on every graph layout (graphs: ``test_graph.py``).

The oracle is written from the equations with plain Python loops over steps, targets and
sources. Convention checked: step ``n -> n + 1`` uses ``x_j(t_n - d_ij)``, read at the
nearest step ``rint(d / dt)`` or interpolated linearly between the two neighbouring steps;
the target's own value ``x_i`` is the current one; history row ``-1`` is the state at
``t0``.
"""

import dataclasses
import math

import jax.numpy as jnp
import numpy as np
import pytest
import toy_networks as toy
from helpers import ALL_COUPLINGS
from toy_networks import DT

import netdyn as nd

N_STEPS = 40


# --- the oracle ---------------------------------------------------------------------------


def _sig(x):
    return 1.0 / (1.0 + math.exp(-x))


def _edge_term(c, xi, xj):
    """The per-edge term, for coupled-variable lists ``xi`` (target) and ``xj`` (source)."""
    if isinstance(c, (nd.Linear, nd.DelayedLinear, nd.Sigmoidal, nd.DelayedSigmoidal)):
        return list(xj)
    if isinstance(c, (nd.Difference, nd.DelayedDifference)):
        return [b - a for a, b in zip(xi, xj)]
    if isinstance(c, (nd.KuramotoSine, nd.DelayedKuramotoSine)):
        return [math.sin(b - a) for a, b in zip(xi, xj)]
    if toy.is_jansen_rit(c):
        cmin, cmax, m, r = (float(v) for v in (c.cmin, c.cmax, c.midpoint, c.r))
        return [cmin + (cmax - cmin) / (1.0 + math.exp(r * (m - (xj[0] - xj[1]))))]
    raise AssertionError(type(c))


def _node_term(c, s):
    """The per-node transform of the weighted sum ``s``."""
    if isinstance(c, (nd.Linear, nd.DelayedLinear)):
        return float(c.G) * s + float(c.b)
    if isinstance(c, (nd.Sigmoidal, nd.DelayedSigmoidal)):
        cmin, cmax, m, a, sigma = (float(v) for v in (c.cmin, c.cmax, c.midpoint, c.a, c.sigma))
        return cmin + (cmax - cmin) * _sig(a * (s - m) / sigma)
    return float(c.G) * s


def _oracle(c, weights, delays, history, n_steps, dt, vector_field):
    """Euler with coupling ``c`` from plain loops; returns states after steps 1..n_steps.

    ``delays`` is ``None`` for an instantaneous coupling; otherwise the interpolation is
    ``c.interpolation``.
    """
    n = weights.shape[0]
    traj = [np.array(h, dtype=float) for h in history]  # traj[-1] is the current state
    out = []
    for _ in range(n_steps):
        now = len(traj) - 1
        y = traj[now]

        def past(j, d):
            if d is None:
                return [y[0, j], y[1, j]]
            s = d / dt
            if c.interpolation == "nearest":
                row = traj[now - int(np.rint(s))]
                return [row[0, j], row[1, j]]
            D = math.floor(s)
            f = s - D
            a, b = traj[now - D], traj[now - D - 1]
            return [(1 - f) * a[0, j] + f * b[0, j], (1 - f) * a[1, j] + f * b[1, j]]

        rows = 1 if toy.is_jansen_rit(c) else 2
        coupling = np.zeros((rows, n))
        for i in range(n):
            sums = [0.0] * rows
            for j in range(n):
                d = None if delays is None else delays[i, j]
                term = _edge_term(c, [y[0, i], y[1, i]], past(j, d))
                for k in range(rows):
                    sums[k] += weights[i, j] * term[k]
            for k in range(rows):
                coupling[k, i] = _node_term(c, sums[k])
        y1 = y + dt * vector_field(y, coupling)
        traj.append(y1)
        out.append(y1)
    return np.stack(out)


def _relax2_np(y, c):
    return np.stack([-y[0] + c[0], -1.5 * y[1] + c[1]])


def _relax1_np(y, c):
    return np.stack([-y[0] + c[0], -0.5 * y[1]])


# --- the comparison ------------------------------------------------------------------------


def _cases():
    for c in ALL_COUPLINGS:
        name = type(c).__name__
        if isinstance(c, nd.AbstractDelayedCoupling):
            for interp in ("nearest", "linear"):
                for kind in ("dense", "sparse"):
                    yield pytest.param(c, interp, kind, id=f"{name}-{interp}-{kind}")
        else:
            for kind in ("dense", "sparse"):
                yield pytest.param(c, None, kind, id=f"{name}-{kind}")


@pytest.mark.parametrize("coupling,interpolation,kind", list(_cases()))
def test_matches_numpy_loop_oracle(coupling, interpolation, kind):
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
    expected = _oracle(
        coupling, weights, delays if interpolation else None, history, N_STEPS, DT,
        _relax1_np if jr else _relax2_np,
    )
    got = np.asarray(sol["raw"])
    assert got.shape == expected.shape
    assert np.abs(expected).max() < 10.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # The coupling matters: dropping it changes the trajectory by far more than 1e-12.
    free = _oracle(
        nd.DelayedLinear(G=0.0), weights, delays, history, N_STEPS, DT,
        _relax1_np if jr else _relax2_np,
    )
    assert np.abs(free - expected).max() > 1e-3


def test_jansen_rit_coupling_needs_two_variables():
    weights, delays = toy.connectome()
    graph = nd.DelayGraph(weights, delays)
    net = nd.Network(toy.Integrator(), nd.DelayedSigmoidalJansenRit(), graph)
    with pytest.raises(ValueError, match="two coupled variables"):
        nd.simulate(net, nd.Euler(), t0=0.0, t1=5.0, dt=DT)
