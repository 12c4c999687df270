"""Is the default fit credible? Writes benchmarks/fit.md, benchmarks/fit_default.png (the
command's own figure) and benchmarks/fit_grid.png.

On the embedded HCP data, every score on held-out simulations (noise the fit never saw):
1. ``netdyn fit`` in a fresh process (no options, or those after ``--``): its wall clock
   by stage, its training, held-out and test-subject scores; ``netdyn fit --quick``'s time;
2. stationarity: the FC of consecutive 72 s windows with and without the burn-in;
3. a grid over G (the other parameters as fitted), simulated as the held-out check is,
   beside the analytic FC (``nd.LinearFcLoss``) where the model has one.

    python scripts/benchmarks/bench_fit.py    # 16 min on 2 CPU cores at load 5 (26 at load 10)
    python scripts/benchmarks/bench_fit.py --out benchmarks/fit_rww.md -- --model rww
    python scripts/benchmarks/bench_fit.py --smoke                         # a smoke test
    python scripts/benchmarks/bench_fit.py --from-json benchmarks/fit.json # the report again

The checks simulate the fitted network as ``nd.cli.load_fitted`` gives it back.
"""

import argparse
import importlib.util
import json
import os
import platform
import re
import shutil
import tempfile
import time
from pathlib import Path

import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402

WINDOW = 72_000.0  # ms of BOLD per stationarity window (100 TRs)
BIN = 7_200.0  # ms per bin of the global signal's transient (10 TRs)
# netdyn fit draws the noise of its first held-out set from this stream of the seed's key;
# main() checks that the simulation here scores what params.json says.
HELDOUT_STREAM = 2**31 - 1
# The grid's default range per model (in the units of --G): rww-ei-fic's stable range
# below the escape from its balanced state (about 0.52, benchmarks/linear_fc.md); rww's
# band where the held-out FC r exceeds 0.1 (benchmarks/fit_rww.md). Other models: the
# fitted G +-10 %.
GRID_RANGE = {"rww-ei-fic": (0.40, 0.51), "rww": (0.214, 0.230)}
# Models whose FC the analytic engine describes (netdyn fit's --engine auto picks it).
ANALYTIC_MODELS = ("rww-ei-fic",)
ANALYTIC_STEP = 0.005  # the fine grid of the analytic FC, in the units of --G
MODEL_TEXT = {
    "rww-ei-fic": "two-population Wong-Wang nodes (excitatory and inhibitory; feedback "
                  "inhibition control sets every region's inhibitory weight so that its "
                  "excitatory rate is 3 Hz), BOLD of S_e",
    "rww": "Reduced Wong-Wang nodes (w = 0.5, I_o = 0.32), BOLD of S",
    "hopf": "Hopf oscillators, 720 ms averages of x",
}


# ------------------------------------------------------------------------- the command


# Where each stage of the command starts: the first line it prints there.
_MARKERS = (
    ("start-up: interpreter, imports, data, plan", None),
    ("scan of G for the start", re.compile(r"^netdyn fit: scanning")),
    ("gradient check at the start, and the first step (compilation)",
     re.compile(r"^netdyn fit: checking the gradient")),
    ("the other steps", re.compile(r"step\s+1/\d+")),
    ("held-out check", re.compile(r"^netdyn fit: held-out check")),
    ("error bars, G's profile, figure and files", re.compile(r"^netdyn fit: error bars")),
)


def _stages(wall: float, lines: list[tuple[float, str]], report: dict) -> list[list]:
    """``[label, seconds]`` of the command's stages, from the times its lines appeared
    (a stage whose line is missing, e.g. with ``--quiet``, joins the one before); the last
    split with the seconds ``params.json`` gives the error bars and the profile."""
    starts = [(_MARKERS[0][0], 0.0)]
    for label, pattern in _MARKERS[1:]:
        t = next((t for t, line in lines if pattern.search(line)), None)
        if t is not None:
            starts.append((label, t))
    starts.sort(key=lambda s: s[1])
    rows = [[label, end - t] for (label, t), (_, end) in zip(starts, [*starts[1:], ("", wall)])]
    u = report.get("uncertainty") or {}
    if rows[-1][0].startswith("error bars") and "seconds" in u:
        p = u.get("profile") or {}
        total = rows.pop()[1]
        rows.append(["error bars (nd.uncertainty)", u["seconds"]])
        if "seconds" in p:
            rows.append(["G's profile (5 points)", p["seconds"]])
        rows.append(["figure, files and exit", total - u["seconds"] - p.get("seconds", 0.0)])
    return rows


# ------------------------------------------------------------------------ the checks


def _fc_metrics(f: np.ndarray, target: np.ndarray, test: np.ndarray | None) -> dict:
    """FC r against the training FC (and the test subjects'), mean FC, saturation."""
    iu = np.triu_indices(f.shape[0], k=1)
    out = {"fc_r": float(np.corrcoef(f[iu], target[iu])[0, 1]),
           "mean_fc": float(f[iu].mean()), "saturation": float(np.mean(f[iu] > 0.9))}
    if test is not None:
        out["test_fc_r"] = float(np.corrcoef(f[iu], test[iu])[0, 1])
    return out


