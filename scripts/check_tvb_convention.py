#!/usr/bin/env python
"""Independent checks of TVB's simulation conventions against netdyn's.

Run with the TVB environment::

    python scripts/check_tvb_convention.py

Part A (needs tvb): small probe simulations that pin down
  * which index of ``connectivity.weights`` is the target and which the source,
  * which history row a delay of D steps reads at each step,
  * which row of ``initial_conditions`` becomes the current state,
  * what the first ``Raw`` sample and its time stamp are,
  * the normalisation actually applied by TVB's ``Kuramoto`` coupling.

Part B (numpy only, reads the fixtures): a from-scratch NumPy Heun loop that
follows netdyn's convention (see tests/fixtures/README.md), with vector fields
and coupling functions written from the published TVB equations, re-simulates
every ``tests/fixtures/tvb_*.npz`` from the data stored in the file and reports
max |difference| against TVB's output.  It runs in two arithmetic modes:

  f64    : everything float64 (what netdyn does)       -> compare to raw_f64
  tvb32  : delay buffer / weights / sparse weighted sums in float32, as stock
           TVB's history does                          -> compare to raw
"""

from __future__ import annotations

import glob
import logging
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_DIR = os.path.join(os.path.dirname(HERE), "tests", "fixtures")


# ==========================================================================
# Part A: TVB probes
# ==========================================================================
def tvb_probes():
    from tvb.datatypes.connectivity import Connectivity
    from tvb.simulator import coupling, integrators, models, monitors, simulator

    sys.path.insert(0, HERE)
    from make_tvb_fixtures import Simulator64  # noqa: E402

    ok = True

    def build(weights, lengths, hist, cpl, model, sim_cls=simulator.Simulator, dt=1.0):
        n = weights.shape[0]
        conn = Connectivity(
            weights=weights,
            tract_lengths=lengths,
            speed=np.array([1.0]),
            centres=np.zeros((n, 3)) + np.arange(n)[:, None],
            region_labels=np.array([f"n{i}" for i in range(n)]),
            areas=np.ones(n),
        )
        conn.configure()
        sim = sim_cls(
            model=model,
            connectivity=conn,
            coupling=cpl,
            integrator=integrators.HeunDeterministic(dt=dt),
            monitors=(monitors.Raw(),),
            initial_conditions=hist,
        )
        sim.configure()
        return sim

    # ---- A1: orientation, delay indexing, current-state row, Raw timing ----
    # Model: TVB Linear with gamma=0  ->  dx/dt = c, so with Heun
    # x_{n+1} = x_n + dt * c_n exactly, i.e. the raw output exposes c_n.
    # TVB weights[0, 1] = 1 (all else 0); tract_lengths[0,1] = 3 -> D=3 steps,
    # tract_lengths[1,0] = 6 (zero weight) only enlarges the horizon to H=7.
    for sim_cls in (simulator.Simulator, Simulator64):
        W = np.array([[0.0, 1.0], [0.0, 0.0]])
        L = np.array([[0.0, 3.0], [6.0, 0.0]])
        H = 7
        hist = np.zeros((H, 1, 2, 1))
        hist[:, 0, 1, 0] = 100.0 + np.arange(H)  # node 1: row k holds 100+k
        hist[:, 0, 0, 0] = 0.5  # node 0 constant
        sim = build(W, L, hist, coupling.Linear(a=np.array([1.0]), b=np.array([0.0])),
                    models.Linear(gamma=np.array([0.0])), sim_cls)
        assert sim.connectivity.horizon == H
        (t, x), = sim.run(n_steps=5)
        x = x[:, 0, :, 0]
        # expected (netdyn convention, row -1 = t0, D=3):
        #   c_n = x1(t_n - 3 dt) = history row H-1-3+n = 103, 104, 105, 106, then
        #   the first *simulated* state of node 1 (which stays 106: no input).
        c_exp = np.array([103.0, 104.0, 105.0, 106.0, 106.0])
        x0_exp = 0.5 + np.cumsum(c_exp)
        good = (
            np.allclose(x[:, 0], x0_exp, rtol=0, atol=1e-9)
            and np.allclose(x[:, 1], 106.0)  # node 1 receives nothing
            and np.allclose(t, (H + np.arange(5)) * 1.0)
        )
        ok &= good
        print(f"[A1 {sim_cls.__name__}] raw node0 = {x[:, 0]} (expected {x0_exp}); "
              f"node1 = {x[:, 1]}; times = {t} (H={H}, dt=1) -> {'OK' if good else 'MISMATCH'}")

    # same probe with a zero delay on the weighted edge: c_n = current x1 = 106
    W = np.array([[0.0, 1.0], [0.0, 0.0]])
    L = np.array([[0.0, 0.0], [6.0, 0.0]])
    hist = np.zeros((7, 1, 2, 1))
    hist[:, 0, 1, 0] = 100.0 + np.arange(7)
    sim = build(W, L, hist, coupling.Linear(a=np.array([1.0]), b=np.array([0.0])),
                models.Linear(gamma=np.array([0.0])))
    (t, x), = sim.run(n_steps=3)
    good = np.allclose(x[:, 0, 0, 0], 106.0 * np.arange(1, 4))
    ok &= good
    print(f"[A1 D=0] raw node0 = {x[:, 0, 0, 0]} (expected {106.0 * np.arange(1, 4)}) "
          f"-> {'OK' if good else 'MISMATCH'}")

    # ---- A2: initial_conditions longer than the horizon (caveat) -----------
    # TVB keeps ic[-H:] as its circular buffer *unrotated* but sets
    # current_step = len(ic) - 1, so "now" is buffer row (len(ic)-1) % H.
    # Only len(ic) == H (or a multiple of H) is consistent with "last row = t0".
    W = np.array([[0.0, 1.0], [0.0, 0.0]])
    L = np.array([[0.0, 3.0], [6.0, 0.0]])
    Lic, H, D = 10, 7, 3
    hist = np.zeros((Lic, 1, 2, 1))
    hist[:, 0, 1, 0] = 100.0 + np.arange(Lic)
    hist[:, 0, 0, 0] = 1000.0 * np.arange(Lic)
    sim = build(W, L, hist, coupling.Linear(a=np.array([1.0]), b=np.array([0.0])),
                models.Linear(gamma=np.array([0.0])))
    cur = float(sim.current_state[0, 0, 0])
    buf = hist[-H:, 0, :, 0]
    p = (Lic - 1) % H
    (t, x), = sim.run(n_steps=1)
    c0 = x[0, 0, 0, 0] - cur
    good = (np.isclose(cur, buf[p, 0]) and np.isclose(c0, buf[(p - D) % H, 1])
            and np.isclose(t[0], Lic * 1.0))
    ok &= good
    print(f"[A2 caveat: len(ic)={Lic} > H={H}] current state = ic row {int(cur / 1000)} "
          f"(not the last row {Lic - 1}); D={D} read = ic row {int(round(c0 - 100))} "
          f"(= ic[-H:][(len(ic)-1-D) % H]); t[0] = {t[0]} -> "
          f"{'as described' if good else 'UNEXPECTED'}")

    # ---- A3: Kuramoto coupling normalisation -------------------------------
    rng = np.random.default_rng(0)
    n = 4
    W = rng.uniform(0.2, 1.0, (n, n))
    np.fill_diagonal(W, 0)
    L = np.zeros((n, n))
    th = rng.uniform(0, 2 * np.pi, n)
    hist = th.reshape(1, 1, n, 1).copy()
    sim = build(W, L, hist, coupling.Kuramoto(a=np.array([1.0])), models.Kuramoto())
    c = sim._loop_compute_node_coupling(sim.current_step + 1)[0, :, 0]
    th32 = th.astype(np.float32).astype(float)
    full = (W * np.sin(th32[None, :] - th32[:, None])).sum(axis=1)
    err_noN = np.abs(c - full).max()
    err_N = np.abs(c - full / n).max()
    good = err_noN < 1e-5 < err_N
    ok &= good
    print(f"[A3 Kuramoto] |c - a*sum W sin| = {err_noN:.1e}, |c - a/N*sum W sin| = {err_N:.1e} "
          f"-> TVB does {'NOT ' if good else '?? '}divide by N")

    # ---- A4: dtype of TVB's history arrays ---------------------------------
    print(f"[A4] stock TVB history buffer dtype = {sim.history.buffer.dtype}, "
          f"weights dtype = {sim.history.weights.dtype}, "
          f"nnz_weights dtype = {sim.history.nnz_weights.dtype}")
    return ok


