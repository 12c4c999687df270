"""Regional heterogeneity fitted on the analytic FC: how fast, and does it hold when simulated?
Writes benchmarks/heterogeneity_linear.md (and .json, .png).

The problem of ``scripts/benchmarks/bench_heterogeneity.py`` (its model, split and
parameterisations, k = 10 and 81, and k = 161 with a recurrent-excitation deviation per
region) with ``nd.LinearFcLoss`` (the FC of the model linearised at its stable fixed
point: noise-free, exact gradients, no simulation) in place of ``nd.FcLoss``: netdyn's
gradient fit (backtracking Adam, until the loss stops falling) and CMA-ES on that loss
(populations in one ``vmap``), each end point then simulated (the full delayed, noisy
model) with 3 held-out noise sets and scored on the test runs.

    taskset -c 0 python scripts/studies/bench_heterogeneity_linear.py   # ~25 min, one core
    python scripts/studies/bench_heterogeneity_linear.py --smoke

One pinned core is recommended on a shared 2-core machine (see the report's machine
notes). Needs ``pip install cma``.
"""

import json
import math
import os
import time
from pathlib import Path

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import bench_heterogeneity as B  # its problem, methods and scoring (and float64)
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import netdyn as nd

# Adam step sizes (absolute units): G, the w_p deviations, and the gains per k (map
# coefficients of z-scored maps move every region at once: a fifth of the regional step)
LINEAR_LR = {"G": 0.01, "w_p": 0.03, "gain": {10: 0.02, 81: 0.1, 161: 0.1}}
CMA_SCALE_WP = 0.03  # CMA-ES's scaled coordinate of the w_p deviations
LINEAR_FULL = {"ks": [10, 81, 161], "cma_ks": [10, 81], "chunk": 25, "tol": 0.01,
               "max_steps": 400, "cma_budget": 300.0, "cma_scale_gain": 0.5,
               "heldout_sets": 3, "heldout_duration": 288_000.0,
               "heldout_realisations": 4, "burn_in": 57_600.0, "fcd": [83, 3]}
LINEAR_QUICK = {"ks": [10, 81], "cma_ks": [10, 81], "chunk": 3, "tol": 0.01,
                "max_steps": 6, "cma_budget": 15.0, "cma_scale_gain": 0.5,
                "heldout_sets": 2, "heldout_duration": 28_800.0,
                "heldout_realisations": 1, "burn_in": 7_200.0, "fcd": [20, 3]}
BOLD = nd.Bold(period=720.0, variables="S_e")


def linear_problem(k: int, data, s):
    """``(network, analytic loss, simulated held-out loss, train, test)`` for ``k``
    (161: k = 81's network with ``w_p`` a ``nd.RegionalDeviation`` too)."""
    sim = {"duration": s["heldout_duration"], "burn_in": s["burn_in"],
           "realisations": s["heldout_realisations"]}
    net, heldout_loss, train, test = B.problem(81 if k == 161 else k, data, sim)
    if k == 161:
        wp = nd.RegionalDeviation(net.dynamics.w_p, jnp.zeros(net.graph.weights.weights.shape[0]))
        net = eqx.tree_at(lambda n: n.dynamics.w_p, net, wp)
    loss = nd.LinearFcLoss(nd.runs_fc(train), BOLD, metric="1-r+huber")
    return net, loss, heldout_loss, train, test


def theta_where(k: int):
    """``nd.fit``'s ``where`` for ``k``, and the step-size label of each leaf."""
    if k == 161:
        return (lambda n: (n.coupling.G, B.gain_leaf(n), n.dynamics.w_p.deviations),
                ["G", "gain", "w_p"])
    return lambda n: (n.coupling.G, B.gain_leaf(n)), ["G", "gain"]


def theta_of(net, k: int) -> dict:
    where, labels = theta_where(k)
    return {name: np.asarray(v) for name, v in zip(labels, where(net), strict=True)}


def analytic_scores(net, theta, train, test) -> dict:
    """What the analytic FC of ``theta`` says: its r with the test and training runs' FC,
    its mean, the spectral abscissa."""
    iu = np.triu_indices(len(train[0][0]), 1)
    try:
        result = nd.linear_fc(nd.resolve_parameters(B.with_theta(net, jax.tree.map(
            jnp.asarray, theta))), BOLD)
        fc = np.asarray(result.fc)
    except B.RUN_ERRORS as e:
        return {"error": type(e).__name__}
    return {"test_r": float(np.corrcoef(fc[iu], nd.runs_fc(test)[iu])[0, 1]),
            "train_r": float(np.corrcoef(fc[iu], nd.runs_fc(train)[iu])[0, 1]),
            "mean_fc": float(fc[iu].mean()), "abscissa": float(result.abscissa),
            "fixed_point_S_e": np.asarray(result.fixed_point)[0]}


