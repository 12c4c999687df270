"""The analytic FC of ``nd.linear_fc`` against simulated FC. Writes benchmarks/linear_fc.md
(and .json).

``nd.linear_fc`` linearises a network at its stable fixed point and solves the Lyapunov
equation for the stationary covariance of the monitored signal (the Balloon-Windkessel
BOLD model linearised too; delays ignored). Here, on the embedded 80-region ``hcp``
connectome, for the models of ``netdyn fit`` (rww-ei-fic, rww, hopf) at several couplings
up to their instability: the analytic FC against the mean FC of independent simulated
realisations (float64, Heun, dt = 1 ms, the presets' delays), each after a burn-in;
rww-ei-fic at three couplings without delays; and the time of ``nd.linear_fc`` and of its
gradient.

    nice -n 10 python scripts/studies/bench_linear_fc.py    # ~55 min on 2 cores at load 5-9
    python scripts/studies/bench_linear_fc.py --smoke       # ~2-5 min, written to /tmp
    python scripts/studies/bench_linear_fc.py --add-delays 0.49   # one more delay pair, ~3 min
    python scripts/studies/bench_linear_fc.py --from-json benchmarks/linear_fc.json
"""

import json
import math
import time

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402

TR = 720.0  # ms, the hcp data's
DT = 1.0  # ms

# The full run: couplings per model, realisations and lengths (ms; whole TRs).
FULL = {
    "realisations": 8,
    "duration": 313 * TR,  # 225.36 s each: 8 x 225.36 s = 30.05 min of BOLD per point
    "burn_in": {"rww-ei-fic": 42 * TR, "rww": 84 * TR, "hopf": 42 * TR, "hopf-linear": 210 * TR},
    "ei_G": (0.2, 0.3, 0.4, 0.45, 0.49, 0.51, 0.53, 0.55),
    "rww_tau": (0.2, 0.5, 1.0, 2.0, 4.0),  # s: slowest-mode time constants on the low branch
    "hopf_G": (0.1, 0.25, 0.5, 1.0, 2.0),  # per second, as presets.hopf and --G take it
    "hopf_linear_G": (0.5,), "delay_G": (0.45, 0.49, 0.53), "repeats": 12,
}
SMOKE = {"realisations": 2, "duration": 50 * TR,
         "burn_in": {"rww-ei-fic": 10 * TR, "rww": 10 * TR, "hopf": 10 * TR,
                     "hopf-linear": 10 * TR},
         "ei_G": (0.45,), "rww_tau": (0.5,), "hopf_G": (0.5,), "hopf_linear_G": (0.5,),
         "delay_G": (0.45,), "repeats": 2}

# The netdyn fit's noise amplitudes (the CLI defaults; rww's is also the preset's).
SIGMA = {"rww-ei-fic": 0.001, "rww": 0.00283, "hopf": 0.02}
HOPF_LINEAR_SIGMA = 1e-4  # per sqrt(s): small enough for the cubic term to be negligible
VARIABLE = {"rww-ei-fic": "S_e", "rww": "S", "hopf": "x"}
LOW_BRANCH = 0.2  # rww: a fixed point with mean S below this is the low-activity branch
NEWTON_STEPS = 40
BISECTIONS = 40


def signal_monitor(model: str):
    """The monitor whose FC ``netdyn fit`` compares (``netdyn/_cli/_model.py``)."""
    if model == "hopf":
        return nd.TemporalAverage(period=TR, variables=("x",))
    return nd.Bold(period=TR, variables=VARIABLE[model])


class Models:
    """The presets on the hcp connectome, with G and sigma as arrays (one compile)."""

    def __init__(self, data):
        self.w = np.asarray(data.weights, float)
        self.lengths = np.asarray(data.lengths, float)

    def build(self, model: str, G: float, sigma: float | None = None) -> nd.Network:
        sigma = jnp.asarray(SIGMA[model] if sigma is None else sigma)
        G = jnp.asarray(G)
        if model == "rww-ei-fic":
            return nd.presets.rww_ei_fic(self.w, self.lengths, G=G, sigma=sigma)
        if model == "rww":
            return nd.presets.rww(self.w, self.lengths, G=G, sigma=sigma)
        return nd.presets.hopf(self.w, self.lengths, G=G, sigma=sigma)

    def without_delays(self, net: nd.Network) -> nd.Network:
        """The same network with instantaneous linear coupling on the same weights."""
        return eqx.tree_at(lambda n: (n.coupling, n.graph), net,
                           (nd.Linear(G=net.coupling.G), nd.DenseGraph(self.w)))


