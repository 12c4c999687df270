"""Coverage of ``nd.uncertainty``'s intervals for a known parameter: writes tables to
benchmarks/uncertainty.md and the raw numbers to benchmarks/uncertainty.json.

A noisy linear network (``nd.LinearDynamics``, ``nd.DelayedLinear(G*)``, additive noise) on
10 regions of the embedded HCP connectome. Each repetition draws a data set at G*, fits G
(``nd.fit``, ``nd.FcLoss`` ``"rmse"``) and takes ``nd.uncertainty``'s interval on the fit's
loss (which the library squares) and on ``AsIs(loss)`` (expanded as the root); a refit with
another noise key measures the noise part. Also ``nd.check_gradient`` on the first data set
and ``nd.identifiability``'s Hessian at the first fit against central differences.

``--metric`` other than ``rmse`` (``netdyn fit``'s ``1-r+huber``): the same problem with that
``nd.FcLoss`` metric, the library's interval only, written to benchmarks/uncertainty_loss.md:
how often the intervals hold G* at several levels, the reported sd against the spread.

    python scripts/studies/bench_uncertainty.py                   # ~15 min, 1-2 CPU cores
    python scripts/studies/bench_uncertainty.py --metric 1-r+huber  # ~12 min, 1 core
    python scripts/studies/bench_uncertainty.py --smoke            # 2 data sets
    python scripts/studies/bench_uncertainty.py --from-json benchmarks/uncertainty.json
"""

import math
import statistics
import time

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402

# ----------------------------------------------------------------------- the problem

SCRIPT = "studies/bench_uncertainty.py"
NODES = 10  # the first 10 regions of the embedded hcp connectome (frontal, both sides)
SPEED = 4.0  # mm/ms
GAMMA = -0.1  # 1/ms: a 10 ms time constant
SIGMA = 0.05  # additive noise; the FC of a linear network does not depend on it
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


def connectome(nodes: int = NODES):
    """``(weights / spectral radius, lengths, labels)`` of the first ``nodes`` regions."""
    data = nd.datasets.load("hcp")
    w = np.asarray(data.weights, float)[:nodes, :nodes]
    lengths = np.asarray(data.lengths, float)[:nodes, :nodes]
    return w / np.max(np.abs(np.linalg.eigvals(w))), lengths, list(data.labels[:nodes])


def network(w, lengths, G):
    return nd.Network(nd.LinearDynamics(gamma=GAMMA), nd.DelayedLinear(G=jnp.asarray(G)),
                      nd.DelayGraph.from_lengths(w, lengths, SPEED),
                      noise=nd.AdditiveNoise(sigma=SIGMA))


def fc_loss(target, realisations=REALISATIONS, metric="rmse"):
    return nd.FcLoss(target, nd.Heun(), nd.TemporalAverage(period=PERIOD), duration=DURATION,
                     dt=DT, burn_in=BURN_IN, realisations=realisations, metric=metric)


def streams(seed: int, rep: int) -> dict:
    """Independent keys of one repetition: data, fit, uncertainty's noise keys, refit."""
    root = jax.random.key(seed)
    key = {name: jax.random.fold_in(jax.random.fold_in(root, i), rep)
           for i, name in enumerate(("data", "fit", "noise", "refit"))}
    key["noise"] = list(jax.random.split(key["noise"], NOISE_KEYS))
    return key


class AsIs(eqx.Module):
    """A loss passed through unchanged, in a module that is not an ``nd.FcLoss``:
    ``nd.uncertainty`` then expands the rmse itself rather than its square."""

    loss: nd.FcLoss

    def __call__(self, model, key):
        return self.loss(model, key)


def _fit(loss, start, key, optimizer, steps):
    """``(fitted, G, loss, gradient at the kept point)``: ``nd.fit`` keeping the best row."""
    fitted, history = nd.fit(start, loss, optimizer, where=WHERE, steps=steps, key=key,
                             keep="best")
    best = history.best_step()
    return fitted, float(WHERE(fitted)), float(history.loss[best]), float(history.grad_norm[best])


