"""Do ``nd.uncertainty``'s intervals cover the true parameter at their nominal rate?
Writes benchmarks/uncertainty.md (and .json).

A noisy linear (Ornstein-Uhlenbeck) network whose coupling is known: ``nd.LinearDynamics``
(gamma = -0.1 /ms) on 10 regions of the embedded HCP connectome (weights divided by their
spectral radius, delays = tract length / 4 mm/ms), ``nd.DelayedLinear(G*)`` with
G* = 0.0877 (88 % of the critical 0.1), additive noise. Each repetition draws a new data set
(4 runs of 20 s at G*, sampled by a 4 ms temporal average, after a 1 s burn-in; the target
is their mean FC), fits G from 0.7 G* with ``nd.fit`` (``nd.FcLoss``, ``"rmse"``, 4 noise
realisations, the fit's own noise key), and asks ``nd.uncertainty`` for the 95 % interval
(4 fresh noise keys, each of the 4 runs left out in turn) on the fit's loss, as a user calls
it (the library squares an rmse ``FcLoss`` first), and, for comparison, on the same loss
hidden in a wrapper that is not an ``FcLoss`` (``AsIs``: the root expanded as it is, what the
library did before it squared). Reported: how often each interval holds G*, the reported sd
against the spread of the fitted G over the data sets, each part (noise, data) against a
direct measurement (a refit of the same data with another noise key), and the cost. Before
the loop: ``nd.check_gradient`` on the first data set; after it: ``nd.identifiability``'s
Hessian at the first fit against central differences of the gradient.

    python scripts/benchmarks/bench_uncertainty.py                   # ~15 min, 1-2 CPU cores
    python scripts/benchmarks/bench_uncertainty.py --reps 2 --diagnose 1 --no-write  # smoke
"""

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import _common as C  # first: this checkout's netdyn
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402

# ----------------------------------------------------------------------- the problem

NODES = 10  # the first 10 regions of the embedded hcp connectome (frontal, both sides)
SPEED = 4.0  # mm/ms
GAMMA = -0.1  # 1/ms: a 10 ms time constant
SIGMA = 0.05  # additive noise; the FC does not depend on it (see the report)
G_TRUE = 0.0877  # G*: critical G is -GAMMA = 0.1 (weights / spectral radius)
START = 0.7  # the fit starts at START x G*
DT, PERIOD = 1.0, 4.0  # ms: Heun step, temporal-average period
DURATION, BURN_IN = 20_000.0, 1_000.0  # ms: each run (data and simulated), burn-in
RUNS = 4  # runs per data set
REALISATIONS = 4  # noise realisations in the fit's loss
NOISE_KEYS = 4  # fresh keys for uncertainty's noise part
STEPS, LR = 35, 2e-3  # the fit: nd.backtrack(optax.adam(LR)), STEPS steps
REFIT_STEPS, REFIT_LR = 12, 3e-4  # the check refit, started at the fitted G
LEVEL = 0.95
LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)  # calibration: intervals from the same sd and dof
FD_STEPS = (1e-5, 5e-6)  # central differences of the gradient for the Hessian check
REPS = 80  # data sets
DIAGNOSE = 8  # the first data sets also get the Hessian under each fresh noise key


def WHERE(net):  # one function for every call: the compiled steps are reused
    return net.coupling.G


# One optimizer object each, for the same reason (the compiled step is keyed on it).
OPT = nd.backtrack(optax.adam(LR))
REFIT_OPT = nd.backtrack(optax.adam(REFIT_LR))


def connectome():
    """``(weights / spectral radius, lengths, labels)`` of the first ``NODES`` regions."""
    data = nd.datasets.load("hcp")
    w = np.asarray(data.weights, float)[:NODES, :NODES]
    lengths = np.asarray(data.lengths, float)[:NODES, :NODES]
    return w / np.max(np.abs(np.linalg.eigvals(w))), lengths, list(data.labels[:NODES])


def network(w, lengths, G):
    return nd.Network(nd.LinearDynamics(gamma=GAMMA), nd.DelayedLinear(G=jnp.asarray(G)),
                      nd.DelayGraph.from_lengths(w, lengths, SPEED),
                      noise=nd.AdditiveNoise(sigma=SIGMA))


def fc_loss(target, realisations=REALISATIONS):
    return nd.FcLoss(target, nd.Heun(), nd.TemporalAverage(period=PERIOD), duration=DURATION,
                     dt=DT, burn_in=BURN_IN, realisations=realisations, metric="rmse")


def streams(seed: int, rep: int) -> dict:
    """Independent keys of one repetition: data, fit, uncertainty's noise keys, refit."""
    root = jax.random.key(seed)
    key = {name: jax.random.fold_in(jax.random.fold_in(root, i), rep)
           for i, name in enumerate(("data", "fit", "noise", "refit"))}
    key["noise"] = list(jax.random.split(key["noise"], NOISE_KEYS))
    return key


