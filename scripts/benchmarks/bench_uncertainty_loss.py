"""Coverage of ``nd.uncertainty``'s intervals with another ``nd.FcLoss`` metric (by default
``netdyn fit``'s ``"1-r+huber"``) on ``bench_uncertainty.py``'s problem: a noisy linear
network on 10 regions with known G* = 0.0877, data sets of 4 runs of 20 s, the fit from
0.7 G*, 4 fresh noise keys and each run left out. Writes benchmarks/uncertainty_loss.md
(and .json): how often the intervals hold G* at several levels, and the reported sd
against the spread of the fitted G over the data sets.

    python scripts/benchmarks/bench_uncertainty_loss.py               # ~10 min, 1 core
    python scripts/benchmarks/bench_uncertainty_loss.py --reps 2 --no-write   # smoke
"""

import argparse
import json
import time
from pathlib import Path

import _common as C  # first: this checkout's netdyn
import bench_uncertainty as B
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import netdyn as nd


def fc_loss(target, metric: str, realisations=B.REALISATIONS):
    return nd.FcLoss(target, nd.Heun(), nd.TemporalAverage(period=B.PERIOD),
                     duration=B.DURATION, dt=B.DT, burn_in=B.BURN_IN,
                     realisations=realisations, metric=metric)


def repetition(rep: int, seed: int, truth, simulate_runs, metric: str) -> dict:
    key = B.streams(seed, rep)
    runs = list(np.asarray(simulate_runs(truth, key["data"])))
    loss = fc_loss(nd.runs_fc(runs), metric)
    start = eqx.tree_at(B.WHERE, truth, jnp.asarray(B.START * B.G_TRUE))
    t = time.perf_counter()
    fitted, G, value, grad = B._fit(loss, start, key["fit"], B.OPT, B.STEPS)
    t_fit = time.perf_counter() - t
    leave = [loss.replace(target=nd.runs_fc(runs[:r] + runs[r + 1:])) for r in range(B.RUNS)]
    t = time.perf_counter()
    u = nd.uncertainty(loss, fitted, B.WHERE, key=key["fit"], noise_keys=key["noise"],
                       leave_one_out=leave, level=B.LEVEL)
    return {"rep": rep, "G": G, "loss": value, "grad": grad, **B._plain(u),
            "seconds": {"fit": t_fit, "uncertainty": time.perf_counter() - t}}


def summarise(rows: list[dict]) -> dict:
    M = len(rows)
    G = np.array([r["G"] for r in rows])
    sd, dof = np.array([r["sd"] for r in rows]), np.array([r["dof"] for r in rows])
    levels = {}
    for level in B.LEVELS:
        q = np.array([nd.t_quantile((1 + level) / 2, d) for d in dof])
        hits = int(np.sum(np.abs(G - B.G_TRUE) <= q * sd))
        levels[str(level)] = {"hits": hits, "coverage": hits / M, "ci": B.wilson(hits, M)}
    spread = float(np.std(G, ddof=1))
    return {"reps": M, "valid": int(sum(r["valid"] for r in rows)), "levels": levels,
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


def report(args, info, s: dict, wall: float, end_load: str) -> str:
    lines = [
        f"# Interval coverage with the `{args.metric}` loss",
        "",
        f"Written by `python scripts/benchmarks/bench_uncertainty_loss.py --metric "
        f"{args.metric} --reps {args.reps}` in {wall:.0f} s. The problem of "
        "`uncertainty.md` (a noisy linear network on 10 regions, known G* = "
        f"{B.G_TRUE}, data sets of {B.RUNS} runs of {B.DURATION / 1000:g} s, fit from "
        f"{B.START} G*, {B.NOISE_KEYS} fresh noise keys, each run left out), with "
        f"`nd.FcLoss(..., metric=\"{args.metric}\")`.",
        "",
        "| level | intervals holding G* | coverage | 95 % CI of the coverage |",
        "|---|---|---|---|",
    ]
    for level, c in s["levels"].items():
        lines.append(f"| {level} | {c['hits']}/{s['reps']} | {c['coverage']:.3f} | "
                     f"[{c['ci'][0]:.3f}, {c['ci'][1]:.3f}] |")
    lines += [
        "",
        "| | |",
        "|---|---|",
        f"| valid (at a minimum) | {s['valid']}/{s['reps']} |",
        f"| fitted G: mean, spread (sd over data sets) | {s['G_mean']:.5f}, "
        f"{s['G_spread']:.5f} |",
        f"| reported sd (rms) / spread | {s['sd_rms']:.5f} / {s['G_spread']:.5f} = "
        f"{s['sd_over_spread']:.2f} |",
        f"| noise part, data part (rms) | {s['noise_sd_rms']:.5f}, {s['data_sd_rms']:.5f} |",
        f"| largest gradient at the kept point; its Newton step in reported sds | "
        f"{s['max_grad']:.2e}; {s['newton_over_sd_max']:.2e} |",
        f"| seconds per fit, per `nd.uncertainty` | {s['seconds_fit']:.1f}, "
        f"{s['seconds_uncertainty']:.1f} |",
        "",
        "Raw numbers per repetition: `uncertainty_loss.json`.",
    ]
    lines += C.machine_section(info, end_load)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metric", default="1-r+huber",
                        choices=("rmse", "1-r", "1-r+mean", "1-r+huber"))
    parser.add_argument("--reps", type=int, default=B.REPS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(C.RESULTS / "uncertainty_loss.md"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    info = C.machine_info()
    wall = time.perf_counter()
    w, lengths, _ = B.connectome()
    truth = B.network(w, lengths, B.G_TRUE)
    simulate_runs = eqx.filter_jit(fc_loss(np.eye(B.NODES), args.metric, B.RUNS).signals)
    rows = []
    for rep in range(args.reps):
        rows.append(repetition(rep, args.seed, truth, simulate_runs, args.metric))
        r = rows[-1]
        print(f"{rep:3d} G {r['G']:.5f} sd {r['sd']:.5f} (noise {r['noise_sd']:.5f}, data "
              f"{r['data_sd']:.5f}) hit {r['lower'] <= B.G_TRUE <= r['upper']:d} "
              f"({time.strftime('%H:%M:%S')}, load {C.loadavg()})", flush=True)
    s = summarise(rows)
    wall = time.perf_counter() - wall
    print(json.dumps(s, indent=1))
    if args.no_write:
        return
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(
        {"metric": args.metric, "seed": args.seed, "machine": info, "wall_seconds": wall,
         "summary": s, "repetitions": rows}, indent=1))
    out.write_text(report(args, info, s, wall, C.loadavg()), encoding="utf-8")
    print(f"wrote {out} (and .json)")


if __name__ == "__main__":
    jax.config.update("jax_enable_x64", True)
    main()
