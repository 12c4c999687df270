"""Does the FC of rww see its noise on the level? Writes benchmarks/sigma_level.md (and .json).

Issue 39: ``netdyn fit --model rww`` never moves sigma, its short loss does not see it. Here,
for a truth of bench_recovery (its target: the mean FC of 4 x 288 s of BOLD after the
model's burn-in, noise key 1, as there), for each sigma of a grid: G is found on the level
(the model's mean FC meets the target's) exactly as the command finds it (its own scan:
17 values, 8 bisections, one realisation of 43.2 s, the seed's key; where it finds no
crossing, as the command then stops, the G of the scan's highest mean FC is taken and
marked), and at (G*(sigma), sigma) the FC is measured (a) long: 2 sets of 4 x 288 s
with fresh keys (2 and 3), their FC r, mean FC and RMSE against the target and the FC r
between the two sets; (b) short: the fit's own loss (4 realisations x 43.2 s, metric
1-r+huber) at 4 keys, its value and FC r, mean and sd. Is there an optimum at the true
sigma, and does a short loss resolve it? The same keys serve every sigma (common random
numbers). The points measured so far are kept in sigma_level.partial.json beside the
report until the whole is written.

    python scripts/studies/bench_sigma_level.py                       # rww-2, ~20 min, 2 cores
    python scripts/studies/bench_sigma_level.py --only rww-2 rww-4 --sigmas 0.0016 0.0033
    python scripts/studies/bench_sigma_level.py --smoke               # tiny runs, minutes
"""

import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common  # noqa: F401 (first: this checkout's netdyn)
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from bench_recovery import SMOKE, TRUTHS, _r, _truth_runs

import netdyn as nd
from netdyn._loss._base import evaluate_compiled

MODELS = nd.presets.MODELS

jax.config.update("jax_enable_x64", True)

SIGMAS = [0.0012, 0.0016, 0.0022, 0.0030, 0.0040]
LONG_KEYS, SHORT_KEYS = (2, 3), (11, 12, 13, 14)


def _evaluate(loss, net, key: int) -> tuple[dict, np.ndarray]:
    value, metrics, f = evaluate_compiled(loss, net, jax.random.key(key))
    return {"loss": float(value), **{k: float(metrics[k]) for k in ("fc_r", "mean_fc", "rmse")}}, \
        np.asarray(f)


