"""A NumPy loop oracle for couplings on a graph with delays (Euler steps).

Written from the equations with plain Python loops over steps, targets and sources.
Convention: step ``n -> n + 1`` uses ``x_j(t_n - d_ij)``, read at the nearest step
``rint(d / dt)`` or interpolated linearly between the two neighbouring steps; the
target's own value ``x_i`` is the current one; history row ``-1`` is the state at ``t0``.
"""

import math

import numpy as np
import toy_networks as toy

import netdyn as nd


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
    if isinstance(c, (nd.HyperbolicTangent, nd.DelayedHyperbolicTangent)):
        b, m, sigma = (float(v) for v in (c.b, c.midpoint, c.sigma))
        return [1.0 + math.tanh((b * x - m) / sigma) for x in xj]
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


def oracle(c, weights, delays, history, n_steps, dt, vector_field):
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


def relax2_np(y, c):
    return np.stack([-y[0] + c[0], -1.5 * y[1] + c[1]])


def relax1_np(y, c):
    return np.stack([-y[0] + c[0], -0.5 * y[1]])