def _plain(u) -> dict:
    """One ``nd.Uncertainty`` of the single coordinate G, as numbers."""
    return {"sd": float(u.sd[0]), "noise_sd": float(u.noise_sd[0]),
            "data_sd": float(u.data_sd[0]), "lower": float(u.lower[0]),
            "upper": float(u.upper[0]), "dof": float(u.dof[0]),
            "hessian": float(u.hessian_eigenvalues[0]), "valid": u.valid, "note": u.note}


def repetition(rep, seed, truth, simulate_runs, diagnose: bool, metric: str = "rmse") -> dict:
    """One data set: simulate, fit, ``nd.uncertainty`` on the loss and (``rmse``) on
    ``AsIs(loss)``, the check refit (each timed); ``diagnose``: the Hessian under each fresh
    key (not timed). Another ``metric``: the library's interval alone."""
    key = streams(seed, rep)
    t = [time.perf_counter()]
    runs = list(np.asarray(simulate_runs(truth, key["data"])))
    loss = fc_loss(nd.runs_fc(runs), metric=metric)
    t.append(time.perf_counter())
    start = eqx.tree_at(WHERE, truth, jnp.asarray(START * G_TRUE))
    fitted, G, loss_value, grad = _fit(loss, start, key["fit"], OPT, STEPS)
    t.append(time.perf_counter())
    leave = [loss.replace(target=nd.runs_fc(runs[:r] + runs[r + 1:])) for r in range(RUNS)]
    u = nd.uncertainty(loss, fitted, WHERE, key=key["fit"], noise_keys=key["noise"],
                       leave_one_out=leave, level=LEVEL)
    t.append(time.perf_counter())
    if metric != "rmse":
        return {"rep": rep, "G": G, "loss": loss_value, "grad": grad, **_plain(u),
                "seconds": {"fit": t[2] - t[1], "uncertainty": t[3] - t[2]}}
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


def _first(truth, simulate_runs, seed):
    """The first repetition's keys and loss."""
    key = streams(seed, 0)
    return key, fc_loss(nd.runs_fc(list(np.asarray(simulate_runs(truth, key["data"])))))


def gradient_checks(truth, simulate_runs, seed) -> list[dict]:
    """``nd.check_gradient`` of the first data set's loss (fit key) at the start and at G*."""
    key, loss = _first(truth, simulate_runs, seed)
    out = []
    for factor in (START, 1.0):
        model = eqx.tree_at(WHERE, truth, jnp.asarray(factor * G_TRUE))
        c = nd.check_gradient(loss, model, WHERE, key=key["fit"], direction=jnp.asarray(1.0),
                              step=1e-5)
        out.append({"G": factor * G_TRUE, **{k: getattr(c, k) for k in (
            "gradient", "finite_difference", "finite_difference_half", "step",
            "relative_error", "settled", "agree")}})
    return out