def _point(path: Path, sigma: float, smoke: bool, side: str | None) -> dict:
    subjects = "1,2" if smoke else "1,2,3,4"
    argv = ["fit", "--model", "rww", "--bold", str(path), "--train-subjects", subjects,
            "--seed", "7", "--sigma", repr(sigma), "--quiet", *(SMOKE if smoke else [])]
    plan = nd.cli.plan(argv)
    args, t0 = plan.options, time.perf_counter()
    # --side: the command's scan with the other crossing (the command's own: rww's falling)
    model = MODELS["rww"] if side is None else dataclasses.replace(MODELS["rww"],
                                                                   crossing=side)
    # The command's scan of G (``Preset.scan_start``, a simulated scan's tolerance the
    # loss's level width), in the units of --G.
    found = model.scan_start(plan.loss, plan.network, grid=args.grid, bisect=args.bisect,
                             key=jax.random.key(args.seed), tolerance=plan.loss.level_width)
    scan = nd.scan_record(found, model.factor("coupling.G"))
    out = {"sigma": sigma, "G": scan["start"], "bracket": scan["bracket"],
           "scan_seconds": time.perf_counter() - t0, "scan_grid": scan["grid"],
           "settings": {k: getattr(args, k) for k in ("grid", "bisect", "duration",
                                                      "realisations", "burn_in", "loss")}}
    print(f"  sigma {sigma:g}: G on the level {scan['start']} ({out['scan_seconds']:.0f} s)",
          flush=True)
    if scan["start"] is None:  # the command stops here (no crossing): take the scan's peak
        g = scan["grid"]
        i = int(np.nanargmax(g["mean_fc"]))
        out["G"], out["peak_mean_fc"] = g["G"][i], g["mean_fc"][i]
        print(f"  no crossing: the scan's peak, G {out['G']:.6f} (mean FC "
              f"{out['peak_mean_fc']:.4f}, level {scan['target_mean_fc']:.4f})", flush=True)
    net = eqx.tree_at(lambda n: n.coupling.G, plan.network,
                      jnp.asarray(out["G"] * model.factor("coupling.G"), float))
    t0 = time.perf_counter()
    long = [_evaluate(plan.heldout_loss, net, k) for k in LONG_KEYS]
    out["long"] = [m for m, _ in long]
    out["long_between"] = _r(long[0][1], long[1][1])
    out["long_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    out["short"] = [_evaluate(plan.simulated_loss, net, k)[0] for k in SHORT_KEYS]
    out["short_seconds"] = time.perf_counter() - t0
    print(f"  long FC r {[round(m['fc_r'], 4) for m in out['long']]} "
          f"({out['long_seconds']:.0f} s), short loss "
          f"{[round(m['loss'], 4) for m in out['short']]} ({out['short_seconds']:.0f} s)",
          flush=True)
    return out


def measure(args) -> dict:
    work = Path(tempfile.mkdtemp(prefix="netdyn-sigma-level-"))
    args.out.parent.mkdir(parents=True, exist_ok=True)  # for the partial measurements
    duration, realisations = (14_400.0, 2) if args.smoke else (288_000.0, 4)
    sigmas = args.sigmas or ([0.0016, 0.0022] if args.smoke else SIGMAS)
    out = {}
    for name in args.only:
        model, values = TRUTHS[name]
        print(f"=== {name}: {values}", flush=True)
        t0 = time.perf_counter()
        runs = _truth_runs(model, values, duration, realisations, 1)
        np.save(work / f"{name}.npy", runs)
        fc = np.asarray(nd.runs_fc(runs))
        truth = {"truth": values, "target_mean_fc": float(fc[np.triu_indices(80, 1)].mean()),
                 "target_seconds": time.perf_counter() - t0, "points": []}
        truth["side"], truth["argv"] = args.side or MODELS["rww"].crossing, sys.argv[1:]
        out[name if args.side is None else f"{name} ({args.side})"] = truth
        grid = sorted(set(sigmas) | ({values["sigma"]} if args.sigmas is None else set()))
        for sigma in grid:
            truth["points"].append(_point(work / f"{name}.npy", sigma, args.smoke,
                                          args.side))
            args.out.with_suffix(".partial.json").write_text(H.dumps({"truths": out}))
    args.out.with_suffix(".partial.json").unlink()  # measured whole: main writes the .json
    return {"truths": out, "duration": duration, "realisations": realisations,
            "long_keys": list(LONG_KEYS), "short_keys": list(SHORT_KEYS)}


def _ms(xs) -> str:
    return f"{np.mean(xs):.4f} ± {np.std(xs, ddof=1):.4f}" if len(xs) > 1 else f"{xs[0]:.4f}"


def render(m: dict) -> str:
    c = next((p["settings"] for t in m["truths"].values() for p in t["points"]), None) or {
        "grid": 17, "bisect": 8, "duration": 43_200.0, "realisations": 4, "loss": "1-r+huber"}
    lines = ["# sigma on the level: does rww's FC see its noise?", "",
             f"Target: each truth's mean FC of {m['realisations']} x {m['duration'] / 1000:g} "
             "s of BOLD (HCP TR 720 ms) after the 57.6 s burn-in, noise key 1 (as in "
             "bench_recovery). For each sigma, G is found on the level by the command's own "
             f"scan (`netdyn fit --model rww --sigma S --seed 7`: {c['grid']} values, "
             f"{c['bisect']} bisections, one realisation of {c['duration'] / 1000:g} s). "
             "Long: 2 sets of the same length as the target, "
             f"keys {m['long_keys']}, against the target (FC r, mean FC, RMSE: mean of the "
             "2 sets; 'between': FC r of set 1 with set 2). Short: the fit's own loss "
             f"({c['loss']}, {c['realisations']} x {c['duration'] / 1000:g} s) at keys "
             f"{m['short_keys']}, mean ± sd.", "",
             f"Command: `python scripts/studies/bench_sigma_level.py "
             f"{' '.join(H.shown_argv(m))}`", ""]
    head = ["sigma", "G on the level (the scan's start)", "long FC r",
            "long FC r between sets", "long mean FC", "long RMSE", "short loss",
            "short FC r", "seconds (scan + long + short)"]
    for name, t in m["truths"].items():
        lines += [f"## {name}: G {t['truth']['G']:g}, sigma {t['truth']['sigma']:g} "
                  f"(target mean FC {t['target_mean_fc']:.4f}; target made in "
                  f"{t['target_seconds']:.0f} s; the scan's crossing: "
                  f"{t.get('side', 'falling')})", "",
                  f"Its command: `python scripts/studies/bench_sigma_level.py "
                  f"{' '.join(H.shown_argv(t))}`", ""]
        rows = []
        for p in t["points"]:
            mark = " (truth)" if p["sigma"] == t["truth"]["sigma"] else ""
            lo, sh = p["long"], p["short"]
            g = (f"{p['G']:.6f}" if "peak_mean_fc" not in p else
                 f"no crossing: {p['G']:.6f}, the scan's peak (mean FC {p['peak_mean_fc']:.3f})")
            b = p.get("bracket")
            if b and not min(b) <= p["G"] <= max(b):  # the start: the lowest loss seen
                g += f" (the crossing: {b[0]:.6f}-{b[1]:.6f})"
            rows.append([f"{p['sigma']:g}{mark}", g,
                         f"{np.mean([x['fc_r'] for x in lo]):.4f} "
                         f"({', '.join(format(x['fc_r'], '.4f') for x in lo)})",
                         f"{p['long_between']:.4f}",
                         f"{np.mean([x['mean_fc'] for x in lo]):.4f}",
                         f"{np.mean([x['rmse'] for x in lo]):.4f}",
                         _ms([x["loss"] for x in sh]), _ms([x["fc_r"] for x in sh]),
                         f"{p['scan_seconds']:.0f} + {p['long_seconds']:.0f} + "
                         f"{p['short_seconds']:.0f}"])
        lines += [*H.table(head, rows), ""]
    lines += ["## Reading", "", m.get("reading", "(not written yet)"), "", *H.machine(m), ""]
    return "\n".join(lines)


def options(p) -> None:
    p.add_argument("--only", nargs="+", choices=[n for n in TRUTHS if n.startswith("rww-")
                                                   and "ei" not in n], default=["rww-2"],
                   help="these rww truths (default rww-2)")
    p.add_argument("--side", choices=["falling", "rising"], default=None,
                   help="the crossing the scan of G looks for (default: the command's)")
    p.add_argument("--sigmas", nargs="+", type=float, default=None,
                   help="the sigma grid (default 0.0012 0.0016 0.0022 0.003 0.004 and the "
                   "truth's)")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="sigma_level", options=options)