# ==========================================================================
# Part B: NumPy reference, netdyn convention
# ==========================================================================
def _p(d, name):
    return float(d[f"param_{name}"])


def dfun_factory(d):
    """Return f(state[n_svar, N], c[n_c, N]) -> dstate, from TVB's equations."""
    m = str(d["model_name"])
    if m == "ReducedWongWang":
        a, b, dd, gam, tau_s, w, J_N, I_o = (_p(d, k) for k in
                                             "a b d gamma tau_s w J_N I_o".split())

        def f(s, c):
            S = s[0]
            x = w * J_N * S + I_o + J_N * c[0]
            u = a * x - b
            H = u / (1.0 - np.exp(-dd * u))
            return np.stack([-S / tau_s + (1.0 - S) * H * gam])

    elif m == "Generic2dOscillator":
        P = {k: _p(d, k) for k in "tau I a b c d e f g alpha beta gamma".split()}

        def f(s, c):
            V, Wv = s
            dV = P["d"] * P["tau"] * (P["alpha"] * Wv - P["f"] * V ** 3 + P["e"] * V ** 2
                                      + P["g"] * V + P["gamma"] * P["I"] + P["gamma"] * c[0])
            dW = P["d"] * (P["a"] + P["b"] * V + P["c"] * V ** 2 - P["beta"] * Wv) / P["tau"]
            return np.stack([dV, dW])

    elif m == "SupHopf":
        a, om = _p(d, "a"), _p(d, "omega")

        def f(s, c):
            x, y = s
            r2 = x * x + y * y
            return np.stack([(a - r2) * x - om * y + c[0], (a - r2) * y + om * x + c[1]])

    elif m == "JansenRit":
        P = {k: _p(d, k) for k in "A B a b v0 nu_max r J a_1 a_2 a_3 a_4 mu".split()}

        def sig(v):
            return 2.0 * P["nu_max"] / (1.0 + np.exp(P["r"] * (P["v0"] - v)))

        def f(s, c):
            y0, y1, y2, y3, y4, y5 = s
            A, B, a, b, J = P["A"], P["B"], P["a"], P["b"], P["J"]
            return np.stack([
                y3, y4, y5,
                A * a * sig(y1 - y2) - 2 * a * y3 - a * a * y0,
                A * a * (P["mu"] + P["a_2"] * J * sig(P["a_1"] * J * y0) + c[0])
                - 2 * a * y4 - a * a * y1,
                B * b * P["a_4"] * J * sig(P["a_3"] * J * y0) - 2 * b * y5 - b * b * y2,
            ])

    elif m == "MontbrioPazoRoxin":
        P = {k: _p(d, k) for k in "tau I Delta J eta cr cv".split()}

        def f(s, c):
            r, V = s
            t = P["tau"]
            dr = (P["Delta"] / (np.pi * t) + 2.0 * V * r) / t
            dV = (V * V - (np.pi * t * r) ** 2 + P["eta"] + P["J"] * t * r + P["I"]
                  + P["cr"] * c[0] + P["cv"] * c[1]) / t
            return np.stack([dr, dV])

    elif m == "Kuramoto":
        om = _p(d, "omega")

        def f(s, c):
            return np.stack([om + c[0]])

    else:
        raise ValueError(m)
    return f