def analytic(net, monitor, initial=None):
    """``nd.linear_fc``, jitted per (model, monitor); ``None`` where it raises (no stable
    fixed point found from ``initial``)."""
    try:
        return jax.block_until_ready(_linear_fc(net, monitor, initial))
    except Exception:  # eqx.error_if's runtime error: not found or not stable
        return None


@eqx.filter_jit
def _linear_fc(net, monitor, initial):
    return nd.linear_fc(net, monitor, initial=initial)


@eqx.filter_jit
def _runs(net, y0, keys, monitors, burn_in, duration):
    """The monitors' samples ``[realisations, samples, nodes]`` of each realisation's
    measured run, after its burn-in from the state ``y0`` (constant over the past)."""
    solver = nd.Heun()

    def one(key):
        warm = nd.simulate(net, solver, t0=0.0, t1=burn_in, dt=DT, monitors=monitors,
                           key=key, history=y0, batch_last=True)
        sol = nd.simulate(net, solver, t0=burn_in, t1=burn_in + duration, dt=DT,
                          monitors=monitors, key=key, history=warm.final, batch_last=True)
        return {k: sol[k].reshape(sol[k].shape[0], -1) for k in monitors}

    return jax.vmap(one)(keys)


def _corr(a, b) -> float:
    return float(np.corrcoef(a, b)[0, 1])