def linear_gradient_fit(net, loss, k: int, s: dict, folder: Path) -> dict:
    """``nd.fit`` with ``nd.backtrack`` (Adam, ``LINEAR_LR``) in chunks of ``s["chunk"]``
    steps (resumed from a checkpoint: one compilation), until the best loss fell by less
    than ``s["tol"]`` (relative) over the last chunk, or ``s["max_steps"]``."""
    where, labels = theta_where(k)
    lr = {**LINEAR_LR, "gain": LINEAR_LR["gain"][k]}
    opt = nd.backtrack(optax.multi_transform(
        {name: optax.adam(lr[name]) for name in labels}, labels))
    checkpoint = folder / f"linear_fit_{k}.ckpt"
    checkpoint.unlink(missing_ok=True)
    key, steps = jax.random.key(0), 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        steps += s["chunk"]
        fitted, h = nd.fit(net, loss, opt, where=where, steps=steps, key=key, keep="best",
                           checkpoint=nd.Checkpoint(checkpoint, every=s["chunk"], resume=True))
        best = np.minimum.accumulate(np.where(np.isfinite(h.loss), h.loss, np.inf))
        before = best[-s["chunk"] - 1] if steps > s["chunk"] else best[0]
        print(f"  gradient k = {k}: {steps} steps, {time.perf_counter() - start:6.1f} s, "
              f"best loss {best[-1]:.4f} (load {os.getloadavg()[0]:.1f})", flush=True)
        flat = steps > s["chunk"] and before - best[-1] < s["tol"] * best[-1]
        if flat or steps >= s["max_steps"]:
            break
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    checkpoint.unlink(missing_ok=True)
    bs = h.best_step()
    t = np.cumsum(h.wall_time)
    trace = [{"t": float(ti), "loss": float(li), "best": float(bi)}
             for ti, li, bi in zip(t, h.loss, best, strict=True)]
    return {"method": "gradient (backtracking Adam)", "unit": "steps", "evaluations": steps,
            "seconds": seconds, "cpu_seconds": cpu, "first_call": float(h.wall_time[0]),
            "median_step": float(np.median(h.wall_time[1:])), "best_loss": float(h.loss[bs]),
            "fit_r": float(h.metrics["fc_r"][bs]), "abscissa": float(h.metrics["abscissa"][bs]),
            "rejected": int(np.sum(np.diff(best) == 0)), "best_theta": theta_of(fitted, k),
            "trace": trace, "history": h, "fitted": fitted}


def gradient_check(net, loss, k: int, history, fitted) -> dict:
    """``nd.check_gradient`` at the start along the fit's first step, and at the end
    point along its last accepted step (unit directions, step 1e-3)."""
    where, labels = theta_where(k)
    names = list(history.params)
    out = {}
    rows = np.flatnonzero(np.diff(history.loss) < 0)  # steps that lowered the loss
    for label, model, (a, b) in (("start", net, (0, 1)),
                                 ("end", fitted, (rows[-1], rows[-1] + 1) if len(rows) else
                                  (0, 1))):
        d = [np.asarray(history.params[n][b] - history.params[n][a]) for n in names]
        norm = math.sqrt(sum(float(np.sum(v * v)) for v in d))
        c = nd.check_gradient(loss, model, where, direction=tuple(v / norm for v in d),
                              step=1e-3, key=jax.random.key(0))
        out[label] = {"gradient": c.gradient, "fd": c.finite_difference,
                      "fd_half": c.finite_difference_half,
                      "relative_error": c.relative_error, "agree": bool(c.agree)}
        print(f"  gradient check k = {k} ({label}): {c.gradient:.6g} against "
              f"{c.finite_difference_half:.6g} ({'agree' if c.agree else 'DISAGREE'})",
              flush=True)
    return out


@eqx.filter_jit
def _population(thetas, net, loss):
    """The analytic loss of every candidate, in one ``vmap``."""
    return jax.vmap(lambda th: loss(B.with_theta(net, th))[0])(thetas)