# ------------------------------------------------------------------ one repetition


class AsIs(eqx.Module):
    """A loss passed through unchanged, in a module that is not an ``nd.FcLoss``:
    ``nd.uncertainty`` then expands the rmse itself rather than its square, which is what it
    did before it squared an rmse ``FcLoss`` (the comparison column)."""

    loss: nd.FcLoss

    def __call__(self, model, key):
        return self.loss(model, key)


def _fit(loss, start, key, optimizer, steps):
    """``(fitted, G, loss, gradient at the kept point)``: ``nd.fit`` keeping the best row."""
    fitted, history = nd.fit(start, loss, optimizer, where=WHERE, steps=steps, key=key,
                             keep="best")
    best = history.best_step()
    return fitted, float(WHERE(fitted)), float(history.loss[best]), \
        float(history.grad_norm[best])


def _plain(u) -> dict:
    """One ``nd.Uncertainty`` of the single coordinate G, as numbers."""
    return {"sd": float(u.sd[0]), "noise_sd": float(u.noise_sd[0]),
            "data_sd": float(u.data_sd[0]), "lower": float(u.lower[0]),
            "upper": float(u.upper[0]), "dof": float(u.dof[0]),
            "hessian": float(u.hessian_eigenvalues[0]), "valid": u.valid, "note": u.note}


def repetition(rep, seed, truth, simulate_runs, diagnose: bool) -> dict:
    """One data set: simulate, fit, ``nd.uncertainty`` on the fit's loss (squared inside the
    library) and on ``AsIs`` of it (the root as it is), and the check refit (timed apart).
    ``diagnose``: also the Hessian at the fitted G under each fresh noise key
    (``nd.identifiability``; not timed with the rest)."""
    key = streams(seed, rep)
    t = [time.perf_counter()]
    runs = list(np.asarray(simulate_runs(truth, key["data"])))
    loss = fc_loss(nd.runs_fc(runs))
    t.append(time.perf_counter())
    start = eqx.tree_at(WHERE, truth, jnp.asarray(START * G_TRUE))
    fitted, G, loss_value, grad = _fit(loss, start, key["fit"], OPT, STEPS)
    t.append(time.perf_counter())
    leave = [loss.replace(target=nd.runs_fc(runs[:r] + runs[r + 1:])) for r in range(RUNS)]
    u = nd.uncertainty(loss, fitted, WHERE, key=key["fit"], noise_keys=key["noise"],
                       leave_one_out=leave, level=LEVEL)
    t.append(time.perf_counter())
    u2 = nd.uncertainty(AsIs(loss), fitted, WHERE, key=key["fit"], noise_keys=key["noise"],
                        leave_one_out=[AsIs(x) for x in leave], level=LEVEL)
    t.append(time.perf_counter())
    _, G_refit, _, grad_refit = _fit(loss, fitted, key["refit"], REFIT_OPT, REFIT_STEPS)
    t.append(time.perf_counter())
    iu = np.triu_indices(NODES, k=1)
    row = {
        "rep": rep, "G": G, "loss": loss_value, "grad": grad, "G_refit": G_refit,
        "grad_refit": grad_refit, "library": _plain(u), "as_is": _plain(u2),
        "data_mean_fc": float(np.mean([np.asarray(nd.fc(r))[iu].mean() for r in runs])),
        "seconds": {"data": t[1] - t[0], "fit": t[2] - t[1], "uncertainty": t[3] - t[2],
                    "uncertainty_as_is": t[4] - t[3], "refit": t[5] - t[4]},
    }
    if diagnose:
        row["fresh_hessians"] = [float(nd.identifiability(loss, fitted, WHERE, key=k).hessian[0, 0])
                                 for k in key["noise"]]
    return row


# --------------------------------------------------------------------------- checks


def gradient_checks(truth, simulate_runs, seed) -> list[dict]:
    """``nd.check_gradient`` of the fit's loss (first data set, fit key) at the start and
    at G*."""
    key = streams(seed, 0)
    loss = fc_loss(nd.runs_fc(list(np.asarray(simulate_runs(truth, key["data"])))))
    out = []
    for factor in (START, 1.0):
        model = eqx.tree_at(WHERE, truth, jnp.asarray(factor * G_TRUE))
        c = nd.check_gradient(loss, model, WHERE, key=key["fit"], direction=jnp.asarray(1.0),
                              step=1e-5)
        out.append({"G": factor * G_TRUE, "gradient": c.gradient,
                    "finite_difference": c.finite_difference,
                    "finite_difference_half": c.finite_difference_half, "step": c.step,
                    "relative_error": c.relative_error, "settled": c.settled,
                    "agree": c.agree})
    return out