def coupling_factory(d, mode):
    """Return cfun(traj, p) -> c[n_c, N]: coupling for the step taken from traj[p].

    traj[q] is the full state at time index q (history rows first), so the
    delayed source value for edge i<-j is traj[p - D_ij, cvar, j].
    """
    name = str(d["coupling_name"])
    W = np.asarray(d["weights"])
    D = np.asarray(d["idelays"])
    cvar = np.asarray(d["cvar"])
    n = W.shape[0]
    a = float(d["coupling_a"])
    src = np.arange(n)[None, :]
    f32 = mode == "tvb32"

    def delayed(traj, p):  # [n_cvar, N_target, N_source]
        x = traj[p - D, :, src]  # [N_t, N_s, n_svar]
        x = np.moveaxis(x, -1, 0)[cvar]
        return x.astype(np.float32) if f32 else x

    def current(traj, p):  # [n_cvar, N]
        x = traj[p][cvar]
        return x.astype(np.float32) if f32 else x

    def wsum(pre):  # sum_j W_ij pre[..., i, j]
        if not f32:
            return (W * pre).sum(axis=-1)
        # stock TVB SparseCoupling: float32 products over the nonzero (i, j)
        # in row-major order, summed per target with numpy.add.reduceat in
        # float32 (reduceat's association order matters at the 1-ulp level).
        ii, jj = np.nonzero(W)
        starts = np.r_[0, np.nonzero(np.diff(ii))[0] + 1]
        prod = W[ii, jj].astype(np.float32) * pre[..., ii, jj]  # float32
        sums = np.add.reduceat(prod[..., None], starts, axis=-2)[..., 0]
        out = np.zeros(pre.shape[:-1], np.float32)
        out[..., ii[starts]] = sums
        # TVB's post-summation step multiplies by parameter *arrays* (float64),
        # which promotes to float64; with plain Python floats numpy would keep
        # float32, so promote explicitly here.
        return out.astype(np.float64)

    if name == "Linear":
        b = float(d["coupling_b"])

        def cfun(traj, p):
            return a * wsum(delayed(traj, p)) + b

    elif name == "Kuramoto":
        # TVB: a / gx.shape[0] with gx of shape (n_cvar, N, n_mode) in
        # SparseCoupling -> divides by n_cvar = 1, not by N.
        def cfun(traj, p):
            xj = delayed(traj, p)
            xi = current(traj, p)[:, :, None]
            return a * wsum(np.sin(xj - xi))

    elif name == "SigmoidalJansenRit":
        cmin, cmax = float(d["coupling_cmin"]), float(d["coupling_cmax"])
        mid, r = float(d["coupling_midpoint"]), float(d["coupling_r"])

        def cfun(traj, p):
            xj = delayed(traj, p)  # rows: cvar[0]=y1, cvar[1]=y2
            v = xj[0] - xj[1]  # float32 subtraction in stock TVB
            pre = cmin + (cmax - cmin) / (1.0 + np.exp(r * (mid - v.astype(np.float64))))
            w = W.astype(np.float32).astype(np.float64) if f32 else W
            # dense Coupling: sum in float64 over all sources (zeros included)
            return a * (w * pre).sum(axis=-1)[None, :]

    else:
        raise ValueError(name)
    return cfun