def linear_cma(net, loss, k: int, s: dict, level: float, cma) -> dict:
    """CMA-ES on the analytic loss, each generation evaluated in one ``vmap`` (one
    candidate at a time where the batch raises), until it reaches ``level`` or
    ``s["cma_budget"]`` seconds."""
    def batch(thetas, trace):
        try:
            values = np.asarray(_population(jax.tree.map(lambda *v: jnp.stack(v), *thetas),
                                            net, loss))
        except B.RUN_ERRORS:
            values = []
            for th in thetas:
                try:
                    values.append(float(B.forward(th, net, loss, None)[0]))
                except B.RUN_ERRORS:
                    values.append(math.nan)
        return [trace.add(v, {}, th) for th, v in zip(thetas, values, strict=True)]

    scales = {"G": B.CMA_SCALE_G, "gain": s["cma_scale_gain"], "w_p": CMA_SCALE_WP}
    return B.cma_search(k, scales, s["cma_budget"], batch, cma, level, batched=True)


LEFT = 0.05  # a run left the fixed point: some region's mean S_e this far from S_e*


def heldout_sets(net, heldout_loss, theta, train, test, s: dict, fixed_se=None) -> dict:
    """``theta`` simulated with ``s["heldout_sets"]`` noise sets (keys 10000, 10001, ...),
    each scored on the test runs and the training runs: per set, and mean and sd. With
    ``fixed_se`` (the analytic FC's fixed point, S_e per region): the same runs' S_e
    (averaged over each TR) too, and how many runs left that fixed point (a region's mean
    S_e more than ``LEFT`` from it) and the largest departure."""
    states = heldout_loss.replace(monitor=nd.TemporalAverage(period=720.0, variables="S_e"))
    model = B.with_theta(net, jax.tree.map(jnp.asarray, theta))
    window, step = s["fcd"]
    sets = []
    for i in range(s["heldout_sets"]):
        t = time.perf_counter()
        key = jax.random.key(10_000 + i)
        x = B.simulate(heldout_loss, model, key)
        if isinstance(x, dict):
            return x
        sets.append({"test": nd.score_runs(x, test, train=train, fcd_window=window, fcd_step=step),
                     "train": nd.score_runs(x, train), "seconds": time.perf_counter() - t})
        if fixed_se is not None:
            departure = np.max(np.abs(np.asarray(B._signals(states, model, key)).mean(axis=1)
                                      - np.asarray(fixed_se)), axis=-1)  # per run
            sets[-1]["departure"] = departure.tolist()
    summary = {}
    for side in ("test", "train"):
        for m in ("fc_r", "fraction_of_ceiling", "mean_fc", "saturation", "fcd_ks"):
            values = [st[side][m] for st in sets if m in st[side]]
            if values:
                summary[f"{side}_{m}"] = [float(np.mean(values)), float(np.std(values))]
    summary["empirical_mean_fc"] = sets[0]["test"]["empirical_mean_fc"]
    if fixed_se is not None:
        departures = np.concatenate([st["departure"] for st in sets])
        summary["left_fixed_point"] = [int(np.sum(departures > LEFT)), int(departures.size)]
        summary["max_departure"] = float(np.max(departures))
    return {"sets": sets, "summary": summary}