def _stationarity(x: np.ndarray, burn: int, per: int, target, test) -> list[dict]:
    """FC metrics of consecutive windows of ``per`` samples of signals ``x``
    ``[realisations, samples, nodes]`` (FC: the mean of the realisations'), from the
    start and from the end of the burn-in (``burn`` samples)."""
    rows = []
    n = min(4, (x.shape[1] - burn) // per)
    for start in (0, burn):
        for w in range(n):
            f = np.asarray(nd.runs_fc(x[:, start + w * per:start + (w + 1) * per]))
            rows.append({"burn_in_samples": start, "window": w,
                         **_fc_metrics(f, target, test)})
    return rows


def _global_signal(x: np.ndarray, burn: int, per: int) -> list[float]:
    """The global signal (mean over regions and realisations) in consecutive bins of
    ``per`` samples from t = 0, minus its mean after the burn-in, in units of a region's
    standard deviation after the burn-in: the shared transient from the initial state."""
    g = x.mean(axis=2)
    late, sd = g[:, burn:].mean(), x[:, burn:].std(axis=1).mean()
    return [float((g[:, k:k + per].mean() - late) / sd)
            for k in range(0, min(x.shape[1], burn + round(WINDOW / BIN) * per) - per + 1, per)]


def _settled(gs: list[float], tolerance: float = 1.0) -> float | None:
    """The time (s) from which every bin of ``_global_signal`` stays within ``tolerance``."""
    for k in range(len(gs)):
        if all(abs(v) < tolerance for v in gs[k:]):
            return k * BIN / 1000
    return None


def _simulated_grid(loss: nd.FcLoss, net, values, key) -> list[tuple[dict, np.ndarray]]:
    """At each network G in ``values`` (the other parameters as fitted): the held-out
    check's scores against its target and the FC (the realisations' mean), one ``vmap``."""
    @eqx.filter_jit
    def run(net, values, key):
        def one(G):
            m = eqx.tree_at(lambda n: n.coupling.G, net, G)
            f = jnp.mean(jax.vmap(nd.fc)(loss.signals(m, key)), axis=0)
            value, metrics = loss.loss_of_fc(f)
            return {**metrics, "loss": value}, f
        return jax.vmap(one)(values)

    metrics, fcs = run(net, jnp.asarray(values), key)
    return [({k: float(v[i]) for k, v in metrics.items()}, np.asarray(fcs[i]))
            for i in range(len(values))]


def _analytic_grid(loss: nd.LinearFcLoss, net, values) -> list[tuple[dict, np.ndarray]]:
    """The analytic loss (with its stability barrier), metrics and FC at each network G."""
    @eqx.filter_jit
    def one(net, G):
        m = eqx.tree_at(lambda n: n.coupling.G, net, G)
        value, metrics = loss(m, None)
        return {**metrics, "loss": value}, loss.model_fc(m, None)

    out = []
    for G in values:
        metrics, f = one(net, jnp.asarray(G))
        out.append(({k: float(v) for k, v in metrics.items()}, np.asarray(f)))
    return out


def _crossing(Gs, mean_fc, level) -> float | None:
    """The lowest G where ``mean_fc`` rises through ``level`` (linear interpolation)."""
    for k in range(len(Gs) - 1):
        a, b = mean_fc[k], mean_fc[k + 1]
        if np.isfinite(a) and np.isfinite(b) and a < level <= b:
            return float(Gs[k] + (level - a) / (b - a) * (Gs[k + 1] - Gs[k]))
    return None


def _regions(folder: Path, plan, report) -> dict | None:
    """The regions least correlated in the held-out FC and how that follows in-strength."""
    o = plan.options
    if o.dataset is None or o.weights is not None:
        return None
    heldout = np.loadtxt(folder / "fc_heldout.csv", delimiter=",")
    target = np.asarray(plan.data.target)
    weights = np.asarray(plan.data.weights)
    off = ~np.eye(target.shape[0], dtype=bool)
    row_sim = np.array([r[m].mean() for r, m in zip(heldout, off)])
    row_emp = np.array([r[m].mean() for r, m in zip(target, off)])
    strength = weights.sum(axis=1)  # W[target, source]: incoming
    labels = nd.datasets.load(o.dataset).labels
    low = np.argsort(row_sim)[:8]
    return {"weakest": [str(labels[i]) for i in low],
            "ranks": [int((strength < strength[i]).sum()) + 1 for i in low],
            "n": int(target.shape[0]), "r_sim": float(np.corrcoef(row_sim, strength)[0, 1]),
            "r_emp": float(np.corrcoef(row_emp, strength)[0, 1])}


def measure(a) -> dict:
    """Run the command (and ``--quick``) and the checks; every number of the report."""
    if a.grid_realisations < 2:
        raise SystemExit("--grid-realisations must be >= 2 (the held-out check's noise streams)")
    if a.smoke:
        a.grid_points = min(a.grid_points, 3)
    fit_args = a.fit_args
    folder = Path(a.reuse or tempfile.mkdtemp(prefix="netdyn-fit-"))
    print(f"the command's results: {folder}", flush=True)
    load0 = os.getloadavg()
    t_all = time.perf_counter()
    out = H.out_path(a, "fit")
    res: dict = {"argv": fit_args, "smoke": a.smoke, "name": out.name}
    if a.reuse is None:
        res["wall"], res["lines"] = H.run_cli(["fit", *fit_args, *(["--quick"] if a.smoke else []),
                                               "--out", str(folder)])
    if (folder / "fit.png").is_file():
        out.parent.mkdir(parents=True, exist_ok=True)  # --out into a new folder
        shutil.copy(folder / "fit.png", out.parent / f"{out.stem}_default.png")
    report = json.loads((folder / "params.json").read_text())
    res["report"], res["history"] = report, json.loads((folder / "history.json").read_text())
    if a.reuse is None:
        res["stages"] = _stages(res["wall"], res["lines"], report)
    if not (a.smoke or a.no_quick):
        with tempfile.TemporaryDirectory(prefix="netdyn-fit-quick-") as quick:
            res["quick_wall"], _ = H.run_cli(["fit", *fit_args, "--quick", "--out", quick])
            res["quick_report"] = json.loads((Path(quick) / "params.json").read_text())
            res["quick_report"]["settings"]["out"] = "<folder>"
    res["load_commands"] = os.getloadavg()

    net, plan = nd.cli.load_fitted(folder)
    o = plan.options
    target = np.asarray(plan.data.target)
    test = None if not plan.data.test else np.asarray(nd.runs_fc(plan.data.test))
    unit = report["units"]["coupling.G"]
    key = jax.random.key(o.seed)
    heldout_key = jax.random.fold_in(key, HELDOUT_STREAM)
    check = plan.heldout_loss

    # One simulation of the first held-out set, from t = 0: its samples after the burn-in
    # are the held-out check's (the burn-in and the run are one noise stream), those
    # before it show the transient the burn-in removes.
    print("the first held-out set from t = 0 (the check, stationarity) ...", flush=True)
    t = time.perf_counter()
    period = check.monitor.period
    burn = round(check.burn_in_simulated / period)
    whole = check.replace(burn_in=0.0, duration=check.burn_in_simulated + check.duration)
    x = np.asarray(eqx.filter_jit(lambda n, k: whole.signals(n, k))(net, heldout_key))
    first = _fc_metrics(np.asarray(nd.runs_fc(x[:, burn:])), target, test)
    reported = report["heldout_each"][0]
    assert abs(first["fc_r"] - reported["fc_r"]) < 1e-6, (first, reported)
    assert abs(first["mean_fc"] - reported["mean_fc"]) < 1e-6, (first, reported)
    res["check_seconds"] = time.perf_counter() - t
    res["stationarity"] = _stationarity(x, burn, round(WINDOW / period), target, test)
    res["global_signal"] = _global_signal(x, burn, round(BIN / period))

    # The grid: simulated as the held-out check (fewer realisations, the first ones of its
    # noise), and the analytic FC at the same points and on a fine grid.
    lo, hi = GRID_RANGE.get(o.model, (0.9 * report["parameters"]["coupling.G"],
                                      1.1 * report["parameters"]["coupling.G"]))
    if a.grid_range is not None:
        lo, hi = (float(v) for v in a.grid_range.split(","))
    Gs = np.linspace(lo, hi, a.grid_points)
    R = a.grid_realisations
    grid_loss = check.replace(realisations=R)
    print(f"grid: {len(Gs)} values of G in [{lo:g}, {hi:g}], {R} x "
          f"{check.duration / 1000:g} s each ...", flush=True)

    def scored(points):  # each point's metrics and those of its FC
        return [{**m, **_fc_metrics(f, target, test)} for m, f in points]

    t = time.perf_counter()
    sim = scored(_simulated_grid(grid_loss, net, Gs * unit, heldout_key))
    res["grid_seconds"] = time.perf_counter() - t
    fc_R = np.asarray(nd.runs_fc(x[:R, burn:]))
    res["grid"] = {"G": Gs.tolist(), "realisations": R, "simulated": sim,
                   "fitted": {**_fc_metrics(fc_R, target, test),
                              "loss": float(grid_loss.loss_of_fc(jnp.asarray(fc_R))[0])}}
    analytic = plan.loss if isinstance(plan.loss, nd.LinearFcLoss) else (
        nd.LinearFcLoss(target, check.monitor, metric=o.loss)
        if o.model in ANALYTIC_MODELS else None)
    if analytic is not None:
        print("analytic FC on the grid ...", flush=True)
        t = time.perf_counter()
        fine = np.arange(lo, hi + ANALYTIC_STEP / 2, ANALYTIC_STEP)
        if a.smoke:
            fine = fine[::8]
        res["grid"]["analytic"] = scored(_analytic_grid(analytic, net, Gs * unit))
        res["grid"]["fine_G"] = fine.tolist()
        res["grid"]["fine"] = scored(_analytic_grid(analytic, net, fine * unit))
        res["analytic_seconds"] = time.perf_counter() - t
    res["regions"] = _regions(folder, plan, report)
    iu = np.triu_indices(target.shape[0], k=1)
    res["target_mean_fc"] = float(target[iu].mean())
    res["test_mean_fc"] = None if test is None else float(test[iu].mean())
    res["load"] = [load0[0], os.getloadavg()[0]]
    res["seconds"] = time.perf_counter() - t_all
    res["machine"] = {"arch": platform.machine(), "cores": os.cpu_count(),
                      "jax": jax.__version__}
    # the temporary folder's name left out of the saved measurements
    return H.loads(H.without_temporary_paths(H.dumps(res).replace(str(folder), "<folder>")))


# ------------------------------------------------------------------------ the report


def figures(res: dict, out: Path) -> None:
    """The grid over G (``NAME_grid.png``): FC r and mean FC, simulated and analytic, and the
    fit (the command's own figure, ``fit.png``, is copied when measured)."""
    if importlib.util.find_spec("matplotlib") is None:
        return
    from matplotlib.figure import Figure

    g, report = res["grid"], res["report"]
    G_fit, h = report["parameters"]["coupling.G"], report["heldout"]
    runs = report.get("runs") or {}
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    a, b = fig.subplots(1, 2)
    sim = g["simulated"]
    label = f"simulated, {g['realisations']} realisations"
    a.plot(g["G"], [s["fc_r"] for s in sim], "k.-", label=label + ", training")
    if "test_fc_r" in sim[0]:
        a.plot(g["G"], [s["test_fc_r"] for s in sim], ".--", color="0.5", label=label + ", test")
    b.plot(g["G"], [s["mean_fc"] for s in sim], "k.-", label=label)
    if "fine" in g:
        a.plot(g["fine_G"], [s["fc_r"] for s in g["fine"]], "-", color="C0",
               label="analytic, training")
        b.plot(g["fine_G"], [s["mean_fc"] for s in g["fine"]], "-", color="C0",
               label="analytic")
    a.plot([G_fit], [h["fc_r"]], "o", color="C1", label="the fit: held-out check")
    if "test" in runs:
        a.plot([G_fit], [runs["test"]["fc_r"]], "s", color="C1", mfc="none",
               label="the fit: test subjects")
    b.plot([G_fit], [h["mean_fc"]], "o", color="C1", label="the fit: held-out check")
    fit2 = g["fitted"]
    a.plot([G_fit], [fit2["fc_r"]], "*", color="k", label="the fit, as the grid")
    b.plot([G_fit], [fit2["mean_fc"]], "*", color="k", label="the fit, as the grid")
    b.axhline(res["target_mean_fc"], color="C2", ls="--", label="training subjects")
    if res.get("test_mean_fc") is not None:
        b.axhline(res["test_mean_fc"], color="C3", ls=":", label="test subjects")
    a.set(xlabel="G", ylabel="FC r", title="pattern")
    b.set(xlabel="G", ylabel="mean FC", title="level")
    a.legend(fontsize="x-small")
    b.legend(fontsize="x-small")
    fig.savefig(out.parent / f"{out.stem}_grid.png", dpi=110)


def _error_bars(report: dict) -> str:
    """The parameters' intervals and G's profile, as ``netdyn fit`` reported them."""
    u = report.get("uncertainty") or {}
    if "skipped" in u or not u:
        return f"Error bars: skipped ({u.get('skipped', 'not computed')})."
    if not u["valid"]:
        return f"Error bars: none ({u['note']}; {u['seconds']:.0f} s)."

    def sd(v):
        return "" if v is None else f"{v:.2g}"

    rows = []
    for name, v, lo, hi, nsd, dsd, ok in zip(
            u["names"], u["values"], u["lower"], u["upper"], u["noise_sd"] or [None] * 9,
            u["data_sd"] or [None] * 9, u["constrained"]):
        rows.append(f"| {name} | {v:.5g} | [{lo:.5g}, {hi:.5g}] | {sd(nsd)} | {sd(dsd)} |"
                    if ok else f"| {name} | {v:.5g} | not constrained by the FC | | |")
    eig = ", ".join(f"{w:.3g}" for w in u["hessian_eigenvalues"])
    sources = [f"noise over {u['noise_keys']} keys"] if u["noise_keys"] else [
        "no noise part: the loss is deterministic"]
    if u.get("runs_left_out"):
        sources.append(f"each of the training subjects {','.join(map(str, u['runs_left_out']))}"
                       " left out")
    text = (f"Error bars ({u['seconds']:.0f} s; {'; '.join(sources)}; Hessian eigenvalues "
            f"{eig}):\n\n"
            "| parameter | fitted | 95 % interval | sd, noise | sd, subjects |\n"
            "|---|---|---|---|---|\n" + "\n".join(rows))
    p = u.get("profile")
    if p is not None:
        points = ", ".join(f"{g:.5f}: {loss:.5f} ({q:.5f})"
                           for g, loss, q in zip(p["G"], p["loss"], p["quadratic"]))
        ratios = ", ".join("—" if r is None else f"{r:.2f}" for r in p["rise_ratio"])
        text += (f"\n\nProfile of G ({p['seconds']:.0f} s; at {p['steps']} times the "
                 "interval's half-width from the fit, any other fitted value moved as the "
                 f"Hessian says), G: loss (quadratic model): {points}. The loss's rise over "
                 f"the quadratic model's at each point: {ratios} (1 where the model holds).")
    return text


def _pm(d: dict, sd: dict | None, k: str, fmt: str = ".3f", scale: float = 1.0) -> str:
    v = f"{scale * d[k]:{fmt}}"
    s = (sd or {}).get(k)
    return v + (f" ± {scale * s:{fmt}}" if s else "")


def _engine_text(s: dict, loss_name: str) -> str:
    if s["engine"] == "linear":
        return ("Each step's loss is that of the **analytic FC** (`--engine linear`, "
                "`nd.LinearFcLoss`): the network linearised at its stable fixed point, the "
                "Lyapunov equation for the stationary covariance of its states and of each "
                "region's linearised Balloon-Windkessel BOLD, its correlation compared with "
                f"the training FC (loss `{loss_name}`): no noise, no burn-in, delays "
                "ignored, exact gradients.")
    return (f"Each step's loss is simulated: a {s['burn_in'] / 1000:g} s burn-in (not "
            "compared; the gradient runs through it), then "
            f"{s['realisations']} noise realisations of {s['duration'] / 1000:g} s of BOLD "
            f"({round(s['realisations'] * s['duration'] / s['tr'])} TRs), loss "
            f"`{loss_name}` on their mean FC.")


def render(res: dict) -> str:
    """The report's text (its figures: ``figures``)."""
    report, path = res["report"], res["history"]
    s, par, h = report["settings"], report["parameters"], report["heldout"]
    hsd = report.get("heldout_sd") or {}
    out = Path(res["name"])
    default_png, grid_png = f"{out.stem}_default.png", f"{out.stem}_grid.png"
    plotted = importlib.util.find_spec("matplotlib") is not None
    target_mean = res["target_mean_fc"]
    runs, rsd = report.get("runs") or {}, report.get("runs_sd") or {}
    tr_, te = runs.get("train"), runs.get("test")
    trsd, tesd = rsd.get("train") or {}, rsd.get("test") or {}
    argv = " ".join(res["argv"])
    command = "netdyn fit" + (f" {argv}" if argv else "") + (" --quick" if res["smoke"] else "")
    n_sets = report.get("heldout_sets") or 1
    held = (f"{n_sets} set{'s' if n_sets > 1 else ''} of {s['heldout_realisations']} x "
            f"{s['heldout_duration'] / 1000:g} s")
    lines = []
    add = lines.append

    bench = C.command("bench_fit.py", *(["--smoke"] if res["smoke"] else []),
                      *(["--out", f"benchmarks/{out.name}"] if out.name != "fit.md" else []),
                      *(["--", *res["argv"]] if res["argv"] else []))
    load_text = (f"load average {res['load'][0]:.1f} at the start, "
                 f"{res['load_commands'][0]:.1f} after the two commands, {res['load'][1]:.1f} "
                 "at the end")
    add(f"# `{command}` on the embedded HCP data: time, held-out and test scores\n")
    add(f"Written by `{bench}` on {res['machine']['arch']}, {res['machine']['cores']} CPU "
        f"cores shared with other jobs ({load_text}: a load above the core count slows "
        f"every timing here), JAX {res['machine']['jax']}, float64; {res['seconds']:.0f} s "
        "in all.")
    if not res["argv"]:
        add("\nThe command's default before 2026-11-27, `netdyn fit --model rww` (G and "
            "sigma fitted by simulation), is measured in [`fit_rww.md`](fit_rww.md).")

    # ---------------------------------------------------------------- time
    add("\n## Time\n")
    if "wall" in res:
        add(f"`{command}` in a fresh process, timed from its start to its exit (interpreter, "
            "imports and compilation included); each stage from the line the command prints "
            "as it enters it, the error bars and the profile from `params.json`. Wall clock "
            f"of the whole command: **{res['wall']:.0f} s**.\n")
        q = res.get("quick_report")
        names = {"held-out check": f"held-out check ({held}, simulated)",
                 "the other steps": f"steps 2-{report['steps']}"}
        lines += H.table(("stage", "wall clock"), [
            *((names.get(label, label), f"{sec:.0f} s") for label, sec in res["stages"]),
            ("**whole command**", f"**{res['wall']:.0f} s**")])
        if q is not None:
            add(f"| netdyn fit --quick: {res['quick_wall']:.0f} s (another process, into a "
                f"temporary folder: the fit the same, 1 held-out set of "
                f"{q['settings']['heldout_realisations']} x "
                f"{q['settings']['heldout_duration'] / 1000:g} s, no error bars) | "
                f"{res['quick_wall']:.0f} s |")
        add(f"\nThe scan, the gradient check and the fit together: {report['seconds']:.0f} s "
            "(`params.json`'s `seconds`).")
        if q is not None:
            qt = (q.get("runs") or {}).get("test")
            add(f"`--quick` fitted G = {q['parameters'].get('coupling.G', float('nan')):.4f} "
                f"and scored held-out FC r {q['heldout']['fc_r']:.3f} (mean FC "
                f"{q['heldout']['mean_fc']:.3f})"
                + (f", test subjects FC r {qt['fc_r']:.3f}" if qt else "")
                + ": its shorter held-out simulation gives a noisier, lower FC r.")
    else:
        add(f"Taken from an earlier run (`--reuse`): the scan, the gradient check and the fit "
            f"took {report['seconds']:.0f} s; the whole command was not timed.")

    # ---------------------------------------------------------------- scores
    add("\n## Scores on subjects the fit never saw\n")
    if tr_ is not None:
        names_tr = ",".join(map(str, runs["train_subjects"]))
        names_te = ",".join(map(str, runs.get("test_subjects") or []))
        add(f"The embedded HCP data hold the BOLD of 7 subjects; the fit matches the FC of "
            f"subjects {names_tr} (the mean of each subject's FC) and is scored on subjects "
            f"{names_te}. Both columns score the same held-out simulations ({held}, noise "
            f"the fit never saw; mean ± sd over the sets). The **noise ceiling** is the FC r "
            "between the training and the test subjects' FCs: no model fitted to the first "
            "can be expected to do better on the second.\n")
        add("| held-out simulation against | training subjects | **test subjects** |")
        add("|---|---|---|")
        if te is not None:
            add(f"| FC r | {_pm(tr_, trsd, 'fc_r')} | **{_pm(te, tesd, 'fc_r')}** |")
            add(f"| noise ceiling (training FC vs test FC) | | {te['ceiling']:.3f} |")
            add(f"| fraction of the ceiling reached | | **"
                f"{_pm(te, tesd, 'fraction_of_ceiling', '.1f', 100)} %** |")
            add(f"| mean FC: simulated (the subjects') | {tr_['mean_fc']:.3f} "
                f"({tr_['empirical_mean_fc']:.3f}) | {te['mean_fc']:.3f} "
                f"({te['empirical_mean_fc']:.3f}) |")
            add(f"| pairs with FC > 0.9 | {100 * tr_['saturation']:.1f} % | "
                f"{100 * te['saturation']:.1f} % |")
            if "fcd_ks" in tr_:
                add(f"| FCD KS (window {runs['fcd_window']} TRs, step {runs['fcd_step']}) | "
                    f"{_pm(tr_, trsd, 'fcd_ks')} | {_pm(te, tesd, 'fcd_ks')} |")
        each = report.get("heldout_each") or []
        if len(each) > 1:
            add("\nEach held-out set: " + "; ".join(
                f"set {k + 1}: FC r {e['fc_r']:.3f}, mean FC {e['mean_fc']:.3f}"
                for k, e in enumerate(each)) + ".")

    # ---------------------------------------------------------------- the fit
    add("\n## The fit in detail\n")
    add(f"Embedded HCP group connectome (80 regions, delays = length / {s['speed']:g} "
        f"mm/ms), {MODEL_TEXT.get(s['model'], s['model'])}, delayed linear coupling, "
        f"additive noise (sigma = {s['sigma']:g}), "
        f"stochastic Heun dt = {s['dt']:g} ms, Balloon-Windkessel BOLD at TR = "
        f"{s['tr']:g} ms. {_engine_text(s, s['loss'])} Fits {s['fit']} ({report['steps']} "
        f"Adam steps, best step kept). Held-out check: the fitted model simulated with new "
        f"noise, {held} after a {s['burn_in'] / 1000:g} s burn-in.\n")
    scan = report.get("scan")
    if scan is not None:
        n_scan = len(report["grid"]["G"]) if report.get("grid") else 0
        bracket = "none" if scan["bracket"] is None else (
            f"[{scan['bracket'][0]:.5f}, {scan['bracket'][1]:.5f}]")
        how = "analytic FCs" if s["engine"] == "linear" else "forward simulations"
        add(f"The start: {n_scan} {how} (scan of G, the mean FC's peak, bisection of the "
            f"crossing; `scan.json`) placed G in {bracket}, where the model's mean FC meets "
            f"the training subjects' {target_mean:.3f}.\n")
    fit_col = "analytic FC (fitted)" if s["engine"] == "linear" else "fit noise"
    add(f"| | {fit_col} | held-out simulation ({held}) |\n|---|---|---|")
    add(f"| FC r | {report['fc_r']:.3f} | **{_pm(h, hsd, 'fc_r')}** |")
    add(f"| mean FC (training subjects {target_mean:.3f}) | {report['mean_fc']:.3f} | "
        f"**{_pm(h, hsd, 'mean_fc')}** |")
    add(f"| pairs with FC > 0.9 | {100 * report['saturation']:.1f} % | "
        f"**{_pm(h, hsd, 'saturation', '.1f', 100)} %** |")
    add(f"| RMSE | {report['rmse']:.3f} | {_pm(h, hsd, 'rmse')} |")
    fitted, initial = (", ".join(f"{k} = {v:.4g}" for k, v in d.items() if isinstance(v, float))
                       for d in (par, report["initial"]))
    add(f"\nFitted: {fitted} (from {initial}); FC r at the start "
        f"{report['initial_fc_r']:.3f}. Figure: `{default_png}` (the command's `fit.png`).\n")
    add(_error_bars(report))
    losses = np.asarray(path["loss"], dtype=float)
    names = [k for k, v in path["params"].items()
             if np.ndim(v) == 1 and len(v) == len(losses)]
    taken_back = [k for k in range(1, len(losses)) if losses[k] > losses[:k].min()]
    add("\nThe fit's path (the fitted values at each step, the loss there). A step that "
        "raised the loss above the best so far was taken back and retried at half the "
        f"length, with Adam restarted (`nd.backtrack`): {len(taken_back)} of "
        f"{len(losses) - 1} steps.\n")
    add("| step | " + " | ".join(names) + " | loss | |")
    add("|---|" + "---|" * len(names) + "---|---|")
    for k in range(len(losses)):
        vals = " | ".join(f"{path['params'][n][k]:.5f}" for n in names)
        add(f"| {k + 1} | {vals} | {losses[k]:.4f} | "
            f"{'taken back' if k in taken_back else ''} |")
    gc = report.get("gradient_check")
    add("\n" + ("The gradient was not checked (--no-gradient-check)." if gc is None else (
        f"The gradient check at the start (`nd.check_gradient`, a random direction in the "
        f"fitted values, relative step {gc['relative_step']:g}): autodiff "
        f"{gc['gradient']:.4g}, central differences {gc['finite_difference']:.4g} (and "
        f"{gc['finite_difference_2h']:.4g} at twice the step): "
        + ("they agree." if gc["agree"] else "they disagree."))))

    # ---------------------------------------------------------------- stationarity
    st = res["stationarity"]
    add("\n## Stationarity: the burn-in\n")
    add(f"The first held-out set ({s['heldout_realisations']} realisations, the check's "
        "noise) simulated from t = 0: consecutive "
        f"{WINDOW / 1000:g} s windows of BOLD from the start and from the end of the "
        f"{s['burn_in'] / 1000:g} s burn-in (the FC of each window: the mean of the "
        "realisations'). Its samples after the burn-in score exactly what `params.json` "
        f"says for that set (FC r {report['heldout_each'][0]['fc_r']:.4f}; checked); "
        f"{res['check_seconds']:.0f} s.\n")
    lines += H.table(("from", "window", "mean FC", "FC r, training", "FC r, test", "pairs > 0.9"), [
        ("t = 0" if r["burn_in_samples"] == 0 else
         f"burn-in end ({r['burn_in_samples'] * s['tr'] / 1000:g} s)",
         f"{w:g}-{w + WINDOW / 1000:g} s", f"{r['mean_fc']:.3f}", f"{r['fc_r']:.3f}",
         f"{r.get('test_fc_r', float('nan')):.3f}", f"{100 * r['saturation']:.1f} %")
        for r in st for w in [r["window"] * WINDOW / 1000]])
    gs = res.get("global_signal")
    if gs:
        settled = _settled(gs)
        add(f"\nThe shared transient itself: the global signal (the mean over regions and "
            f"realisations) in {BIN / 1000:g} s bins from t = 0, minus its mean after the "
            f"burn-in, in units of a region's standard deviation: "
            + ", ".join(f"{v:+.2f}" for v in gs)
            + (f". It stays within 1 sd from {settled:g} s on" if settled is not None else
               ". It does not settle within 1 sd in this stretch")
            + f" (the burn-in: {s['burn_in'] / 1000:g} s). A 72 s window's FC varies from "
            "one window to the next with the slow fluctuations it holds (the rows after the "
            "burn-in): a level or an FC r that differs between windows by that much is "
            "sampling noise, not drift.")

    # ---------------------------------------------------------------- grid
    g = res["grid"]
    Gs, sim = np.asarray(g["G"]), g["simulated"]
    add("\n## Grid over G: analytic and simulated\n")
    add(f"Each point: G set, the other parameters as fitted, simulated as the held-out "
        f"check is ({s['burn_in'] / 1000:g} s burn-in, {s['heldout_duration'] / 1000:g} s, "
        f"the first held-out set's noise) but with {g['realisations']} realisations instead "
        f"of {s['heldout_realisations']} (time: {res['grid_seconds']:.0f} s for the grid, "
        f"one `vmap` over G), scored against the training FC (and the test subjects'). "
        f"Fewer realisations average less sampling noise: the FC r of every point is lower "
        "than the held-out check's; the row *fit* is the fitted G scored the same way (the "
        f"first {g['realisations']} realisations of the check above)."
        + (" Beside it the analytic FC of the same network (`nd.LinearFcLoss`: "
           "`nd.linear_fc`, delays ignored; its loss includes the stability barrier, 0 "
           "while the slowest mode decays within 2 s)." if "analytic" in g else "")
        + (f" Figure: `{grid_png}`." if plotted else "") + "\n")
    has_test = "test_fc_r" in sim[0]
    head = ["G", "sim FC r", *["sim test r"][:has_test], "sim mean FC", "sim > 0.9", "sim loss"]
    if "analytic" in g:
        head += ["an FC r", *["an test r"][:has_test], "an mean FC", "an loss"]

    rs = ["fc_r", *["test_fc_r"][:has_test]]

    def row(label, m, an=None):
        cells = [label, *(f"{m[k]:.3f}" for k in rs), f"{m['mean_fc']:.3f}",
                 f"{100 * m['saturation']:.1f} %", f"{m['loss']:.3f}"]
        if "analytic" in g:
            cells += ([f"{an[k]:.3f}" for k in (*rs, "mean_fc", "loss")] if an is not None
                      else [""] * (len(rs) + 2))
        return cells

    G_fit = par.get("coupling.G")
    rows = [(G, row(f"{G:.4f}", m, (g.get("analytic") or [None] * len(Gs))[i]))
            for i, (G, m) in enumerate(zip(Gs, sim))]
    rows.append((G_fit, row(f"**{G_fit:.4f} (fit)**", g["fitted"])))
    lines += H.table(head, [r for _, r in sorted(rows, key=lambda p: p[0])])

    # The simulated points and the fit, scored alike, in order of G.
    order = sorted([(G, m) for G, m in zip(Gs, sim)] + [(G_fit, g["fitted"])],
                   key=lambda p: p[0])
    Gs_all, sim_all = np.array([G for G, _ in order]), [m for _, m in order]
    finite = [i for i, m in enumerate(sim_all) if np.isfinite(m["loss"])]
    best_sim = min(finite, key=lambda i: sim_all[i]["loss"])
    best_r = max(finite, key=lambda i: sim_all[i]["fc_r"])
    cross_sim = _crossing(Gs_all, [m["mean_fc"] for m in sim_all], target_mean)
    cross_sim_test = None if res.get("test_mean_fc") is None else _crossing(
        Gs_all, [m["mean_fc"] for m in sim_all], res["test_mean_fc"])

    def fmt(v):
        return "not reached in the range" if v is None else f"G = {v:.4f}"

    add(f"\nSimulated (the grid and the fit): the lowest loss at G = {Gs_all[best_sim]:.4f} "
        f"(FC r {sim_all[best_sim]['fc_r']:.3f}, mean FC "
        f"{sim_all[best_sim]['mean_fc']:.3f}); the highest FC r at G = "
        f"{Gs_all[best_r]:.4f} ({sim_all[best_r]['fc_r']:.3f}); the mean FC meets the "
        f"training subjects' {target_mean:.3f} at {fmt(cross_sim)} (linear interpolation)"
        + ("" if cross_sim_test is None and res.get("test_mean_fc") is None else
           f", the test subjects' {res['test_mean_fc']:.3f} at {fmt(cross_sim_test)}")
        + ".")
    summary = {"sim_best": float(Gs_all[best_sim]), "sim_cross": cross_sim,
               "sim_cross_test": cross_sim_test}
    if "fine" in g:
        fG, fine = np.asarray(g["fine_G"]), g["fine"]
        ok = [i for i, m in enumerate(fine) if np.isfinite(m["loss"])]
        best_an = min(ok, key=lambda i: fine[i]["loss"])
        best_an_r = max(ok, key=lambda i: fine[i]["fc_r"])
        cross_an = _crossing(fG, [m["mean_fc"] for m in fine], target_mean)
        summary.update(an_best=float(fG[best_an]), an_cross=cross_an,
                       an_best_r=float(fG[best_an_r]))
        add(f"Analytic (every {ANALYTIC_STEP:g} in G, {res['analytic_seconds']:.0f} s with "
            f"the grid's points): the lowest loss at G = {fG[best_an]:.4f} (FC r "
            f"{fine[best_an]['fc_r']:.3f}, mean FC {fine[best_an]['mean_fc']:.3f}), the "
            f"highest FC r at G = {fG[best_an_r]:.4f} ({fine[best_an_r]['fc_r']:.3f}); its "
            f"mean FC meets the training subjects' at {fmt(cross_an)}"
            + (f", the test subjects' at "
               f"{fmt(_crossing(fG, [m['mean_fc'] for m in fine], res['test_mean_fc']))}"
               if res.get("test_mean_fc") is not None else "")
            + f". The fit: G = {G_fit:.4f}.")
    res["summary"] = summary

    # ---------------------------------------------------------------- reading
    add("\n## Reading it\n")
    for bullet in _reading(res, report, target_mean):
        add(f"- {bullet}")
    return "\n".join(lines) + "\n"


def _slowest(history: dict, report: dict) -> str:
    """``; here ...``: the slowest mode's time constant at the fit (linear engine)."""
    a = (history.get("metrics") or {}).get("abscissa")
    best = report.get("best_step")
    if not a or best is None or a[best - 1] is None or a[best - 1] >= 0:
        return ""
    return f"; here it decays in {-1e-3 / a[best - 1]:.2f} s"


def _reading(res: dict, report: dict, target_mean: float) -> list[str]:
    """The report's conclusions, each from the numbers above."""
    out = []
    h, runs = report["heldout"], report.get("runs") or {}
    te = runs.get("test")
    out.append(f"Saturation: {100 * h['saturation']:.1f} % of the held-out pairs exceed 0.9 "
               + ("(none to speak of: the fitted network fluctuates around its fixed point, "
                  "it is not locked into a common state)." if h["saturation"] < 0.01 else
                  "(a saturated FC: part of the network moves together)."))
    gap = h["mean_fc"] - target_mean
    text = (f"Level: the held-out mean FC {h['mean_fc']:.3f} is {gap:+.3f} from the training "
            f"subjects' {target_mean:.3f}")
    if te is not None:
        text += (f" and {h['mean_fc'] - te['empirical_mean_fc']:+.3f} from the test subjects' "
                 f"{te['empirical_mean_fc']:.3f} (the two groups differ by "
                 f"{te['empirical_mean_fc'] - target_mean:+.3f}: the fit can match only the "
                 "level it was given)")
    if report["engine"] == "linear":
        text += (f". The analytic FC that was fitted has mean {report['mean_fc']:.3f}: at the "
                 f"same G the simulated level is {h['mean_fc'] - report['mean_fc']:+.3f} "
                 "from it (benchmarks/linear_fc.md: the analytic level holds within 0.01 "
                 "while the slowest mode decays within about 1 s, and falls behind the "
                 "simulated one as the network nears its instability"
                 + _slowest(res["history"], report) + "). So the fit, exact "
                 "for the analytic FC, lands where the simulated level is "
                 + ("above" if gap > 0 else "below") + " the data's")
    out.append(text + ".")
    if te is not None:
        out.append(f"Pattern: test-subject FC r {te['fc_r']:.3f}, "
                   f"{100 * te['fraction_of_ceiling']:.0f} % of the {te['ceiling']:.3f} "
                   f"ceiling; on the training subjects {runs['train']['fc_r']:.3f}.")
    s = res.get("summary") or {}
    if te is not None and not res["argv"]:
        out.append("The earlier default (`--model rww`, G and sigma fitted by simulation, "
                   "[`fit_rww.md`](fit_rww.md)) reached test-subject FC r 0.627, 70 % of the "
                   "same ceiling, with a held-out mean FC of 0.281.")
    if "an_best" in s:
        step = np.diff(res["grid"]["G"]).mean() if len(res["grid"]["G"]) > 1 else 0.0
        parts = [f"the analytic loss is lowest at G = {s['an_best']:.4f}",
                 f"the simulated one at G = {s['sim_best']:.4f} of the points simulated "
                 f"(the grid's spacing {step:.3f} and the fit)"]
        if s.get("an_cross") is not None and s.get("sim_cross") is not None:
            parts.append(f"the simulated mean FC reaches the training level at G = "
                         f"{s['sim_cross']:.4f}, the analytic at {s['an_cross']:.4f} "
                         f"({s['sim_cross'] - s['an_cross']:+.4f})")
        out.append("Analytic against simulated optimum: " + "; ".join(parts) + ". The FC r "
                   f"alone keeps rising towards the instability (analytic peak at G = "
                   f"{s['an_best_r']:.4f}): the level, not the pattern, places the optimum.")
    st = res["stationarity"]
    first = [r for r in st if r["burn_in_samples"] == 0]
    after = [r for r in st if r["burn_in_samples"] > 0]
    if first and after:
        settled = _settled(res.get("global_signal") or [])
        out.append(f"Burn-in: the first window from t = 0 has mean FC {first[0]['mean_fc']:.3f}"
                   f" ({100 * first[0]['saturation']:.0f} % of pairs above 0.9: the shared "
                   "relaxation from the initial state) against "
                   f"{np.mean([r['mean_fc'] for r in after]):.3f} on average after the burn-in"
                   + (f"; the global signal settles by {settled:g} s, within the "
                      f"{report['settings']['burn_in'] / 1000:g} s burn-in"
                      if settled is not None else "") + ".")
    reg = res.get("regions")
    if reg:
        out.append(f"The least correlated regions in the held-out FC: {', '.join(reg['weakest'])}"
                   f" (in-strength ranks {', '.join(map(str, reg['ranks']))} of {reg['n']}); "
                   f"a region's mean simulated FC correlates {reg['r_sim']:.2f} with its "
                   f"in-strength, its mean empirical FC {reg['r_emp']:.2f}.")
    return out


def options(p) -> None:
    """This benchmark's own flags; the arguments after ``--`` go to ``netdyn fit``."""
    p.epilog = "Options after -- go to netdyn fit."
    p.add_argument("fit_args", nargs="*", help=argparse.SUPPRESS)
    p.add_argument("--grid-points", type=int, default=6,
                   help="simulated G values (default 6; the analytic FC also every "
                   f"{ANALYTIC_STEP:g})")
    p.add_argument("--grid-range", default=None,
                   help="G grid range LO,HI in the units of --G (default: rww-ei-fic "
                   "0.40,0.51, rww 0.214,0.230, else the fitted G +-10 %%)")
    p.add_argument("--grid-realisations", type=int, default=2,
                   help="realisations per simulated grid point (default 2, >= 2: the "
                   "first ones of the held-out check's noise)")
    p.add_argument("--no-quick", action="store_true", help="skip timing netdyn fit --quick")
    p.add_argument("--reuse", metavar="DIR", default=None,
                   help="take the fit from DIR (a finished netdyn fit --out DIR) instead of "
                   "running the command (no wall clock then)")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="fit", options=options, figure=figures)