def compare(lin, runs: dict, variable_row: int, data_fc: np.ndarray) -> dict:
    """The figures of one point: analytic (``lin``) against the simulated runs."""
    iu = np.triu_indices(data_fc.shape[0], 1)
    x = np.asarray(runs["signal"])  # [B, samples, nodes]
    B = x.shape[0]
    fcs = np.stack([np.corrcoef(xb.T)[iu] for xb in x])  # [B, pairs]
    mean_fc = fcs.mean(0)
    a = np.asarray(lin.fc)[iu]
    d = np.asarray(data_fc)[iu]
    loo = [_corr(fcs[b], np.delete(fcs, b, 0).mean(0)) for b in range(B)] if B > 1 else [np.nan]
    half = _corr(fcs[: B // 2].mean(0), fcs[B // 2:].mean(0)) if B > 1 else np.nan
    reliability = 2 * half / (1 + half)  # Spearman-Brown: the B-mean's reliability
    var_sim = x.var(axis=1).mean(0)  # per node, mean over realisations
    var_an = np.diag(np.asarray(lin.covariance))
    level = np.asarray(runs["level"]).mean(axis=(1,))  # [B, nodes]: time mean per run
    star = np.asarray(lin.fixed_point)[variable_row]
    offset = level - star[None]
    abscissa = float(lin.abscissa)
    return {"abscissa_per_ms": abscissa, "tau_s": -1.0 / abscissa / 1000.0,
            "residual": float(lin.residual), "fixed_point_mean": float(star.mean()),
            "r_analytic_sim": _corr(a, mean_fc),
            "r_ceiling": float(np.sqrt(max(reliability, 0.0))), "r_split_half": half,
            "r_single_vs_rest": float(np.mean(loo)), "mean_fc_analytic": float(a.mean()),
            "mean_fc_sim": float(mean_fc.mean()),
            "mean_fc_sim_se": float(fcs.mean(1).std(ddof=1) / np.sqrt(B)) if B > 1 else np.nan,
            "mean_fc_diff": float(mean_fc.mean() - a.mean()),
            "rmse_analytic_sim": float(np.sqrt(np.mean((mean_fc - a) ** 2))),
            "variance_ratio_median": float(np.median(var_sim / var_an)),
            "state_offset_mean": float(offset.mean()),
            "state_offset_max_run": float(np.max(np.abs(offset.mean(1)))),
            "r_analytic_data": _corr(a, d), "r_sim_data": _corr(mean_fc, d),
            "mean_fc_single_runs": [float(v) for v in fcs.mean(1)],
            "mean_fc_sim_fc": mean_fc}  # the last dropped before the JSON


def simulate_point(net, lin, model, cfg, key, burn):
    monitors = {"signal": signal_monitor(model),
                "level": nd.TemporalAverage(period=TR, variables=(VARIABLE[model],))}
    keys = jax.random.split(key, cfg["realisations"])
    return C.timed(_runs, net, jnp.asarray(lin.fixed_point), keys, monitors, burn,
                   cfg["duration"])


@eqx.filter_jit
def _newton(net, y0):
    """Newton's method on the delay-free drift (``nd.Drift``) from ``y0``: the state, the
    drift left there and the spectral abscissa of its Jacobian (per ms)."""
    drift = nd.Drift(nd.resolve_parameters(net))

    def step(_, y):
        return y - jnp.linalg.solve(jax.jacfwd(drift)(y), drift(y))

    y = jax.lax.fori_loop(0, NEWTON_STEPS, step, jnp.asarray(y0, float).reshape(-1))
    abscissa = jnp.max(jnp.real(jnp.linalg.eigvals(jax.jacfwd(drift)(y))))
    return y.reshape(drift.shape), jnp.max(jnp.abs(drift(y))), abscissa


def rww_couplings(models: Models, taus):
    """``[(tau, G, y*)]``: G on rww's low-activity branch where the slowest mode's time
    constant is each of ``taus`` (s), by bisection on the abscissa, with the fixed point
    continued from below by Newton's method; and ``G_c``, where the branch ends (the
    saddle-node; the largest G found with a stable low fixed point)."""

    def low(G, y0):
        y, residual, abscissa = _newton(models.build("rww", G), y0)
        ok = (float(residual) < 1e-12 and float(abscissa) < 0
              and float(jnp.mean(y)) < LOW_BRANCH)
        return (y, -1.0 / float(abscissa) / 1000.0) if ok else None

    def bisect(hi, tau):
        """The largest G in [0.10, hi] with a low fixed point whose tau is at most ``tau``,
        and that fixed point (continued from the last one found)."""
        lo, y_lo = 0.10, start[0]
        for _ in range(BISECTIONS):
            mid = 0.5 * (lo + hi)
            found = low(mid, y_lo)
            if found is None or found[1] > tau:
                hi = mid
            else:
                lo, y_lo = mid, found[0]
        return lo, y_lo

    start = low(0.10, jnp.full((1, 80), 0.05))
    assert start is not None, "rww: no low-branch fixed point at G = 0.10"
    G_c = bisect(0.30, math.inf)[0]  # the end of the low branch
    return [(tau, *bisect(G_c, tau)) for tau in taus], G_c


def default_start(net, monitor) -> str:
    """What ``nd.linear_fc`` finds from the preset's own initial state."""
    lin = analytic(net, monitor)
    if lin is None:
        return "not found"
    return "low branch" if float(jnp.mean(lin.fixed_point)) < LOW_BRANCH else "high branch"


def timings(models: Models, data, repeats: int) -> dict:
    """Seconds per compiled evaluation of ``nd.linear_fc`` on the 80-region rww-ei-fic:
    the FC alone; the rmse against data.fc and its gradient wrt G; wrt 80 regional w_p."""
    net0 = models.build("rww-ei-fic", 0.5)
    monitor = signal_monitor("rww-ei-fic")
    target = jnp.asarray(data.fc)
    n = target.shape[0]

    def fc_G(G):
        return nd.linear_fc(eqx.tree_at(lambda m: m.coupling.G, net0, G), monitor).fc

    def loss_G(G):
        return nd.rmse(fc_G(G), target)

    def loss_wp(wp):
        return nd.rmse(nd.linear_fc(eqx.tree_at(lambda m: m.dynamics.w_p, net0, wp),
                                    monitor).fc, target)

    G = jnp.asarray(0.5)
    wp = jnp.full((n,), 1.4)
    fns = {
        "value (FC)": (jax.jit(fc_G), (G,)),
        "value + gradient wrt G": (jax.jit(jax.value_and_grad(loss_G)), (G,)),
        f"value + gradient wrt {n} regional w_p": (jax.jit(jax.value_and_grad(loss_wp)), (wp,)),
    }
    load_before = C.loadavg()
    compiled, compile_s = {}, {}
    for name, (f, args) in fns.items():
        compiled[name], compile_s[name] = C.compile_timed(f, *args)
        print(f"  compiled {name} in {compile_s[name]:.1f} s", flush=True)
    times = C.interleaved({k: (compiled[k], fns[k][1]) for k in fns}, repeats, warmup=True)
    load_after = C.loadavg()
    # a check of the gradient wrt G against central differences of the compiled loss
    h = 1e-5
    f_loss = jax.jit(loss_G)
    fd = (float(f_loss(G + h)) - float(f_loss(G - h))) / (2 * h)
    grad = float(compiled["value + gradient wrt G"](G)[1])
    return {"G": 0.5, "seconds_median": {k: float(np.median(v)) for k, v in times.items()},
            "seconds_min": {k: float(np.min(v)) for k, v in times.items()},
            "compile_seconds": compile_s, "repeats": repeats, "load_before": load_before,
            "load_after": load_after, "dloss_dG": grad, "dloss_dG_central_difference": fd}


# ------------------------------------------------------------------------ report


def _f(x, spec=".3f"):
    return H.num(x, spec, "nan")


def table(rows, G_label="G", G_text=lambda r: f"{r['G']:.2f}", state="S̄ − S*") -> list[str]:
    """The table of a model's points (one row per coupling)."""
    return H.table(
        (G_label, "abscissa (1/ms)", "tau (s)", "r(an, sim)", "ceiling", "single vs rest",
         "mean FC an", "mean FC sim (SE)", "diff", "var sim/an", state, "r(an, data)",
         "r(sim, data)"),
        [(G_text(r), f"{r['abscissa_per_ms']:.2e}", _f(r["tau_s"], ".2f"),
          *(_f(r[k]) for k in ("r_analytic_sim", "r_ceiling", "r_single_vs_rest",
                               "mean_fc_analytic")),
          f"{_f(r['mean_fc_sim'])} ({_f(r['mean_fc_sim_se'])})", _f(r["mean_fc_diff"], "+.3f"),
          _f(r["variance_ratio_median"], ".2f"),
          f"{_f(r['state_offset_mean'], '+.1e')} (max {_f(r['state_offset_max_run'], '.1e')})",
          _f(r["r_analytic_data"]), _f(r["r_sim_data"])) for r in rows])


def held(rows) -> tuple[list, list]:
    ok = [r for r in rows if r["r_analytic_sim"] >= 0.95 and abs(r["mean_fc_diff"]) <= 0.02]
    bad = [r for r in rows if r not in ok]
    return ok, bad


LEFT_OFFSET = 0.01  # |time mean - fixed point| of the monitored variable in one run
LEFT_VARIANCE = 2.0  # simulated / analytic variance of the signal (median over regions)


def left(rows) -> list:
    """The points where some run left the fixed point's neighbourhood (its mean state
    moved, or its fluctuations outgrew the linear picture's)."""
    return [r for r in rows if r["state_offset_max_run"] > LEFT_OFFSET
            or r["variance_ratio_median"] > LEFT_VARIANCE]


def _left_text(rows, spec=".2f") -> str:
    gone = left(rows)
    return ("Points where a run left the fixed point's neighbourhood (some realisation's "
            f"mean state more than {LEFT_OFFSET:g} from y*, or var sim/an above "
            f"{LEFT_VARIANCE:g}): " + (", ".join(
                f"{r['G']:{spec}} (S̄ − S* {r['state_offset_mean']:+.3f}, largest run "
                f"{r['state_offset_max_run']:.3f}; var sim/an "
                f"{r['variance_ratio_median']:.2f})" for r in gone) or "none") + ".")


def _gap_text(rows, spec=".2f") -> str:
    stayed = [r for r in rows if r not in left(rows)]
    return ("At the points where no run left, the simulation's own ceiling minus r(an, sim): "
            + (", ".join(f"{r['G']:{spec}}: {r['r_ceiling'] - r['r_analytic_sim']:+.3f}"
                         for r in stayed) or "none") + "; the mean FC difference in units "
            "of its SE: " + (", ".join(
                f"{r['G']:{spec}}: {r['mean_fc_diff'] / r['mean_fc_sim_se']:+.1f}"
                for r in stayed) or "none") + ".")


def _points(rows, spec=".2f"):
    return ", ".join(f"{r['G']:{spec}} (r {r['r_analytic_sim']:.3f}, diff "
                     f"{r['mean_fc_diff']:+.3f})" for r in rows) or "none"


def render(m: dict) -> str:
    """The report of the measurements (and the delay pairs added later)."""
    cfg, res, wall, added = m["config"], m["results"], m["wall_seconds"], m.get("added", [])
    smoke = cfg["realisations"] == SMOKE["realisations"]
    B, T = cfg["realisations"], cfg["duration"] / 1000
    burn = cfg["burn_in"]
    ei, rww, hopf, hopf_lin = res["rww-ei-fic"], res["rww"], res["hopf"], res["hopf-linear"]
    lines = [
        "# Analytic FC (`nd.linear_fc`) against simulated FC", "",
        f"Written by `{C.command('studies/bench_linear_fc.py', smoke and '--smoke')}` in "
        f"{wall / 60:.1f} min" + (" (**smoke run**: tiny durations, not a measurement)"
                                  if smoke else "") + "".join(
            f"; then `{a['command']}` in {a['wall_seconds'] / 60:.1f} min" for a in added)
        + ".", "",
        "**What is compared.** `nd.linear_fc(network, monitor)` linearises the network at "
        "its stable fixed point $y^*$ (drift $A$, noise $Q$) and solves the Lyapunov "
        "equation $A S + S A^T + Q = 0$ for the stationary covariance; for `nd.Bold` each "
        "region's Balloon-Windkessel model is linearised at its own fixed point and "
        "included in the same linear system. The FC is the correlation of the monitored "
        "signal's covariance. Conduction delays are ignored. Against it: the FC of "
        f"simulations of the same networks (embedded 80-region `hcp` connectome, weights as "
        f"stored (max 1), the presets' delays = tract length / 4 mm/ms rounded to the "
        f"nearest step, float64, stochastic Heun, dt = {DT:g} ms). Per point, {B} "
        f"independent realisations (`vmap` over keys), each started at the analytic "
        "fixed point $y^*$ (constant history), a burn-in (rww-ei-fic "
        f"{burn['rww-ei-fic'] / 1000:g} s, rww {burn['rww'] / 1000:g} s, hopf "
        f"{burn['hopf'] / 1000:g} s; {burn['hopf-linear'] / 1000:g} s "
        f"at the small hopf noise) and then {T:g} s of signal at TR = {TR:g} ms "
        f"({B * T / 60:.1f} min of signal per point); the FC of each realisation and "
        "their mean. The signal is the one `netdyn fit` compares: the Balloon-Windkessel "
        "BOLD (`nd.Bold(period=720, variables=...)`) of S_e (rww-ei-fic) and S (rww); for "
        "hopf the 720 ms temporal average of x (`nd.TemporalAverage`, as `--model hopf`).", "",
        "Columns (FC compared over the upper triangle, i < j):", "",
        "- *abscissa*: the largest real part of the eigenvalues of the neural Jacobian "
        "(per ms); *tau* = -1/abscissa, the slowest mode's time constant.",
        f"- *r(an, sim)*: Pearson r between the analytic FC and the mean FC of the {B} "
        "realisations.",
        "- *ceiling*: the r that the simulated mean would reach against an exact analytic "
        "FC given its own sampling noise alone, estimated as the square root of the "
        "Spearman-Brown reliability of the mean from the r between the means of its two "
        "halves.",
        "- *single vs rest*: the r of one realisation's FC against the mean of the others, "
        "averaged over realisations (the simulation's own noise floor at "
        f"{T:g} s).",
        "- *mean FC an*, *mean FC sim (SE)*: the mean of the FC's upper triangle, analytic "
        "and simulated (SE: over realisations); *diff* = sim - an.",
        "- *var sim/an*: median over regions of the simulated signal's variance over the "
        "analytic one (1 where the linear picture holds for the fluctuations' size).",
        "- *S̄ − S\\**: the simulated time mean of the monitored state variable minus its "
        "value at the fixed point, mean over regions and realisations (max: the largest "
        "|mean over regions| of one realisation); a run that left the fixed point's "
        "neighbourhood shows here.",
        "- *r(an, data)*, *r(sim, data)*: r of each against the data's FC (`data.fc`, the "
        "hcp group FC, mean upper triangle 0.348).", "",
        f"## rww-ei-fic (sigma = {SIGMA['rww-ei-fic']:g}, `netdyn fit`'s)", "",
        "`nd.presets.rww_ei_fic(weights, lengths, G, sigma)`: excitatory and inhibitory "
        "Wong-Wang populations, feedback inhibition control at 3 Hz. Stable below "
        "G ~ 0.56.", "", *table(ei["rows"]), "",
    ]
    ok, bad = held(ei["rows"])
    lines += [
        "The project's stated target for the analytic FC is r(an, sim) >= 0.95 and "
        "|mean FC difference| <= 0.02 across the stable range of rww-ei-fic. Points where "
        f"both hold: {_points(ok)}. Points where either does not: {_points(bad)}.", "",
        _left_text(ei["rows"]), "", _gap_text(ei["rows"]), "",
    ]
    if rww["rows"]:
        lines += [
            f"## rww (sigma = {SIGMA['rww']:g}, the preset's and `netdyn fit`'s)", "",
            "`nd.presets.rww(weights, lengths, G, sigma)`: single-population Reduced "
            "Wong-Wang. Bistable near its critical coupling: a low-activity branch (mean "
            f"S ~ 0.09) ends in a saddle-node at G_c = {rww['G_c']:.6f}; a high-activity "
            "branch (mean S ~ 0.3) exists above G ~ 0.22. The points lie on the low branch "
            "at the listed slowest-mode time constants (target tau in the first column), "
            "placed by bisection on the abscissa of the Jacobian at the fixed point, which "
            "the script finds by Newton's method on `nd.Drift` continued from G = 0.1 and "
            "passes to `nd.linear_fc` as `initial`. From the preset's own initial state "
            "(S = 0.3) `nd.linear_fc` finds: " + "; ".join(
                f"G {r['G']:.6f}: {r['default_start']}" for r in rww["rows"]) + ".", "",
            *table(rww["rows"], G_label="tau target (s), G",
                   G_text=lambda r: f"{r['tau_target']:g} s, {r['G']:.6f}"), "",
        ]
        ok, bad = held(rww["rows"])
        lines += [f"r(an, sim) >= 0.95 and |diff| <= 0.02: {_points(ok, '.6f')}. Either not: "
                  f"{_points(bad, '.6f')}.", "", _left_text(rww["rows"], ".6f"), "",
                  _gap_text(rww["rows"], ".6f"), ""]
    if hopf["rows"]:
        lines += [
            f"## hopf (a = -0.02 /s, sigma = {SIGMA['hopf']:g}, `netdyn fit`'s)", "",
            "`nd.presets.hopf(weights, lengths, G, sigma)` (G per second; the network runs "
            "in ms: a' = -2e-5 /ms, G' = G / 1000, sigma' = sigma / sqrt(1000)), diffusive "
            "coupling. The weights are symmetric, so a + G (W - diag(rowsum W)) has the "
            "uniform vector as eigenvector with eigenvalue a at every G: the origin stays "
            "stable with abscissa a = -2e-5 /ms (tau = 50 s) at any G, and there is no "
            "onset in G to approach (the delays do not change this in the linear picture, "
            "which ignores them). The points span the FC levels instead. The "
            "linearisation at the origin drops the cubic term $-|z|^2 z$; *<|z|^2>* is the "
            "simulated mean of $x^2 + y^2$ estimated as twice the variance of the averaged "
            "x (per ms, against |a'| = 2e-5 /ms): where it exceeds |a'|, the cubic "
            "damping, not a, sets the fluctuations.", "",
            *table(hopf["rows"], state="<\\|z\\|^2> (1/ms)"), "",
        ]
        if hopf_lin["rows"]:
            lines += [
                f"The same at sigma = {HOPF_LINEAR_SIGMA:g} (one point, for the run time; "
                "fluctuations small enough for "
                "the cubic term to be negligible; FC in the linear picture does not depend "
                "on sigma):", "", *table(hopf_lin["rows"], state="<\\|z\\|^2> (1/ms)"), "",
            ]
    if res["delays"]:
        lines += [
            "## Delays", "",
            "rww-ei-fic simulated once with the preset's delays (the runs of the table "
            "above, with their keys) and once with the same network without delays "
            "(`nd.Linear(G)` on `nd.DenseGraph(weights)`), with the same noise keys. The "
            "analytic FC is the same for both (delays ignored: largest absolute difference "
            "of the two analytic FCs in the last column). *no delays − delays*: the paired "
            "difference of the simulated mean FCs (same noise). *left*: the largest |S̄ − S\\*| "
            "of one realisation, with and without delays (above "
            f"{LEFT_OFFSET:g}: runs left the fixed point).", "",
            *H.table(("G", "r(an, sim) delays", "r(an, sim) no delays", "mean FC an",
                      "mean FC sim delays (SE)", "mean FC sim no delays (SE)",
                      "no delays − delays", "r(sim delays, sim no delays)",
                      "left delays / no delays", "max abs(an − an)"), [(
                f"{d['G']:.2f}", f"{w['r_analytic_sim']:.3f}", f"{o['r_analytic_sim']:.3f}",
                f"{w['mean_fc_analytic']:.3f}",
                f"{w['mean_fc_sim']:.3f} ({w['mean_fc_sim_se']:.3f})",
                f"{o['mean_fc_sim']:.3f} ({o['mean_fc_sim_se']:.3f})",
                f"{o['mean_fc_sim'] - w['mean_fc_sim']:+.4f}", f"{d['r_delays_no_delays']:.4f}",
                f"{w['state_offset_max_run']:.3f} / {o['state_offset_max_run']:.3f}",
                f"{d['analytic_max_diff']:.1e}")
                for d in res["delays"] for w, o in [(d["with"], d["without"])]]),
            ""]
    t = res["timing"]
    lines += [
        "## Speed of `nd.linear_fc`", "",
        f"80-region rww-ei-fic at G = {t['G']:g} with `nd.Bold` (160 neural and 320 "
        "haemodynamic states), float64, compiled with `jax.jit`; seconds per evaluation, "
        f"median (min) of {t['repeats']} interleaved calls after one warm-up; the loss is "
        "`nd.rmse(fc, data.fc)`; the regional gradient is with respect to an 80-vector "
        "`w_p` (`jax.value_and_grad`).", "",
        *H.table(("evaluation", "s (median)", "s (min)", "compile s"), [
            (k, f"{t['seconds_median'][k]:.3f}", f"{t['seconds_min'][k]:.3f}",
             f"{t['compile_seconds'][k]:.1f}") for k in t["seconds_median"]]), "",
        f"1-minute load average before / after the timings: {t['load_before']} / "
        f"{t['load_after']} (2 cores shared with other jobs). d loss / dG = "
        f"{t['dloss_dG']:.6f}, central difference (h = 1e-5) "
        f"{t['dloss_dG_central_difference']:.6f}.", "",
        f"Simulation wall time per point (all {B} realisations, burn-in included; median "
        "over the points of each model, the first of which includes the compile): "
        + ", ".join(
            f"{m} {np.median(res['sim_seconds'][m]):.0f} s" for m in res["sim_seconds"]
            if res["sim_seconds"][m]) + ".", "", "Raw numbers: `linear_fc.json`.",
    ]
    peaks = [p for p in (res.get("peak_load"), *(a["peak_load"] for a in added)) if p]
    lines += C.machine_section(m["machine"], m["end_load"], peak=max(peaks, default=None))
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------- main


def setup(seed):
    """``(data, its FC, Models, key)``: the hcp data and the noise key of ``seed``."""
    data = nd.datasets.load("hcp")
    return data, np.asarray(data.fc, float), Models(data), jax.random.key(seed)


def ei_key(key, G, cfg):
    """The noise key of rww-ei-fic's point ``G`` in the main table."""
    return jax.random.fold_in(key, list(cfg["ei_G"]).index(G))


def delay_pair(models, cfg, data_fc, net, lin, k, with_) -> dict:
    """The runs of ``net`` without its delays (same keys) against ``with_``, its row."""
    G = with_["G"]
    flat = models.without_delays(net)
    lin_flat = analytic(flat, signal_monitor("rww-ei-fic"))
    runs, secs = simulate_point(flat, lin_flat, "rww-ei-fic", cfg, k,
                                cfg["burn_in"]["rww-ei-fic"])
    without = compare(lin_flat, runs, 0, data_fc)
    print(f"no delays G={G}: r {without['r_analytic_sim']:.3f} mean sim "
          f"{without['mean_fc_sim']:.3f} (with delays r {with_['r_analytic_sim']:.3f}, "
          f"mean {with_['mean_fc_sim']:.3f}) [{secs:.0f} s]", flush=True)
    return {"G": G, "with": with_, "without": without, "seconds": secs,
            "r_delays_no_delays": _corr(with_["mean_fc_sim_fc"], without["mean_fc_sim_fc"]),
            "analytic_max_diff": float(jnp.max(jnp.abs(lin_flat.fc - lin.fc)))}


def add_delays(args, couplings) -> dict:
    """Simulate the delay pairs at ``couplings`` (points of the main table, whose runs
    are repeated with the same keys) and add them to the saved results."""
    saved = H.loads(H.out_path(args, "linear_fc").with_suffix(".json").read_text())
    cfg, res = saved["config"], saved["results"]
    t0 = time.perf_counter()
    data, data_fc, models, key = setup(saved["seed"])
    for G in couplings:
        net = models.build("rww-ei-fic", G)
        lin = analytic(net, signal_monitor("rww-ei-fic"))
        k = ei_key(key, G, cfg)
        runs, _ = simulate_point(net, lin, "rww-ei-fic", cfg, k, cfg["burn_in"]["rww-ei-fic"])
        with_ = {"G": G, **compare(lin, runs, 0, data_fc)}
        row = next(r for r in res["rww-ei-fic"]["rows"] if r["G"] == G)
        same = max(abs(with_[q] - row[q]) for q in ("r_analytic_sim", "mean_fc_sim"))
        print(f"G={G}: the main table's runs repeated, largest |difference| of r and mean "
              f"FC {same:.1e}", flush=True)
        pair = delay_pair(models, cfg, data_fc, net, lin, k, with_)
        pair["repeat_max_diff"] = same
        res["delays"] = [d for d in res["delays"] if d["G"] != G] + [pair]
    res["delays"].sort(key=lambda d: d["G"])
    extra = saved.setdefault("added", [])
    extra.append({"command": C.command("studies/bench_linear_fc.py", args.smoke and "--smoke",
                                       "--add-delays", *(f"{G:g}" for G in couplings)),
                  "wall_seconds": time.perf_counter() - t0, "load_end": C.loadavg(),
                  "peak_load": C.peak_load()})
    return _plain(saved)


def _plain(x):
    """``x`` for JSON: numpy scalars as numbers, the FC arrays dropped."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items() if k != "mean_fc_sim_fc"}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return x


def measure(args) -> dict:
    """Every point of every model, the delay pairs and the timings; or, with
    ``--add-delays``, the saved measurements with those delay pairs added."""
    if args.add_delays:
        return add_delays(args, args.add_delays)
    cfg = SMOKE if args.smoke else FULL
    wall = time.perf_counter()
    data, data_fc, models, key = setup(args.seed)
    res = {m: {"rows": []} for m in ("rww-ei-fic", "rww", "hopf", "hopf-linear")}
    res["sim_seconds"] = {m: [] for m in res}
    res["delays"] = []
    runs_kept = {}

    def point(model, G, label, sigma=None, initial=None, extra=None):
        net = models.build(model, G, sigma)
        lin = analytic(net, signal_monitor(model), initial)
        if lin is None:
            print(f"{label} G={G}: no stable fixed point found", flush=True)
            return None
        k = (ei_key(key, G, cfg) if label == "rww-ei-fic" else
             jax.random.fold_in(key, len(res[label]["rows"]) + 1000 * list(res).index(label)))
        runs, secs = simulate_point(net, lin, model, cfg, k, cfg["burn_in"][label])
        res["sim_seconds"][label].append(secs)
        row = {"G": G, **compare(lin, runs, 0, data_fc)}
        if model == "hopf":  # <|z|^2> ~ 2 var(x): the cubic term's damping
            x = np.asarray(runs["signal"])
            row["state_offset_mean"] = float(2 * x.var(axis=1).mean())
            row["state_offset_max_run"] = float(2 * x.var(axis=1).mean(1).max())
        row.update(extra or {})
        res[label]["rows"].append(row)
        runs_kept[(label, G)] = (net, lin, k)
        print(f"{label} G={G:.6g}: tau {row['tau_s']:.2f} s r {row['r_analytic_sim']:.3f} "
              f"(ceiling {row['r_ceiling']:.3f}, single {row['r_single_vs_rest']:.3f}) "
              f"mean an {row['mean_fc_analytic']:.3f} sim {row['mean_fc_sim']:.3f} var "
              f"{row['variance_ratio_median']:.2f} offset {row['state_offset_mean']:+.1e} "
              f"[{secs:.0f} s sim, {time.strftime('%H:%M:%S')}, load {C.loadavg()}]",
              flush=True)
        return row

    for G in cfg["ei_G"]:
        point("rww-ei-fic", G, "rww-ei-fic")

    if cfg["rww_tau"]:
        t = time.perf_counter()
        couplings, G_c = rww_couplings(models, cfg["rww_tau"])
        res["rww"].update(G_c=G_c, search_seconds=time.perf_counter() - t)
        print(f"rww: low branch ends at G_c = {G_c:.7f}; "
              f"{[(tau, G) for tau, G, _ in couplings]} [{time.perf_counter() - t:.0f} s]",
              flush=True)
        for tau, G, init in couplings:
            net = models.build("rww", G)
            point("rww", G, "rww", initial=init, extra={
                "tau_target": tau, "default_start": default_start(net, signal_monitor("rww"))})

    for G in cfg["hopf_G"]:
        point("hopf", G, "hopf")
    for G in cfg["hopf_linear_G"]:
        point("hopf", G, "hopf-linear", sigma=HOPF_LINEAR_SIGMA, extra={"sigma": HOPF_LINEAR_SIGMA})
    res["burn_in_hopf_linear"] = cfg["burn_in"]["hopf-linear"]

    for G in cfg["delay_G"]:
        net, lin, k = runs_kept[("rww-ei-fic", G)]
        with_ = next(r for r in res["rww-ei-fic"]["rows"] if r["G"] == G)
        res["delays"].append(delay_pair(models, cfg, data_fc, net, lin, k, with_))

    print("timings", flush=True)
    res["timing"] = timings(models, data, cfg["repeats"])
    print(json.dumps(res["timing"], indent=1), flush=True)

    res["peak_load"] = C.peak_load()
    return {"config": _plain(cfg), "sigma": SIGMA, "hopf_linear_sigma": HOPF_LINEAR_SIGMA,
            "seed": args.seed, "wall_seconds": time.perf_counter() - wall,
            "results": _plain(res)}


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--add-delays", type=float, nargs="+", default=None, metavar="G",
                   help="add the delay comparison at these rww-ei-fic points of a saved run "
                   "(its runs repeated with the same keys) and rewrite the report")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="linear_fc", options=options)