def measure_linear(data, s: dict, cma, folder: Path) -> dict:
    """Every fit of the analytic section, its gradient check (k = 81), CMA-ES and the
    held-out simulations."""
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "load_at_start": C.loadavg(), "settings": s, "lr": LINEAR_LR, "results": []}
    net0, _, heldout_loss, train, test = linear_problem(81, data, s)
    theta0 = jax.tree.map(np.asarray, B.start_theta(81))
    out["ceiling"] = nd.noise_ceiling(train, test)
    print("held-out simulation of the homogeneous start", flush=True)
    analytic = analytic_scores(net0, theta0, train, test)
    out["start"] = {"analytic": analytic,
                    "heldout": heldout_sets(net0, heldout_loss, theta0, train, test, s,
                                            analytic.get("fixed_point_S_e"))}
    for k in s["ks"]:
        net, loss, heldout_loss, train, test = linear_problem(k, data, s)
        print(f"k = {k}: gradient fit (load {C.loadavg()})", flush=True)
        r = {"k": k, "load_before": C.loadavg()}
        grad = linear_gradient_fit(net, loss, k, s, folder)
        r["load_after_fit"] = C.loadavg()
        history, fitted = grad.pop("history"), grad.pop("fitted")
        if k == 81:
            r["gradient_check"] = gradient_check(net, loss, k, history, fitted)
        r["gradient"] = grad
        if k in s["cma_ks"]:
            print(f"k = {k}: CMA-ES (load {C.loadavg()})", flush=True)
            r["cma"] = linear_cma(net, loss, k, s, grad["best_loss"], cma)
            r["load_after_cma"] = C.loadavg()
            level = r["cma"]["best_loss"]
            for run in (grad, r["cma"]):
                run["time_to_gradient_loss"] = B.time_to(run["trace"], grad["best_loss"])
                run["best_at_gradient_time"] = min(
                    (p["best"] for p in run["trace"] if p["t"] <= grad["seconds"]),
                    default=None)
                run["time_to_cma_loss"] = B.time_to(run["trace"], level)
        for name, run in ((n, r[n]) for n in ("gradient", "cma") if n in r):
            print(f"k = {k}: held-out simulations of {name}'s end point", flush=True)
            run["analytic"] = analytic_scores(net, run["best_theta"], train, test)
            run["heldout"] = heldout_sets(net, heldout_loss, run["best_theta"], train,
                                          test, s, run["analytic"].get("fixed_point_S_e"))
            run["load_after_heldout"] = C.loadavg()
        out["results"].append(r)
    out["load_at_end"] = C.loadavg()
    return out


def _heldout_row(name: str, analytic: dict, held: dict, fixed: bool) -> list:
    """A row of the held-out table (``fixed``: with the departures from the fixed point)."""
    an = ([analytic["error"], "–"] if "error" in analytic else
          [f"{analytic['test_r']:.3f}", f"{analytic['mean_fc']:.3f}"])
    se = analytic.get("fixed_point_S_e")
    an += [f"{np.min(se):.3f}-{np.max(se):.3f}" if se is not None else "–"] * fixed
    if "error" in held:
        return [name, held["error"], *[""] * (5 + fixed), *an]
    s = held["summary"]
    left = [f"{s['left_fixed_point'][0]} of {s['left_fixed_point'][1]} "
            f"({s['max_departure']:.3f})" if "left_fixed_point" in s else "–"] * fixed
    return [name, *(H.pm(s.get(key), 2 if key == "test_fraction_of_ceiling" else 3) for key in (
        "test_fc_r", "test_fraction_of_ceiling", "test_mean_fc", "test_saturation",
        "test_fcd_ks", "train_fc_r")), *left, *an]


def _fit_row(k: int, run: dict) -> list:
    t_grad = run.get("time_to_gradient_loss")
    reach = "–" if "time_to_gradient_loss" not in run else (
        "not reached" if t_grad is None else f"{t_grad:.1f} s")
    cpu = H.num(run.get("cpu_seconds"), ".0f")
    return [k, run["method"], f"{run['evaluations']} {run['unit']}",
            f"{run['seconds']:.1f} ({cpu}; {H.num(run.get('first_call'), '.1f')})",
            f"{run['best_loss']:.4f}", H.num(run.get("best_at_gradient_time"), ".4f"), reach,
            H.num(run["analytic"].get("train_r")), H.num(run["analytic"].get("test_r"))]