def hessian_check(truth, simulate_runs, seed, G_fit) -> dict:
    """``nd.identifiability`` at the first repetition's fit; its Hessian against central
    differences of ``jax.grad`` (same key)."""
    key = streams(seed, 0)
    loss = fc_loss(nd.runs_fc(list(np.asarray(simulate_runs(truth, key["data"])))))
    fitted = eqx.tree_at(WHERE, truth, jnp.asarray(G_fit))
    t = time.perf_counter()
    ident = nd.identifiability(loss, fitted, WHERE, key=key["fit"])
    seconds = time.perf_counter() - t
    grad = eqx.filter_jit(jax.grad(
        lambda G, k: loss(eqx.tree_at(WHERE, truth, G), k)[0]))
    h = float(ident.hessian[0, 0])
    fd = {}
    for step in FD_STEPS:
        up, down = (float(grad(jnp.asarray(G_fit + s), key["fit"])) for s in (step, -step))
        fd[step] = (up - down) / (2 * step)
    best = fd[FD_STEPS[-1]]
    return {"G": G_fit, "loss": ident.loss, "gradient": float(ident.gradient[0]),
            "hessian": h, "finite_difference": {str(s): v for s, v in fd.items()},
            "relative_error": abs(h - best) / abs(best),
            "fisher": None if ident.fisher is None else float(ident.fisher[0, 0]),
            "sloppy": list(ident.sloppy), "seconds": seconds}


