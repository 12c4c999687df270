"""Does the default fit recover known parameters? Writes benchmarks/recovery.md (and .json).

For each truth (a model of ``netdyn fit --model`` at values off the start's grid, on the
embedded HCP connectome as the command builds it): its FC from 4 x 288 s of BOLD after
the model's burn-in (key 1), and again with fresh noise (key 2): the r between the two is
the best any fit can reproduce the truth's FC, the ceiling of recovery. Then the default
command fits the first 4 runs, given as its subjects (``netdyn fit --model M --bold
truth.npy --train-subjects 1,2,3,4 --seed 7``: the target is their mean FC, the error bars
leave each run out), and the table gives each recovered value with its interval (whether
it holds the truth), what the
command says of a value without one (the long check's verdict), the held-out FC r
against the truth's FC beside the ceiling, and the time.

    python scripts/benchmarks/bench_recovery.py                  # hours: a simulated fit
                                                                 # (rww, hopf) is ~30 min
    python scripts/benchmarks/bench_recovery.py --only rww-1     # one truth
    python scripts/benchmarks/bench_recovery.py --smoke          # tiny runs, minutes
    python scripts/benchmarks/bench_recovery.py --work DIR       # continue a run stopped in DIR
"""

import datetime
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401 (first: this checkout's netdyn)
import _harness as H
import equinox as eqx
import jax
import numpy as np

import netdyn as nd

jax.config.update("jax_enable_x64", True)

# Truths in the command's units (hopf: per second). rww: on the level of the data's mean
# FC (about 0.37, measured with 4 x 288 s runs: benchmarks/sigma_long.md) at each noise
# level, sigma over 0.0015-0.0036 (at 0.004 the stationary band starts below that level),
# so each truth's FC is like the data's and not the low-activity state's; rww-ei-fic: G
# below the peak of its mean FC (its fit is analytic: G only); hopf: G and sigma.
TRUTHS = {
    "rww-1": ("rww", {"G": 0.22118, "sigma": 0.0015}),
    "rww-2": ("rww", {"G": 0.2213, "sigma": 0.0022}),
    "rww-3": ("rww", {"G": 0.22143, "sigma": 0.0026}),
    "rww-4": ("rww", {"G": 0.22163, "sigma": 0.0031}),
    "rww-5": ("rww", {"G": 0.22195, "sigma": 0.0036}),
    "rww-ei-fic-1": ("rww-ei-fic", {"G": 0.4130, "sigma": 0.001}),
    "rww-ei-fic-2": ("rww-ei-fic", {"G": 0.4570, "sigma": 0.001}),
    "rww-ei-fic-3": ("rww-ei-fic", {"G": 0.4870, "sigma": 0.001}),
    "hopf-1": ("hopf", {"G": 0.61, "sigma": 0.017}),
    "hopf-2": ("hopf", {"G": 1.13, "sigma": 0.026}),
}
BUILD = {"rww": nd.presets.rww, "rww-ei-fic": nd.presets.rww_ei_fic, "hopf": nd.presets.hopf}
SIGNAL = {"rww": "S", "rww-ei-fic": "S_e", "hopf": "x"}
BURN_IN = {"rww": 57_600.0, "rww-ei-fic": 28_800.0, "hopf": 57_600.0}  # the command's
SMOKE = ["--quick", "--duration", "7200", "--burn-in", "7200", "--heldout-duration", "14400"]


def _truth_runs(model: str, values: dict, duration: float, realisations: int, key: int):
    """The truth's runs ``[realisations, samples, nodes]``: ``realisations`` x ``duration``
    ms of its signal at the HCP TR."""
    data = nd.datasets.load("hcp")
    net = BUILD[model](np.asarray(data.weights), np.asarray(data.lengths), **values)
    monitor = (nd.TemporalAverage(period=data.tr, variables=("x",)) if model == "hopf" else
               nd.Bold(period=data.tr, variables=SIGNAL[model]))
    loss = nd.FcLoss(np.eye(80), nd.Heun(), monitor, duration=duration,
                     burn_in=BURN_IN[model], realisations=realisations)
    return np.asarray(eqx.filter_jit(loss.signals)(net, jax.random.key(key)))


def _r(a, b) -> float:
    iu = np.triu_indices(a.shape[0], k=1)
    return float(np.corrcoef(a[iu], b[iu])[0, 1])


def _truth(name: str, smoke: bool, work: Path) -> dict:
    """The truth's runs (key 1) saved as ``work/NAME.npy``, and its FC's figures: mean FC
    at keys 1 and 2, and the ceiling (their FC r); read back from ``work/NAME.truth.json``
    when an earlier run of this script (``--work``) computed them."""
    cached = work / f"{name}.truth.json"
    if cached.is_file() and (work / f"{name}.npy").is_file():
        return H.loads(cached.read_text())
    model, values = TRUTHS[name]
    duration, realisations = (14_400.0, 2) if smoke else (288_000.0, 4)
    runs = _truth_runs(model, values, duration, realisations, 1)
    fc, again = nd.runs_fc(runs), nd.runs_fc(_truth_runs(model, values, duration,
                                                          realisations, 2))
    fc, again = np.asarray(fc), np.asarray(again)
    np.save(work / f"{name}.npy", runs)
    iu = np.triu_indices(fc.shape[0], k=1)
    figures = {"ceiling": _r(fc, again), "truth_mean_fc": float(fc[iu].mean()),
               "again_mean_fc": float(again[iu].mean())}
    cached.write_text(H.dumps(figures) + "\n")
    return figures


def _one(name: str, smoke: bool, work: Path) -> dict:
    model, values = TRUTHS[name]
    realisations = 2 if smoke else 4
    truth = _truth(name, smoke, work)
    # The truth's runs as the command's subjects, all of them fitted: the target is their
    # mean FC, and the error bars leave each run out (the truth data's own sampling spread).
    path = work / f"{name}.npy"
    subjects = ",".join(str(i + 1) for i in range(realisations))
    argv = ["fit", "--model", model, "--bold", str(path), "--train-subjects", subjects,
            "--seed", "7",
            *(SMOKE if smoke else []), "--out", str(work / name), "--overwrite"]
    run = _finished(work / name) or H.fit_here(argv)
    if run["status"] != 0:
        return {"truth": values, "model": model, "error": run["summary"]}
    record = {"truth": values, "model": model, "report": run["report"],
              "seconds": run["seconds"], **truth,
              "finished": run.get("finished") or _utc(time.time()),
              "command": H.without_temporary_paths(
                  "netdyn " + " ".join(argv[:argv.index("--out")]))}
    (work / name / "seconds.txt").write_text(f"{run['seconds']!r}\n")
    # No machine's paths in the saved measurements: the work folder (--work) as <work>, and
    # the folder the fit ran in when it was read back from another one (its settings' out).
    text = H.dumps(record)
    ran_in = ((run["report"] or {}).get("settings") or {}).get("out")
    for folder in {str(work), *([str(Path(ran_in).parent)] if ran_in else [])}:
        text = text.replace(folder, "<work>")
    return H.loads(text)


def _finished(out: Path) -> dict | None:
    """The command's result in ``out`` when an earlier run of this script (``--work``)
    finished it: its ``params.json``, and its wall seconds (recorded by this script, else
    from the folder's file times: ``settings.json`` written at its start, ``params.json``
    at its end)."""
    params = out / "params.json"
    if not params.is_file():
        return None
    seconds = out / "seconds.txt"
    took = (float(seconds.read_text()) if seconds.is_file() else
            params.stat().st_mtime - (out / "settings.json").stat().st_mtime)
    report = H.loads(H.without_temporary_paths(params.read_text()))
    return {"status": 0, "seconds": took, "report": report, "summary": [],
            "finished": _utc(params.stat().st_mtime)}


def _utc(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def measure(args) -> dict:
    work = args.work or Path(tempfile.mkdtemp(prefix="netdyn-recovery-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work folder (--work continues it): {work}", flush=True)
    names = args.only or (["rww-2", "rww-ei-fic-2", "hopf-1"] if args.smoke else list(TRUTHS))
    out = {}
    for name in names:
        print(f"=== {name}: {TRUTHS[name]}", flush=True)
        out[name] = _one(name, args.smoke, work)
    duration, realisations = (14_400.0, 2) if args.smoke else (288_000.0, 4)
    # The options measured with, without where the files went (H.main keeps this argv).
    argv = sys.argv[1:]
    if "--work" in argv:
        argv = argv[:argv.index("--work")] + argv[argv.index("--work") + 2:]
    m = {"truths": out, "duration": duration, "realisations": realisations, "earlier": [],
         "argv": argv}
    for path in args.merge or []:  # earlier runs' truths, each with its command and machine
        old = H.loads(Path(path).read_text())
        kept = {n: {**r, "command": H.without_temporary_paths(r.get("command", ""))}
                for n, r in old["truths"].items() if n not in out}
        if not kept:
            continue
        m["truths"] = {**kept, **m["truths"]}
        m["earlier"] += [*old.get("earlier", []),
                         {k: old.get(k) for k in ("argv", "machine", "end_load", "max_load")}
                         | {"names": sorted(kept)}]
    return m


def _recovered(r: dict, key: str) -> tuple[str, bool | None]:
    """The recovered value of ``key`` ("G" or "sigma") with its interval, and whether the
    interval (else the value within 15 %) holds the truth; '-' when not fitted."""
    rep, truth = r["report"], r["truth"][key]
    full = {"G": "coupling.G", "sigma": "noise.sigma"}[key]
    value = rep["parameters"].get(full)
    if value is None:
        return "not fitted", None
    u = rep.get("uncertainty") or {}
    names = u.get("names") or []
    if full in names and u.get("valid") and u["constrained"][names.index(full)]:
        i = names.index(full)
        lo, hi = u["lower"][i], u["upper"][i]
        return f"{value:.4g} [{lo:.4g}, {hi:.4g}]", lo <= truth <= hi
    checked = ((rep.get("long_check") or {}).get("parameters") or {}).get(full) or {}
    verdict = checked.get("verdict", "not run")
    lo, hi = checked.get("bounds") or (None, None)
    if lo is not None or hi is not None:
        # Bounded by the long check (the held-out loss higher there on every set): the
        # bounds the command reports, holding the truth or not (open where None).
        bound = (f"between {lo:.4g} and {hi:.4g}" if lo is not None and hi is not None else
                 f"below {hi:.4g}" if hi is not None else f"above {lo:.4g}")
        return (f"{value:.4g} (no interval; long check: {verdict}, {bound})",
                (lo is None or lo < truth) and (hi is None or truth < hi))
    span = ""
    if verdict == "flat" and checked.get("outer_factors"):
        values = checked["values"] + checked["outer_values"]
        span = f" from {min(values):.4g} to {max(values):.4g}"
    start = (rep.get("initial") or {}).get(full)
    if start is not None and abs(value - start) <= 0.01 * abs(start):
        # A value the fit left where it started was not recovered, wherever the truth is.
        return f"{value:.4g} (its start; no interval; long check: {verdict}{span})", False
    return (f"{value:.4g} (no interval; long check: {verdict}{span})",
            abs(value - truth) <= 0.15 * truth)


def render(m: dict) -> str:
    rows, held, counted = [], 0, 0
    for name, r in m["truths"].items():
        if "error" in r:
            rows.append([name, r["model"], r["truth"], "", "failed: " + " / ".join(r["error"])]
                        + [""] * 5)
            continue
        g, g_ok = _recovered(r, "G")
        s, s_ok = _recovered(r, "sigma")
        for ok in (g_ok, s_ok):
            if ok is not None:
                counted += 1
                held += bool(ok)
        h, hsd = r["report"]["heldout"], r["report"].get("heldout_sd") or {}
        rows.append([name, r["model"], f"G {r['truth']['G']:g}, sigma {r['truth']['sigma']:g}",
                     f"{r['truth_mean_fc']:.3f} / {r['again_mean_fc']:.3f}",
                     f"{g} {'✓' if g_ok else ('✗' if g_ok is False else '')}",
                     f"{s} {'✓' if s_ok else ('✗' if s_ok is False else '')}",
                     f"{h['fc_r']:.3f} ± {hsd.get('fc_r', 0.0):.3f}", f"{r['ceiling']:.3f}",
                     f"{h['fc_r'] - r['ceiling']:+.3f}", f"{r['seconds']:.0f}"])
    runs, seconds = m.get("realisations", 4), m.get("duration", 288_000.0) / 1000
    lines = [
        "# Recovery: the default fit on FC made by its own model", "",
        f"Each truth's FC: {runs} x {seconds:g} s of BOLD (the HCP TR, "
        "720 ms; hopf: its x averaged over each TR) after the command's burn-in, "
        "noise key 1, on the embedded connectome as `netdyn fit` builds it. Fitted with the "
        "default command and another seed, its 4 runs given as the subjects, all fitted "
        "(`netdyn fit --model M --bold truth.npy --train-subjects 1,2,3,4 --seed 7`: the "
        "error bars leave each run out). "
        "A value counts as recovered when its 95 % interval holds the truth; without an "
        "interval, when the bounds the long check found (the held-out loss higher there on "
        "every held-out set, beyond two standard errors; open on a side without one) hold "
        "it; else when it is within 15 % of it and the fit moved it from its start (a value "
        "left within 1 % of where it started is not counted, wherever the truth lies). The "
        "held-out FC r is the command's own "
        "(new noise, mean ± sd over its held-out sets, against the truth's FC); the ceiling "
        "is the truth model's own FC r between two noise keys, the best a recovery can reach.",
        "", f"Command: `python scripts/benchmarks/bench_recovery.py {_shown(m)}`",
        "", *H.table(["truth", "model", "values", "its mean FC (key 1 / 2)", "G recovered",
                      "sigma recovered",
                      "held-out FC r", "ceiling", "difference", "seconds"], rows),
        "", f"Recovered (interval or the long check's bounds hold the truth, or within 15 "
        f"% without either and moved from its start): {held} of {counted} fitted values.",
        *_by_model(m["truths"]), "",
        "Each fit finished (its command's end): " + ", ".join(
            f"{n} {r['finished']}" for n, r in m["truths"].items() if r.get("finished"))
        + " (those read back with `--work` ran on this machine before this report was "
        "written)." if any(r.get("finished") for r in m["truths"].values()) else "", "",
        *H.machine(m), *_earlier(m.get("earlier") or []), ""]
    return "\n".join(lines)


def _by_model(truths: dict) -> list[str]:
    """Per model: how many truths had G within 0.001 (and the largest relative error) and
    sigma within 15 %, and the long check's verdicts on sigma."""
    lines = []
    for model in dict.fromkeys(r["model"] for r in truths.values()):
        rs = [r for r in truths.values() if r["model"] == model and "error" not in r]
        if not rs:
            continue
        fitted = [r for r in rs if "noise.sigma" in r["report"]["parameters"]]
        err = [abs(r["report"]["parameters"]["coupling.G"] - r["truth"]["G"]) for r in rs]
        worst = max(range(len(rs)), key=lambda i: err[i] / rs[i]["truth"]["G"])
        sig = sum(abs(r["report"]["parameters"]["noise.sigma"] - r["truth"]["sigma"])
                  <= 0.15 * r["truth"]["sigma"] for r in fitted)
        verdicts = [(((r["report"].get("long_check") or {}).get("parameters") or {}).get(
            "noise.sigma") or {}).get("verdict", "not run") for r in fitted]
        text = (f"- {model}: G within 0.001 of the truth in {sum(e <= 1e-3 for e in err)} of "
                f"{len(rs)} (largest error {err[worst]:.2g}, "
                f"{100 * err[worst] / rs[worst]['truth']['G']:.1f} %)")
        if fitted:
            text += (f"; sigma within 15 % in {sig} of {len(fitted)}; the long check on "
                     f"sigma: {', '.join(verdicts)}")
        lines.append(text + ".")
    return ["", *lines] if lines else []


def _shown(m: dict) -> str:
    """The command's options as the report shows them: without ``--out`` and ``--work``
    (where files went, not what was measured)."""
    argv = H.shown_argv(m)
    if "--work" in argv:
        i = argv.index("--work")
        argv = argv[:i] + argv[i + 2:]
    return " ".join(argv)


def _earlier(runs: list[dict]) -> list[str]:
    """The commands and machines of the earlier runs whose truths the report keeps."""
    out = []
    for run in runs:
        out += ["", f"### Earlier run kept: {', '.join(run['names'])}", "",
                f"Command: `python scripts/benchmarks/bench_recovery.py {_shown(run)}`", "",
                *H.machine(run)[3:]]
    return out


def options(p) -> None:
    p.add_argument("--only", nargs="+", choices=list(TRUTHS), default=None,
                   help="these truths only")
    p.add_argument("--work", type=Path, default=None, metavar="DIR",
                   help="the fits' folder (default: a new temporary one); a truth whose fit "
                   "finished there in an earlier run is read back, not fitted again")
    p.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                   help="keep the truths of these earlier runs' .json in the report (those "
                   "measured now replace them), each run's command and machine listed")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="recovery", options=options)