def render_linear(lin: dict, command: str) -> list[str]:
    """The report's lines, from ``measure_linear``'s results."""
    s = lin["settings"]
    ref = _fit_heterogeneous_reference()
    runs = [(r, name) for r in lin["results"] for name in ("gradient", "cma") if name in r]
    lines = [
        "# Regional heterogeneity on the analytic loss (`nd.LinearFcLoss`), scored by "
        "simulation", "",
        f"Written by `{command}`; measured {lin['date']}. The model, split and "
        "parameterisations of `heterogeneity.md` fitted to the analytic FC of the model "
        "linearised at its stable fixed point (`nd.LinearFcLoss`: Lyapunov equation, "
        "linearised Balloon BOLD, delays ignored, noise-free, exact gradients) instead of "
        "simulated BOLD; each end point then simulated (the nonlinear, delayed model with "
        f"noise sigma 0.001) with {s['heldout_sets']} held-out noise sets of "
        f"{s['heldout_realisations']} x {s['heldout_duration'] / 1000:g} s after a "
        f"{s['burn_in'] / 1000:g} s burn-in, and scored on the test runs 5-7 (mean ± sd "
        f"over the sets). Noise ceiling {lin['ceiling']:.3f}.", "",
        "## Fits", "",
        *H.table(("k", "method", "steps / evaluations", "wall s (CPU s; 1st call)",
                  "final loss", "best loss by the gradient fit's wall time",
                  "time to the gradient fit's final loss", "fit r (analytic, runs 1-4)",
                  "analytic FC r on runs 5-7"), [_fit_row(r["k"], r[n]) for r, n in runs]),
        "", "Load average (1, 5, 15 min) before / after each fit: " + "; ".join(
            f"k = {r['k']}: {r['load_before']} / {r['load_after_fit']}"
            + (f", after CMA-ES {r['load_after_cma']}" if "load_after_cma" in r else "")
            for r in lin["results"]) + ".", ""]
    for r in lin["results"]:
        g = r["gradient"]
        lines.append(f"- k = {r['k']}: the gradient fit's median step {g['median_step']:.3f} s "
                     f"(first call, compilation included, {g['first_call']:.1f} s); "
                     f"{g['rejected']} steps taken back by `nd.backtrack`; spectral abscissa "
                     f"at the end {g['abscissa']:.2e} per ms.")
        if "cma" in r:
            c = r["cma"]
            lines.append(f"- k = {r['k']}: CMA-ES {c['generations']} generations of "
                         f"{c['popsize']}, {c['failed']} failed candidates.")
        for where, c in r.get("gradient_check", {}).items():
            lines.append(
                f"- k = {r['k']}, `nd.check_gradient` at the {where} point along the "
                f"fit's {'first' if where == 'start' else 'last accepted'} step: "
                f"gradient {c['gradient']:.6g}, central differences {c['fd']:.6g} (h "
                f"1e-3) and {c['fd_half']:.6g} (h 5e-4), relative error "
                f"{c['relative_error']:.1e}.")
    # the departures from the fixed point (absent from measurements made before them)
    fixed = "left_fixed_point" in lin["start"]["heldout"].get("summary", {})
    lines += ["", "## Held out: the end points simulated", "", *H.table((
        "model", "test FC r", "of ceiling", "test mean FC (runs' "
        f"{lin['start']['heldout']['summary']['empirical_mean_fc']:.3f})", "saturation",
        "test FCD KS", "train FC r",
        *["runs that left the fixed point (largest departure)"] * fixed,
        "analytic FC r on runs 5-7", "analytic mean FC", *["fixed point's S_e*"] * fixed), [
        _heldout_row("homogeneous start (G 0.49)", lin["start"]["analytic"],
                     lin["start"]["heldout"], fixed),
        *(_heldout_row(f"k = {r['k']}, {'gradient' if n == 'gradient' else 'CMA-ES'}",
                       r[n]["analytic"], r[n]["heldout"], fixed) for r, n in runs)])]
    if ref is not None:
        lines += ["", "For comparison, the input gains fitted on simulated BOLD "
                  "(`benchmarks/fit_heterogeneous.md`, 5 noise sets, its fitted sigma): test "
                  f"FC r {H.pm(ref['test_fc_r'])}, mean FC {H.pm(ref['test_mean_fc'])}, FCD KS "
                  f"{H.pm(ref['test_fcd_ks'])}."]
    lines += [
        "", "## Setup", "",
        "`nd.LinearFcLoss(runs_fc(runs 1-4), nd.Bold(period=720, variables='S_e'), "
        "metric='1-r+huber')` (level width 0.05, stability barrier beyond a spectral "
        "abscissa of -5e-4 per ms, weight 10). k = 10 and 81 as in `heterogeneity.md`; "
        "k = 161 adds one mean-free deviation of the recurrent excitation `w_p` per region "
        "(`nd.RegionalDeviation(1.4, ...)`; the FIC keeps every region at 3 Hz).", "",
        f"Gradient fit: `nd.fit` with `nd.backtrack(optax.multi_transform(Adam))`, steps "
        f"{LINEAR_LR['G']} on G, {LINEAR_LR['gain'][10]} on the map coefficients (k = 10), "
        f"{LINEAR_LR['gain'][81]} on the regional gains, {LINEAR_LR['w_p']} on the w_p "
        f"deviations, `keep='best'`; run in chunks of {s['chunk']} steps (resumed from a "
        "checkpoint, one compilation) until the best loss fell by less than "
        f"{100 * s['tol']:g} % over the last chunk (at most {s['max_steps']} steps). The "
        "step sizes were chosen from 200-300-step runs: regional gains at 0.05, 0.1 and "
        "0.2 (G at a tenth) reach the same loss by 100 steps (0.05 a little later); map "
        "coefficients at 0.01, 0.02 and 0.05 the same loss by 150 steps, 0.1 has its first "
        "steps taken back.", "",
        f"CMA-ES: pycma, default population, seed 1, sigma0 {B.CMA_SIGMA0}, from the "
        f"homogeneous start in scaled coordinates (G = 0.49 + {B.CMA_SCALE_G} x, gains "
        f"{s['cma_scale_gain']} x, w_p {CMA_SCALE_WP} x); each generation's candidates "
        "evaluated in one `jax.vmap` of the analytic loss (one at a time where the batch "
        f"raises); a NaN loss is told {B.FAILED_LOSS:g}. It stops at the gradient fit's final "
        f"loss or after {s['cma_budget']:g} s. The gains' scale was chosen from 120 s runs "
        "at k = 81 with 0.1, 0.5 and 1.0 (best losses 0.113, 0.099, 0.125; at k = 10, 0.1 "
        "and 0.5 reach the same). Times are wall-clock from the method's start, "
        "compilation included; CPU seconds are this process's.", "",
        f"Held out: keys 10000-{10_000 + s['heldout_sets'] - 1}, `nd.score_runs` on the "
        f"test runs (FC r, fraction of the ceiling, mean FC, saturation: pairs above 0.9, "
        f"FCD KS: {s['fcd'][0]}-TR windows, {s['fcd'][1]}-TR steps) and on the training "
        "runs. *Analytic FC r on runs 5-7*: `nd.linear_fc` of the end point against the "
        "test runs' FC (what the fit believes)." + (
            " *Runs that left the fixed point*: the same runs (same keys) with S_e averaged "
            "over each TR (`nd.TemporalAverage`): those in which some region's mean S_e over "
            f"the run lies more than {LEFT} from the fixed point S_e* that the analytic FC "
            "linearises at, and the largest such departure. *Fixed point's S_e**: its range "
            "over regions (the FIC's balanced state holds every region at 0.161, 3 Hz)."
            if fixed else ""), "", "## Machine", "",
        f"- CPUs the process could use: {lin.get('cpus', '?')} (`taskset`: on this shared "
        "machine, with the 1-minute load above 2, the analytic loss's value and gradient "
        "took 0.10 s (median, 40 calls; at most 0.13 s) on one pinned core against 0.18-0.25 "
        "s median with stalls of about 4 s in one call of ten on both cores; a held-out "
        "simulation 5.1 s against 7.9 s)",
        f"- load average (1, 5, 15 min) at start: {lin['load_at_start']}, at end: "
        f"{lin['load_at_end']} (2 CPUs shared with other jobs)"]
    return lines