# -------------------------------------------------------------------------- summary


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score 95 % interval of a binomial proportion."""
    if n == 0:
        return (math.nan, math.nan)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half, centre + half)


VARIANTS = ("library", "as_is")
VARIANT_NAMES = {"library": "the fit's rmse loss (squared inside, as now)",
                 "as_is": "`AsIs(loss)`: the root as it is (as before)"}


def _variant(rows: list[dict], v: str, emp_noise: float, emp_data: float) -> dict:
    """Coverage and reported spreads of one variant of ``nd.uncertainty``."""
    M = len(rows)
    G = np.array([r["G"] for r in rows])
    sd, nsd, dsd, dof = (np.array([r[v][k] for r in rows])
                         for k in ("sd", "noise_sd", "data_sd", "dof"))
    hits = int(sum(r[v]["lower"] <= G_TRUE <= r[v]["upper"] for r in rows))
    calibration = {}
    for level in LEVELS:
        q = np.array([nd.t_quantile((1 + level) / 2, d) for d in dof])
        h = int(np.sum(np.abs(G - G_TRUE) <= q * sd))
        calibration[str(level)] = {"hits": h, "coverage": h / M, "ci": wilson(h, M)}
    q_noise = nd.t_quantile((1 + LEVEL) / 2, NOISE_KEYS - 1)
    q_data = nd.t_quantile((1 + LEVEL) / 2, RUNS - 1)
    diff = np.array([r["G"] - r["G_refit"] for r in rows])
    part = {"noise_alone": np.abs(G - G_TRUE) <= q_noise * nsd,
            "data_alone": np.abs(G - G_TRUE) <= q_data * dsd,
            # the noise part against what it describes: the refit with another noise key
            "refit": np.abs(diff) <= q_noise * math.sqrt(2) * nsd}
    out = {"hits": hits, "coverage": hits / M, "ci": wilson(hits, M),
           "valid": int(sum(r[v]["valid"] for r in rows)), "calibration": calibration,
           "sd_rms": float(np.sqrt(np.mean(sd**2))), "sd_mean": float(sd.mean()),
           "sd_cv": float(sd.std(ddof=1) / sd.mean()),
           "noise_sd_rms": float(np.sqrt(np.mean(nsd**2))),
           "data_sd_rms": float(np.sqrt(np.mean(dsd**2))),
           "dof_median": float(np.median(dof)), "dof_range": (float(dof.min()), float(dof.max())),
           "hessian_median": float(np.median([r[v]["hessian"] for r in rows]))}
    for name, h in part.items():
        out[f"{name}_hits"] = int(h.sum())
        out[f"{name}_ci"] = wilson(int(h.sum()), M)
    out["noise_ratio"] = out["noise_sd_rms"] / emp_noise
    out["data_ratio"] = out["data_sd_rms"] / emp_data if emp_data > 0 else math.nan
    return out


def summarise(rows: list[dict]) -> dict:
    M = len(rows)
    G = np.array([r["G"] for r in rows])
    diff = np.array([r["G"] - r["G_refit"] for r in rows])
    emp_sd = float(np.std(G, ddof=1))
    emp_noise = float(np.sqrt(np.mean(diff**2) / 2))  # Var(G - G_refit) = 2 noise variance
    emp_data2 = emp_sd**2 - emp_noise**2
    emp_data = math.sqrt(emp_data2) if emp_data2 > 0 else math.nan
    # The rmse's own curvature (the as-is column's Hessian; the library's is that of the
    # square), to go with the fit's gradient of the rmse and with nd.identifiability's.
    h_rmse = np.array([r["as_is"]["hessian"] for r in rows])
    newton = np.abs([r["grad"] / h / r["library"]["sd"] for r, h in zip(rows, h_rmse)])
    newton_refit = np.abs([r["grad_refit"] / h / r["library"]["sd"]
                           for r, h in zip(rows, h_rmse)])
    diag = [r for r in rows if "fresh_hessians" in r]
    fresh = [r["as_is"]["hessian"] / np.mean(r["fresh_hessians"]) for r in diag]
    secs = {k: [r["seconds"][k] for r in rows[1:] or rows] for k in rows[0]["seconds"]}
    return {
        "M": M, "G_mean": float(G.mean()), "G_sd": emp_sd, "bias_se": emp_sd / math.sqrt(M),
        # the empirical sd's own relative standard error, about 1 / sqrt(2 (M - 1))
        "G_sd_rel_se": 1 / math.sqrt(2 * (M - 1)),
        "noise_sd_empirical": emp_noise, "data_sd_empirical": emp_data,
        "variants": {v: _variant(rows, v, emp_noise, emp_data) for v in VARIANTS},
        "newton_over_sd_max": float(np.max(newton)),
        "newton_refit_over_sd_max": float(np.max(newton_refit)),
        "fresh_hessian_reps": len(diag),
        "hessian_fit_over_fresh_mean": float(np.mean(fresh)) if fresh else math.nan,
        "hessian_fit_over_fresh_range": (float(np.min(fresh)), float(np.max(fresh)))
        if fresh else (math.nan, math.nan),
        "fresh_hessian_negative": int(sum(min(r["fresh_hessians"]) <= 0 for r in diag)),
        "quadratic_width_median": float(np.median([
            math.sqrt(r["loss"] / h) for r, h in zip(rows, h_rmse) if h > 0])),
        "loss_min_range": (float(min(r["loss"] for r in rows)),
                           float(max(r["loss"] for r in rows))),
        "data_mean_fc": float(np.mean([r["data_mean_fc"] for r in rows])),
        "data_mean_fc_sd": float(np.std([r["data_mean_fc"] for r in rows], ddof=1)),
        "seconds_median": {k: statistics.median(v) for k, v in secs.items()},
        "seconds_first": rows[0]["seconds"],
    }


# --------------------------------------------------------------------------- report


def _ci(ci) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _rate(hits: int, M: int, ci, bold=False) -> str:
    text = f"{hits} / {M} = {hits / M:.3f}"
    return f"**{text}** {_ci(ci)}" if bold else f"{text} {_ci(ci)}"


def _verdict(name: str, v: dict, M: int) -> str:
    text = (f"with {name}, the 95 % intervals held G* in {v['hits']} of {M} data sets "
            f"({v['coverage']:.3f}, binomial 95 % interval {_ci(v['ci'])})")
    if v["ci"][0] <= LEVEL <= v["ci"][1]:
        return text + ": consistent with the nominal rate"
    side = "below" if v["coverage"] < LEVEL else "above"
    return text + f": {abs(LEVEL - v['coverage']):.3f} {side} the nominal 0.95"


def report(args, info, labels, w, lengths, checks, hess, rows, s, wall, end_load) -> str:
    M = s["M"]
    sec = s["seconds_median"]
    rep_s = sum(sec.values())
    a, b = s["variants"]["library"], s["variants"]["as_is"]
    row = lambda label, f: f"| {label} | {f(a)} | {f(b)} |"  # noqa: E731
    cal = "\n".join(
        row(f"{float(level):.2f}", lambda v, level=level: _rate(
            v["calibration"][level]["hits"], M, v["calibration"][level]["ci"]))
        for level in a["calibration"])
    checks_text = "; ".join(
        f"at G = {c['G']:.5f}: jax.grad {c['gradient']:.6g}, central differences "
        f"{c['finite_difference']:.6g} (h = {c['step']:g}) and "
        f"{c['finite_difference_half']:.6g} (h / 2), relative error {c['relative_error']:.1e}"
        f"{'' if c['agree'] else ' (**not agreeing**)'}" for c in checks)
    fd = ", ".join(f"{v:.6g} (h = {float(k):g})" for k, v in hess["finite_difference"].items())
    delays = lengths[w > 0] / SPEED
    short = b["ci"][1] < LEVEL and b["noise_ratio"] < 0.8  # the root as it is falls short
    names = ("`nd.uncertainty` on the fit's own `FcLoss` (`\"rmse\"`), as a user calls it "
             "(the library squares an rmse `FcLoss`, and each `leave_one_out` loss, before "
             "it expands: the mean squared FC error has the same minimiser, so the same "
             "fitted G)",
             "the root expanded as it is, what `nd.uncertainty` did before it squared (the same "
             "loss in a wrapper that is not an `FcLoss`, `AsIs`)")

    def against(hits, ci):
        return f"{hits} of {M}, " + (
            "consistent with the nominal 0.95" if ci[0] <= LEVEL <= ci[1]
            else f"{'below' if hits / M < LEVEL else 'above'} the nominal 0.95")

    why = [
        "## Why the library squares an rmse loss",
        "",
        f"The data part agrees with the spread it describes either way ({a['data_ratio']:.2f} "
        f"of it on the square, {b['data_ratio']:.2f} on the root as it is). The noise part "
        f"is where they differ: on the root as it is, {b['noise_ratio']:.2f} of the refits' "
        f"spread, and its refit check holds {against(b['refit_hits'], b['refit_ci'])}; on "
        f"the square, as the library now expands it, the same noise keys give "
        f"{a['noise_ratio']:.2f} of it, and the refit check holds "
        f"{against(a['refit_hits'], a['refit_ci'])}.",
        "",
        "The sandwich divides the gradient's spread over fresh keys by the curvature at "
        "the fit's own key, H. The rmse is the square root of a mean square, "
        "sqrt(e0^2 + c (G - G_key)^2) near the minimum G_key of one key, with e0 the "
        f"residual left at that minimum ({s['loss_min_range'][0]:.3f}-"
        f"{s['loss_min_range'][1]:.3f} here: the sampling noise of the data's and the "
        "simulation's FC). Its curvature, c / e0, "
        "is largest at its own minimum and falls off within about e0 / sqrt(c) = "
        f"sqrt(e0 / H) of it ({s['quadratic_width_median']:.5f} here, median), about as far as "
        f"another key's minimum lies (the refits: {s['noise_sd_empirical']:.5f}), so the "
        "curvature that decides "
        "where another key's fit lands is smaller than H. Measured on the first "
        f"{s['fresh_hessian_reps']} data sets (`nd.identifiability`, which takes the loss as "
        f"it is, at the fitted G under each of the {NOISE_KEYS} fresh keys): the fit key's H "
        f"of the rmse is {s['hessian_fit_over_fresh_mean']:.1f} times the fresh keys' mean on "
        f"average (range {s['hessian_fit_over_fresh_range'][0]:.1f}-"
        f"{s['hessian_fit_over_fresh_range'][1]:.1f}; {s['fresh_hessian_negative']} of these "
        "data sets had a fresh key with a negative curvature there). The square is "
        "quadratic in the residuals, its curvature does not single out the fit's key, and "
        "the first-order expansion holds over the spread. The jackknife is hit less because "
        "its Newton steps use the same key as the fit (the same residual floor).",
        "",
        "The sandwich assumes a loss that is (close to) a mean of terms, quadratic over the "
        "noise's reach. So `nd.uncertainty` squares an `nd.FcLoss` with `metric=\"rmse\"`, "
        "and each `leave_one_out` loss, before it expands: the fit and the point of "
        "expansion are unchanged, only the expansion differs. On this run that takes the 95 "
        f"% coverage from {b['coverage']:.3f} to {a['coverage']:.3f} and the reported sd from "
        f"{b['sd_rms'] / s['G_sd']:.2f} to {a['sd_rms'] / s['G_sd']:.2f} of the fitted G's "
        "spread. It recognises an `FcLoss` itself only: a loss of one's own, or an `FcLoss` "
        "inside another module (as `AsIs` here), is expanded as it is, so pass a mean square "
        "rather than its root. The other metrics (`1-r` and its variants) are not squared "
        "and were not tested here.",
        "",
    ]
    lines = [
        "# Do the uncertainty intervals cover the truth?",
        "",
        f"Written by `{C.command('bench_uncertainty.py', *args.argv)}` "
        f"({wall / 60:.1f} min wall time). On a linear network whose coupling G* is known: "
        + _verdict(names[0], a, M) + "; " + _verdict(names[1], b, M) + ". The reported sd "
        f"against the spread of the fitted G over the data sets: {a['sd_rms'] / s['G_sd']:.2f} "
        f"(the library, squared) and {b['sd_rms'] / s['G_sd']:.2f} (the root as it is) of it "
        "(root mean square against the empirical sd). Why the library squares: see the "
        "section on it.",
        "",
        "## The set-up",
        "",
        f"- **Model**: a noisy linear (Ornstein-Uhlenbeck) network, `nd.LinearDynamics(gamma="
        f"{GAMMA})` (a {-1 / GAMMA:g} ms time constant), `nd.DelayedLinear(G)`, "
        f"`nd.AdditiveNoise(sigma={SIGMA})`, on the first {NODES} regions of the embedded "
        f"`hcp` connectome ({', '.join(labels)}), weights divided by their spectral radius, "
        f"delays = tract length / {SPEED:g} mm/ms ({delays.min():.1f}-{delays.max():.1f} ms). "
        f"With non-negative weights the network is stable for G < {-GAMMA:g} (delays do not "
        "change that for a positive system).",
        f"- **Truth**: G* = {G_TRUE} ({100 * G_TRUE / -GAMMA:.0f} % of the critical coupling); the "
        f"data's mean FC is {s['data_mean_fc']:.3f} on average (sd {s['data_mean_fc_sd']:.3f} "
        "between data sets).",
        "- **Why G alone**: with additive noise the state of a linear network is sigma times "
        "that of the network with unit noise (from the resting state, which the burn-in "
        "starts from), so the FC, a correlation, does not depend on sigma at all: sigma is "
        "not identifiable from FC and is not fitted. With the delays fixed, the FC depends "
        "on G relative to gamma, so gamma is held at its true value and G is fitted.",
        f"- **Data** (per repetition, its own data key): {RUNS} runs of {DURATION / 1000:g} s "
        f"at G*, stochastic Heun at dt = {DT:g} ms, each after a {BURN_IN / 1000:g} s burn-in "
        f"(the slowest mode relaxes in {-1 / (GAMMA + G_TRUE):.0f} ms), sampled by "
        f"`nd.TemporalAverage(period={PERIOD:g})`; the target is `nd.runs_fc(runs)`.",
        f"- **Loss**: `nd.FcLoss(target, nd.Heun(), monitor, duration={DURATION:g}, "
        f"burn_in={BURN_IN:g}, realisations={REALISATIONS}, metric=\"rmse\")`: the simulated "
        "runs have the data's length, so the FC estimator's finite-sample bias is the same on "
        "both sides. `\"rmse\"` rather than `\"1-r\"`: G sets the level of the FC first (the "
        "mean FC rises steeply towards the critical coupling), while its pattern changes "
        "little; `1-r` is blind to the level and would leave G weakly constrained.",
        f"- **Fit**: `nd.fit(start, loss, nd.backtrack(optax.adam({LR:g})), where=lambda n: "
        f"n.coupling.G, steps={STEPS}, key=fit_key, keep=\"best\")` from G = {START} G* = "
        f"{START * G_TRUE:.5f}. Convergence is checked at every fit: the remaining Newton "
        "step |dL/dG| / H (H the rmse's own curvature) at the kept point is at most "
        f"{s['newton_over_sd_max']:.1e} of the reported sd.",
        f"- **Uncertainty**: `nd.uncertainty(loss, fitted, where, key=fit_key, noise_keys="
        f"<{NOISE_KEYS} fresh keys>, leave_one_out=[loss.replace(target=nd.runs_fc(runs "
        f"without r)) for r in range({RUNS})])`, level {LEVEL}, as a user calls it. The "
        "library squares the rmse `FcLoss` and each `leave_one_out` loss first (the mean "
        "squared FC error has the same minimiser for every key, so the fit is the same), then "
        f"takes the noise part by the sandwich over the {NOISE_KEYS} keys ({NOISE_KEYS - 1} "
        f"dof), the data part by the leave-one-run-out jackknife with Newton steps ({RUNS - 1} "
        "dof), and gives a Student-t interval for their Welch-Satterthwaite dof. For "
        "comparison, the same call on `AsIs(loss)` and `[AsIs(x) for x in leave_one_out]`, "
        "`AsIs` a three-line module in the script that returns `loss(model, key)` unchanged: "
        "not being an `FcLoss`, it is expanded as it is, the root, which is what "
        "`nd.uncertainty` did before it squared.",
        f"- **Check refit** (not part of what a user runs): the same data refitted from the "
        f"fitted G with another noise key (`nd.backtrack(optax.adam({REFIT_LR:g}))`, "
        f"{REFIT_STEPS} steps; remaining Newton step at most "
        f"{s['newton_refit_over_sd_max']:.1e} sd): the two fits differ by the noise alone, "
        "with variance 2 noise_sd^2.",
        f"- {M} repetitions, each with new data, fit, noise and refit keys (seed {args.seed}).",
        "",
        "## Coverage",
        "",
        "| interval | " + " | ".join(f"`nd.uncertainty` on {VARIANT_NAMES[v]}"
                                     for v in VARIANTS) + " |",
        "|---|---|---|",
        row("**95 % interval holds G***", lambda v: _rate(v["hits"], M, v["ci"], bold=True)),
        row("`valid` (an interval given)", lambda v: f"{v['valid']} / {M}"),
        row(f"noise part alone, t({NOISE_KEYS - 1}) x noise_sd, holds G*",
            lambda v: _rate(v["noise_alone_hits"], M, v["noise_alone_ci"])),
        row(f"data part alone, t({RUNS - 1}) x data_sd, holds G*",
            lambda v: _rate(v["data_alone_hits"], M, v["data_alone_ci"])),
        row(f"noise part: the refit G within t({NOISE_KEYS - 1}) x sqrt(2) x noise_sd",
            lambda v: _rate(v["refit_hits"], M, v["refit_ci"])),
        "",
        "Rates with the Wilson 95 % interval of a binomial proportion. Each part alone is "
        "not meant to hold G*: the G a fit lands on moves with both the data and the fit's "
        "noise, and those rows show what leaving one part out costs. The last row tests the "
        "noise part on its own, against what it describes (nominal 0.95).",
        "",
        "Calibration at other levels (the same sd and dof with the level's t quantile, what "
        "`nd.uncertainty(..., level=...)` gives for this unbounded G):",
        "",
        "| level | " + " | ".join(VARIANT_NAMES[v] for v in VARIANTS) + " |",
        "|---|---|---|",
        cal,
        "",
        "## The reported sd against the spread of the fitted G",
        "",
        f"The fitted G over the {M} data sets: mean {s['G_mean']:.5f} (standard error "
        f"{s['bias_se']:.5f}; G* = {G_TRUE}, a bias of "
        f"{(s['G_mean'] - G_TRUE) / s['bias_se']:+.1f} standard errors), sd **{s['G_sd']:.5f}** "
        f"(an sd from {M} values has a relative standard error of about "
        f"{100 * s['G_sd_rel_se']:.0f} %). Its noise part, measured by the refits: "
        f"{s['noise_sd_empirical']:.5f}; the data part, the rest in variance: "
        f"{s['data_sd_empirical']:.5f}.",
        "",
        "| reported | " + " | ".join(VARIANT_NAMES[v] for v in VARIANTS) + " |",
        "|---|---|---|",
        row("sd: root mean square (mean)",
            lambda v: f"{v['sd_rms']:.5f} ({v['sd_mean']:.5f})"),
        row("sd: RMS / empirical sd of the fitted G",
            lambda v: f"**{v['sd_rms'] / s['G_sd']:.2f}**"),
        row("noise_sd: RMS / empirical (refits)",
            lambda v: f"{v['noise_sd_rms']:.5f} / {s['noise_sd_empirical']:.5f} = "
            f"{v['noise_ratio']:.2f}"),
        row("data_sd: RMS / empirical (total minus noise)",
            lambda v: f"{v['data_sd_rms']:.5f} / {s['data_sd_empirical']:.5f} = "
            f"{v['data_ratio']:.2f}"),
        row("sd: coefficient of variation over data sets", lambda v: f"{v['sd_cv']:.2f}"),
        row("Welch-Satterthwaite dof: median (range)",
            lambda v: f"{v['dof_median']:.1f} ({v['dof_range'][0]:.1f}-{v['dof_range'][1]:.1f})"),
        "",
        "The root mean square of the reported sd is the like-for-like comparison (the "
        "reported variances are unbiased estimates; an sd from 3-6 dof is biased low, so its "
        "plain mean sits below the truth even when the variances are right).",
        "",
        "## Checks of the derivatives",
        "",
        f"- `nd.check_gradient` of the fit's loss (first data set, the fit's key), before the "
        f"runs: {checks_text}.",
        f"- `nd.identifiability` at the first fit (G = {hess['G']:.5f}, loss "
        f"{hess['loss']:.5f}, gradient {hess['gradient']:.2e}): Hessian {hess['hessian']:.6g} "
        f"(forward-over-reverse), central differences of `jax.grad` {fd}: relative error "
        f"**{hess['relative_error']:.1e}**. Gauss-Newton information J^T J = "
        f"{hess['fisher']:.6g} ({hess['seconds']:.1f} s, compilation included).",
        "",
        "## Cost",
        "",
        f"Per repetition (median over repetitions 2-{M}; the first, with compilation, took "
        f"{sum(s['seconds_first'].values()):.1f} s): {rep_s:.1f} s, of which simulating the "
        f"data {sec['data']:.2f} s, the fit ({STEPS} steps) {sec['fit']:.1f} s, "
        f"`nd.uncertainty` {sec['uncertainty']:.1f} s (1 Hessian-vector product + "
        f"{NOISE_KEYS} + {RUNS} gradients; {sec['uncertainty_as_is']:.1f} s on the root as it "
        f"is) and the check refit ({REFIT_STEPS} steps) {sec['refit']:.1f} s. What a user "
        f"pays: the error bar adds {100 * sec['uncertainty'] / sec['fit']:.0f} % to the fit's "
        "time.",
        "",
        *why,
        "## What the intervals mean, and what they do not",
        "",
        "- They describe how far the fitted G would move with another noise realisation of "
        "the fit and with other runs drawn like these (same subject, same length, same "
        "model), to first order around the loss's minimum. That is what was varied here, and "
        "it is what the coverage measures.",
        "- They do **not** cover model misspecification: here the data come from the fitted "
        "model itself (same equations, delays, gamma, solver and monitor). Fitted to real "
        "data, a wrong model has a best G that no amount of data moves to a 'true' value, "
        "and the intervals say nothing about that gap; nor do they cover other subjects "
        "unless the left-out runs are subjects.",
        "- They rest on few replicates: 4 runs give the jackknife 3 dof and 4 keys give the "
        "sandwich 3; the Student-t quantile (about 2.4-3.2 here, against 1.96) pays for that "
        "with wide intervals, and a single reported sd is itself uncertain (the coefficient "
        "of variation above). Coverage holds on average over data sets, not for each one.",
        "- Both parts are linearisations (a Newton step for each left-out run, a sandwich "
        "for the noise): a loss far from quadratic over the interval breaks them"
        + (", as the rmse's root does when expanded as it is (above)" if short else "")
        + ". The fits here "
        "end within "
        f"{s['newton_over_sd_max']:.1e} sd of the minimum (the largest remaining Newton "
        "step), so convergence is not the cause.",
        "",
        "Raw numbers per repetition: `uncertainty.json`.",
    ]
    lines += C.machine_section(info, end_load)
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=REPS, help=f"data sets (default {REPS})")
    parser.add_argument("--diagnose", type=int, default=DIAGNOSE,
                        help="first data sets with the Hessian under each fresh key "
                             f"(default {DIAGNOSE})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(C.RESULTS / "uncertainty.md"))
    parser.add_argument("--no-write", action="store_true", help="print, write nothing")
    args = parser.parse_args()
    args.argv = [f"--reps {args.reps}" if args.reps != REPS else "",
                 f"--diagnose {args.diagnose}" if args.diagnose != DIAGNOSE else "",
                 f"--seed {args.seed}" if args.seed else ""]
    info = C.machine_info()
    wall = time.perf_counter()
    w, lengths, labels = connectome()
    truth = network(w, lengths, G_TRUE)
    simulate_runs = eqx.filter_jit(fc_loss(np.eye(NODES), RUNS).signals)

    checks = gradient_checks(truth, simulate_runs, args.seed)
    for c in checks:
        print(f"check_gradient at G {c['G']:.5f}: {c['gradient']:.6g} vs "
              f"{c['finite_difference_half']:.6g} (rel {c['relative_error']:.1e})", flush=True)
    rows = []
    for rep in range(args.reps):
        rows.append(repetition(rep, args.seed, truth, simulate_runs, rep < args.diagnose))
        r, a, b = rows[-1], rows[-1]["library"], rows[-1]["as_is"]
        print(f"{rep:3d} G {r['G']:.5f} refit {r['G_refit']:.5f} | library sd {a['sd']:.5f} "
              f"(noise {a['noise_sd']:.5f}, data {a['data_sd']:.5f}) hit "
              f"{a['lower'] <= G_TRUE <= a['upper']:d} | as-is sd {b['sd']:.5f} (noise "
              f"{b['noise_sd']:.5f}, data {b['data_sd']:.5f}) hit "
              f"{b['lower'] <= G_TRUE <= b['upper']:d} | {sum(r['seconds'].values()):.1f} s "
              f"({time.strftime('%H:%M:%S')}, load {C.loadavg()})", flush=True)
    hess = hessian_check(truth, simulate_runs, args.seed, rows[0]["G"])
    print(f"identifiability: H {hess['hessian']:.6g}, FD {hess['finite_difference']}, "
          f"rel {hess['relative_error']:.1e}", flush=True)
    s = summarise(rows)
    wall = time.perf_counter() - wall
    print(json.dumps(s, indent=1))
    if args.no_write:
        return
    end_load = C.loadavg()
    out = Path(args.out)
    settings = {k: globals()[k] for k in (
        "NODES", "SPEED", "GAMMA", "SIGMA", "G_TRUE", "START", "DT", "PERIOD", "DURATION",
        "BURN_IN", "RUNS", "REALISATIONS", "NOISE_KEYS", "STEPS", "LR", "REFIT_STEPS",
        "REFIT_LR", "LEVEL")}
    out.with_suffix(".json").write_text(json.dumps(
        {"settings": {**settings, "seed": args.seed, "reps": args.reps,
                      "diagnose": args.diagnose},
         "machine": info, "wall_seconds": wall, "gradient_checks": checks,
         "hessian_check": hess, "summary": s, "repetitions": rows}, indent=1))
    out.write_text(report(args, info, labels, w, lengths, checks, hess, rows, s, wall,
                          end_load), encoding="utf-8")
    print(f"wrote {out} (and .json)")


if __name__ == "__main__":
    main()