def hessian_check(truth, simulate_runs, seed, G_fit) -> dict:
    """``nd.identifiability`` at the first repetition's fit; its Hessian against central
    differences of ``jax.grad`` (same key)."""
    key, loss = _first(truth, simulate_runs, seed)
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


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score 95 % interval of a binomial proportion."""
    if n == 0:
        return (math.nan, math.nan)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half, centre + half)


def coverage(G, sd, dof) -> dict:
    """At each of ``LEVELS``: how many of the intervals ``t quantile x sd`` hold G*."""
    out = {}
    for level in LEVELS:
        q = np.array([nd.t_quantile((1 + level) / 2, d) for d in dof])
        hits = int(np.sum(np.abs(G - G_TRUE) <= q * sd))
        out[str(level)] = {"hits": hits, "coverage": hits / len(G), "ci": wilson(hits, len(G))}
    return out


VARIANTS = ("library", "as_is")
VARIANT_NAMES = {"library": "library (rmse squared)", "as_is": "as is (root)"}


def _variant(rows: list[dict], v: str, emp_noise: float, emp_data: float) -> dict:
    """Coverage and reported spreads of one variant of ``nd.uncertainty``."""
    M = len(rows)
    G = np.array([r["G"] for r in rows])
    sd, nsd, dsd, dof = (np.array([r[v][k] for r in rows])
                         for k in ("sd", "noise_sd", "data_sd", "dof"))
    hits = int(sum(r[v]["lower"] <= G_TRUE <= r[v]["upper"] for r in rows))
    q_noise = nd.t_quantile((1 + LEVEL) / 2, NOISE_KEYS - 1)
    q_data = nd.t_quantile((1 + LEVEL) / 2, RUNS - 1)
    diff = np.array([r["G"] - r["G_refit"] for r in rows])
    part = {"noise_alone": np.abs(G - G_TRUE) <= q_noise * nsd,
            "data_alone": np.abs(G - G_TRUE) <= q_data * dsd,
            # the noise part against what it describes: the refit with another noise key
            "refit": np.abs(diff) <= q_noise * math.sqrt(2) * nsd}
    out = {"hits": hits, "coverage": hits / M, "ci": wilson(hits, M),
           "valid": int(sum(r[v]["valid"] for r in rows)), "calibration": coverage(G, sd, dof),
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


def _rate(hits: int, M: int, ci) -> str:
    return f"{hits} / {M} = {hits / M:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _table(title: str, header: tuple, rows: list) -> list[str]:
    """A section holding one table."""
    return [f"## {title}", "", *H.table(header, rows), ""]


def report(data: dict) -> str:
    """The markdown of a run with ``rmse`` from its measurements. Cells: templates filled
    from the settings, the summary (a variant's own in its column) and a few figures derived
    here."""
    p, s, hess = data["settings"], data["summary"], data["hessian_check"]
    M, g, gamma = s["M"], p["G_TRUE"], p["GAMMA"]
    w, lengths, labels = connectome(p["NODES"])
    delays = lengths[w > 0] / p["SPEED"]
    sec, first = s["seconds_median"], s["seconds_first"]
    ns = {**p, **s, "hess": hess, "labels": ", ".join(labels), "d0": delays.min(),
          "d1": delays.max(), "crit": -gamma, "crit_pct": 100 * g / -gamma, "tau": -1 / gamma,
          "slow": -1 / (gamma + g), "kd": p["NOISE_KEYS"] - 1, "rd": p["RUNS"] - 1,
          "start": p["START"] * g, "rel_se": 100 * s["G_sd_rel_se"],
          "bias": (s["G_mean"] - g) / s["bias_se"],
          "fd": ", ".join(f"{v:.6g} (h = {float(k):g})"
                          for k, v in hess["finite_difference"].items())}
    parts = ("", "noise_alone_", "data_alone_", "refit_")
    cols = [{**v, "ratio": v["sd_rms"] / s["G_sd"],
             **{f"{x}rate": _rate(v[f"{x}hits"], M, v[f"{x}ci"]) for x in parts}}
            for v in (s["variants"][v] for v in VARIANTS)]
    one = lambda label, cell: (label.format(**ns), cell.format(**ns))  # noqa: E731
    both = lambda label, cell: (label.format(**ns),  # noqa: E731
                                *(cell.format(**ns, **v) for v in cols))
    argv = [f"--reps {p['reps']}" if p["reps"] != REPS else "",
            f"--diagnose {p['diagnose']}" if p["diagnose"] != DIAGNOSE else "",
            f"--seed {p['seed']}" if p["seed"] else ""]
    names = tuple(VARIANT_NAMES.values())
    lines = [
        "# Coverage of `nd.uncertainty`'s intervals for a known G*", "",
        f"`{C.command(SCRIPT, *argv)}`: {data['wall_seconds'] / 60:.1f} min wall time.", "",
        *_table("Settings", ("setting", "value"), [
            one("model", "`nd.LinearDynamics`, `nd.DelayedLinear(G)`, `nd.AdditiveNoise`"),
            one("nodes", "{NODES}, embedded `hcp` ({labels})"),
            one("weights; delays", "/ spectral radius; tract length / {SPEED:g} mm/ms = "
                "{d0:.1f}-{d1:.1f} ms"),
            one("G* (fitted: G)", "{G_TRUE} ({crit_pct:.0f} % of the critical {crit:g}; "
                "slowest mode {slow:.0f} ms)"),
            one("gamma; sigma", "{GAMMA} /ms ({tau:g} ms); {SIGMA}"),
            one("dt; monitor", "{DT:g} ms, Heun; `nd.TemporalAverage(period={PERIOD:g})`"),
            ("runs x duration; burn-in",
             f"{p['RUNS']} x {p['DURATION'] / 1000:g} s; {p['BURN_IN'] / 1000:g} s"),
            one("loss; realisations", "`nd.FcLoss(..., metric=\"rmse\")`; {REALISATIONS}"),
            one("noise keys; left-out runs", "{NOISE_KEYS}; {RUNS}"),
            one("fit: steps, lr", "{STEPS}, `nd.backtrack(optax.adam({LR:g}))`, keep=\"best\""),
            one("start", "{START} G* = {start:.5f}"),
            one("refit check: steps, lr", "{REFIT_STEPS}, {REFIT_LR:g}, from the fitted G"),
            one("level", "{LEVEL}"),
            one("repetitions (with fresh-key Hessians); seed", "{reps} ({diagnose}); {seed}")]),
        f"{names[0]}: `nd.uncertainty(loss, ...)` on the fit's rmse `FcLoss`, which it squares; "
        f"{names[1]}: on `AsIs(loss)`, expanded as the root (why: `nd.uncertainty`'s docstring).",
        "", *_table("Coverage: hits / data sets = rate [Wilson 95 %]", ("", *names), [
            both(f"{100 * p['LEVEL']:g} % interval holds G*", "**{rate}**"),
            both("`valid`", "{valid} / {M}"),
            both("noise alone: t({kd}) x noise_sd holds G*", "{noise_alone_rate}"),
            both("data alone: t({rd}) x data_sd holds G*", "{data_alone_rate}"),
            both("refit check: G - G_refit within t({kd}) x sqrt(2) x noise_sd", "{refit_rate}")]),
        *_table("Calibration: the same sd and dof, the level's t quantile", ("level", *names), [
            (f"{float(level):.2f}", *(_rate(v["calibration"][level]["hits"], M,
                                            v["calibration"][level]["ci"]) for v in cols))
            for level in cols[0]["calibration"]]),
        *_table("Fitted G over the {M} data sets".format(**ns), ("quantity", "value"), [
            one("mean (G*)", "{G_mean:.5f} ({G_TRUE})"),
            one("standard error; bias / standard error", "{bias_se:.5f}; {bias:+.1f}"),
            one("sd (its relative standard error)", "**{G_sd:.5f}** ({rel_se:.0f} %)"),
            one("noise sd: rms(G - G_refit) / sqrt(2)", "{noise_sd_empirical:.5f}"),
            one("data sd: sqrt(sd^2 - noise sd^2)", "{data_sd_empirical:.5f}"),
            one("data's mean FC: mean (sd)", "{data_mean_fc:.3f} ({data_mean_fc_sd:.3f})"),
            one("largest remaining Newton step / sd: fit; refit",
                "{newton_over_sd_max:.1e}; {newton_refit_over_sd_max:.1e}"),
            one("rmse at the fits: range", "{loss_min_range[0]:.3f}-{loss_min_range[1]:.3f}"),
            one("sqrt(rmse / H), H the rmse's curvature: median", "{quadratic_width_median:.5f}"),
            one("H at the fit's key / mean H at the fresh keys: mean (range)",
                "{hessian_fit_over_fresh_mean:.1f} ({hessian_fit_over_fresh_range[0]:.1f}-"
                "{hessian_fit_over_fresh_range[1]:.1f})"),
            one("data sets with a fresh key's H <= 0",
                "{fresh_hessian_negative} / {fresh_hessian_reps}")]),
        *_table("Reported sd", ("quantity", *names), [
            both("sd: RMS (mean)", "{sd_rms:.5f} ({sd_mean:.5f})"),
            both("sd RMS / fitted G's sd", "**{ratio:.2f}**"),
            both("noise_sd RMS / noise sd",
                 "{noise_sd_rms:.5f} / {noise_sd_empirical:.5f} = {noise_ratio:.2f}"),
            both("data_sd RMS / data sd",
                 "{data_sd_rms:.5f} / {data_sd_empirical:.5f} = {data_ratio:.2f}"),
            both("sd: coefficient of variation", "{sd_cv:.2f}"),
            both("dof (Welch-Satterthwaite): median (range)",
                 "{dof_median:.1f} ({dof_range[0]:.1f}-{dof_range[1]:.1f})")]),
        *_table("Derivative checks: first data set, the fit's key",
                ("check", "G", "jax", "central differences", "relative error"), [
            *((f"`nd.check_gradient`{'' if c['agree'] else ' (**not agreeing**)'}",
               f"{c['G']:.5f}", f"{c['gradient']:.6g}", f"{c['finite_difference']:.6g} (h = "
               f"{c['step']:g}), {c['finite_difference_half']:.6g} (h / 2)",
               f"{c['relative_error']:.1e}") for c in data["gradient_checks"]),
            one("`nd.identifiability` Hessian (loss {hess[loss]:.5f}, gradient "
                "{hess[gradient]:.2e}; J^T J {hess[fisher]:.6g}; {hess[seconds]:.1f} s)",
                "{hess[G]:.5f} | {hess[hessian]:.6g} | {fd} | **{hess[relative_error]:.1e}**")]),
        *_table(f"Cost: seconds per repetition (median over 2-{M}; the first, compiling)",
                ("part", "median", "first"), [
            *((name, f"{sec[k]:.{d}f}", f"{first[k]:.{d}f}") for k, name, d in (
                ("data", "simulate the data", 2), ("fit", f"fit ({p['STEPS']} steps)", 1),
                ("uncertainty", f"`nd.uncertainty`, {names[0]}", 1),
                ("uncertainty_as_is", f"`nd.uncertainty`, {names[1]}", 1),
                ("refit", f"refit check ({p['REFIT_STEPS']} steps)", 1))),
            ("total", *(f"{sum(x.values()):.1f}" for x in (sec, first))),
            ("`nd.uncertainty` / fit",
             *(f"{100 * x['uncertainty'] / x['fit']:.0f} %" for x in (sec, first)))]),
        "Raw numbers per repetition: `uncertainty.json`.",
    ]
    return "\n".join(lines + H.machine(data)) + "\n"


# ------------------------------------------- another metric: the library's interval alone


def loss_summary(rows: list[dict]) -> dict:
    """Coverage at each of ``LEVELS`` and the reported sd against the fitted G's spread."""
    G = np.array([r["G"] for r in rows])
    sd, dof = np.array([r["sd"] for r in rows]), np.array([r["dof"] for r in rows])
    spread = float(np.std(G, ddof=1))
    return {"reps": len(rows), "valid": int(sum(r["valid"] for r in rows)),
            "levels": coverage(G, sd, dof),
            "G_mean": float(G.mean()), "G_spread": spread,
            "sd_rms": float(np.sqrt(np.mean(sd**2))),
            "sd_over_spread": float(np.sqrt(np.mean(sd**2))) / spread,
            "noise_sd_rms": float(np.sqrt(np.mean([r["noise_sd"] ** 2 for r in rows]))),
            "data_sd_rms": float(np.sqrt(np.mean([r["data_sd"] ** 2 for r in rows]))),
            "max_grad": float(np.max(np.abs([r["grad"] for r in rows]))),
            # how far each kept point is from the minimum, in reported sds
            "newton_over_sd_max": float(np.max([abs(r["grad"] / r["hessian"]) / r["sd"]
                                                for r in rows])),
            "seconds_fit": float(np.mean([r["seconds"]["fit"] for r in rows])),
            "seconds_uncertainty": float(np.mean([r["seconds"]["uncertainty"] for r in rows]))}


def loss_report(m: dict) -> str:
    """The markdown of a run with another metric (benchmarks/uncertainty_loss.md)."""
    p, s = m["settings"], m["summary"]
    metric, reps = p["metric"], s["reps"]
    return "\n".join([
        f"# Interval coverage with the `{metric}` loss", "",
        f"Written by `{C.command(SCRIPT, f'--metric {metric}', f'--reps {reps}')}`"
        f" in {m['wall_seconds']:.0f} s. The problem of "
        f"`uncertainty.md` (a noisy linear network on 10 regions, known G* = {G_TRUE}, data "
        f"sets of {RUNS} runs of {DURATION / 1000:g} s, fit from {START} G*, {NOISE_KEYS} "
        f"fresh noise keys, each run left out), with `nd.FcLoss(..., metric=\"{metric}\")`.", "",
        *H.table(("level", "intervals holding G*", "coverage", "95 % CI of the coverage"), [
            (level, f"{c['hits']}/{reps}", f"{c['coverage']:.3f}",
             f"[{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]") for level, c in s["levels"].items()]), "",
        "| | |", "|---|---|", *(f"| {a} | {b} |" for a, b in [
            ("valid (at a minimum)", f"{s['valid']}/{reps}"),
            ("fitted G: mean, spread (sd over data sets)",
             f"{s['G_mean']:.5f}, {s['G_spread']:.5f}"),
            ("reported sd (rms) / spread",
             f"{s['sd_rms']:.5f} / {s['G_spread']:.5f} = {s['sd_over_spread']:.2f}"),
            ("noise part, data part (rms)", f"{s['noise_sd_rms']:.5f}, {s['data_sd_rms']:.5f}"),
            ("largest gradient at the kept point; its Newton step in reported sds",
             f"{s['max_grad']:.2e}; {s['newton_over_sd_max']:.2e}"),
            ("seconds per fit, per `nd.uncertainty`",
             f"{s['seconds_fit']:.1f}, {s['seconds_uncertainty']:.1f}")]),
        "", "Raw numbers per repetition: `uncertainty_loss.json`.", *H.machine(m)]) + "\n"


# ------------------------------------------------------------------------------ driver


def measure(args) -> dict:
    """Simulate, fit, summarise (``--metric rmse``: both variants, the checks)."""
    if args.smoke:
        args.reps, args.diagnose = min(args.reps, 2), min(args.diagnose, 1)
    wall = time.perf_counter()
    truth = network(*connectome()[:2], G_TRUE)
    simulate_runs = eqx.filter_jit(fc_loss(np.eye(NODES), RUNS, args.metric).signals)
    settings = {"seed": args.seed, "reps": args.reps, "metric": args.metric}
    rmse = args.metric == "rmse"
    checks = gradient_checks(truth, simulate_runs, args.seed) if rmse else None
    rows = []
    for rep in range(args.reps):
        rows.append(r := repetition(rep, args.seed, truth, simulate_runs,
                                    rmse and rep < args.diagnose, args.metric))
        sd = f"{r['library']['sd']:.5f} / {r['as_is']['sd']:.5f}" if rmse else f"{r['sd']:.5f}"
        print(f"{rep:3d} G {r['G']:.5f}, sd {sd}, {sum(r['seconds'].values()):.1f} s, load "
              f"{C.loadavg()}", flush=True)
    if not rmse:
        return {"settings": settings, "wall_seconds": time.perf_counter() - wall,
                "summary": loss_summary(rows), "repetitions": rows}
    hess = hessian_check(truth, simulate_runs, args.seed, rows[0]["G"])
    s = summarise(rows)
    constants = {k: globals()[k] for k in (
        "NODES SPEED GAMMA SIGMA G_TRUE START DT PERIOD DURATION BURN_IN RUNS REALISATIONS "
        "NOISE_KEYS STEPS LR REFIT_STEPS REFIT_LR LEVEL").split()}
    return {"settings": {**constants, **settings, "diagnose": args.diagnose},
            "wall_seconds": time.perf_counter() - wall, "gradient_checks": checks,
            "hessian_check": hess, "summary": s, "repetitions": rows}


def render(m: dict) -> str:
    """The report of either protocol."""
    return report(m) if m["settings"].get("metric", "rmse") == "rmse" else loss_report(m)


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--reps", type=int, default=REPS, help=f"data sets (default {REPS})")
    p.add_argument("--diagnose", type=int, default=DIAGNOSE, help="first data sets with "
                   f"the Hessian under each fresh key (default {DIAGNOSE}; rmse only)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--metric", default="rmse", choices=("rmse", "1-r", "1-r+mean", "1-r+huber"),
                   help="the FcLoss metric (other than rmse: benchmarks/uncertainty_loss.md)")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, options=options,
           name=lambda a: "uncertainty" if a.metric == "rmse" else "uncertainty_loss")