def _fit_heterogeneous_reference() -> dict | None:
    path = C.RESULTS / "fit_heterogeneous.json"
    try:
        return json.loads(path.read_text())["fits"]["input gains"]["scores"]["summary"]
    except (OSError, KeyError, ValueError):
        return None


def measure(args) -> dict:
    """Every fit, its gradient check (k = 81), CMA-ES and the held-out simulations."""
    try:
        import cma
    except ImportError:
        raise SystemExit("bench_heterogeneity_linear needs CMA-ES: pip install cma") from None
    s = LINEAR_QUICK if args.smoke else LINEAR_FULL
    args.out.parent.mkdir(parents=True, exist_ok=True)  # the fits' checkpoints go there
    lin = measure_linear(nd.datasets.load("hcp"), s, cma, args.out.parent)
    cpus = sorted(os.sched_getaffinity(0))
    pinned = f"taskset -c {','.join(map(str, cpus))} " if len(cpus) < os.cpu_count() else ""
    lin["cpus"] = f"{len(cpus)} of {os.cpu_count()}"
    lin["command"] = pinned + C.command("studies/bench_heterogeneity_linear.py",
                                        "--smoke" if args.smoke else "")
    return H.plain(lin, null=True)


def render(m: dict) -> str:
    return "\n".join(render_linear(m, m["command"])) + "\n"


def figure(m: dict, out: Path) -> None:
    B.figure(m["results"], out.with_suffix(".png"), "best analytic loss so far", yscale="log")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="heterogeneity_linear", figure=figure)