def simulate_netdyn_convention(d, mode="f64"):
    """Heun, netdyn convention: coupling from states at t_n - D dt, frozen over
    both stages; clamp to state bounds after each stage; output y_1..y_T."""
    hist = np.asarray(d["history"], dtype=np.float64)
    H = hist.shape[0]
    T = int(d["raw"].shape[0])
    dt = float(d["dt"])
    lo, hi = np.asarray(d["state_lo"])[:, None], np.asarray(d["state_hi"])[:, None]
    f = dfun_factory(d)
    cfun = coupling_factory(d, mode)
    traj = np.concatenate([hist, np.zeros((T,) + hist.shape[1:])], axis=0)
    for n in range(T):
        p = H - 1 + n  # index of y_n (p = H-1: the state at t0)
        y = traj[p]
        c = cfun(traj, p)
        k1 = f(y, c)
        y1 = np.clip(y + dt * k1, lo, hi)
        k2 = f(y1, c)
        traj[p + 1] = np.clip(y + 0.5 * dt * (k1 + k2), lo, hi)
    return traj[H:]


def reference_checks():
    paths = sorted(glob.glob(os.path.join(FIXTURE_DIR, "tvb_*.npz")))
    if not paths:
        print("no fixtures found; run scripts/make_tvb_fixtures.py first")
        return False
    ok = True
    print(f"{'fixture':34s} {'f64 vs raw_f64':>15s} {'tvb32 vs raw':>13s} "
          f"{'f64 vs raw':>11s}  times check")
    for path in paths:
        d = dict(np.load(path))
        ref64 = simulate_netdyn_convention(d, "f64")
        ref32 = simulate_netdyn_convention(d, "tvb32")
        e64 = np.abs(ref64 - d["raw_f64"]).max()
        e32 = np.abs(ref32 - d["raw"]).max()
        ecross = np.abs(ref64 - d["raw"]).max()
        H, dt = int(d["horizon"]), float(d["dt"])
        t_ok = np.allclose(d["times"], float(d["t0"]) + dt * np.arange(1, len(d["times"]) + 1),
                           rtol=0, atol=1e-9 * dt) and np.isclose(float(d["t0"]), (H - 1) * dt)
        scale = max(1.0, np.abs(d["raw"]).max())
        good = e64 < 1e-11 * scale and e32 < 1e-11 * scale and t_ok
        ok &= good
        print(f"{os.path.basename(path):34s} {e64:15.2e} {e32:13.2e} {ecross:11.2e}  "
              f"{'OK' if t_ok else 'BAD'}{'' if good else '   <-- FAIL'}")
    return ok


def main():
    ok = True
    try:
        import tvb  # noqa: F401
        have_tvb = True
    except ImportError:
        have_tvb = False
    if have_tvb:
        print("== Part A: TVB probes ==")
        ok &= tvb_probes()
    else:
        print("tvb not importable: skipping Part A")
    print("== Part B: NumPy netdyn-convention reference vs fixtures ==")
    ok &= reference_checks()
    print("ALL OK" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
