"""On the level found with long runs, does rww's FC or its FCD see the noise? Writes
benchmarks/sigma_long.md (and .json).

Issue 39, after bench_sigma_level: there, G was put on the level by the command's short scan
(one 43.2 s realisation), and long runs then left the level (long mean FC 0.32-0.40 against
the target's 0.374), so the FC r along sigma could not be read. Here the level is found with
long runs themselves. For the truth rww-2 (G 0.2213, sigma 0.0022; its target: 4 x 288 s of
BOLD after the command's 57.6 s burn-in, noise key 1, as in bench_recovery) and each sigma
of a grid, G is stepped from just below that sigma's jump (where the mean FC leaps from the
low state to its peak) down the falling side, each point simulated as 4 x 288 s (key 2 at
every point: common random numbers). Each point's mean FC, its FC r and RMSE against the
target and the KS distance between its pooled FCD values and the target's (the command's
FCD: 60 s windows, 2 s steps, in TRs) are measured. G on the level (where the long mean FC
falls through the target's: the command's crossing) is interpolated between the two grid
points that bracket it, and the metrics with it. The truth again with key 3 gives the
ceiling (the same model, fresh noise). Is there an optimum at the true sigma in the FC r,
the RMSE or the FCD KS?

    python scripts/studies/bench_sigma_long.py            # ~15 min, 2 cores
    python scripts/studies/bench_sigma_long.py --smoke    # tiny runs, a minute
"""

import time

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common  # noqa: F401 (first: this checkout's netdyn)
import _harness as H
import equinox as eqx
import jax
import numpy as np
from bench_recovery import BURN_IN, TRUTHS

import netdyn as nd

jax.config.update("jax_enable_x64", True)

TRUTH = "rww-2"
SIGMAS = [0.0012, 0.0016, 0.0022, 0.0030, 0.0040]
# Where each sigma's mean FC jumps from the low state (about 0.04) to its peak, as the
# command's scan found it in bench_sigma_level (its peak's G): each sigma's grid starts just
# below it and runs down the falling side, where the command's level lies.
JUMP = ([0.0012, 0.0016, 0.0022, 0.0030, 0.0040],
        [0.221047, 0.221094, 0.221387, 0.221680, 0.222266])
TR, WINDOW, STEP = 720.0, 83, 3  # the command's FCD on HCP: 60 s and 2 s in whole TRs


def _loss(duration: float, realisations: int, burn_in: float) -> nd.FcLoss:
    monitor = nd.Bold(period=TR, variables="S")
    return nd.FcLoss(np.eye(80), nd.Heun(), monitor, duration=duration, burn_in=burn_in,
                     realisations=realisations)


def _net(G: float, sigma: float):
    data = nd.datasets.load("hcp")
    return nd.presets.rww(np.asarray(data.weights), np.asarray(data.lengths), G=G,
                          sigma=sigma)


def ks(a: np.ndarray, b: np.ndarray) -> float:
    """The (unsmoothed) two-sample Kolmogorov-Smirnov statistic, sup |F_a - F_b|."""
    a, b = np.sort(a), np.sort(b)
    z = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, z, side="right") / a.size
                               - np.searchsorted(b, z, side="right") / b.size)))


def _fcd(runs: np.ndarray, window: tuple[int, int]) -> np.ndarray:
    """The FCD values (above the diagonal) of every run, pooled."""
    return np.concatenate([np.asarray(nd.fcd_values(nd.fcd(r, *window), k=1))
                           for r in runs])


def _metrics(runs: np.ndarray, target: dict) -> dict:
    fc = np.asarray(nd.runs_fc(runs))
    iu = np.triu_indices(fc.shape[0], k=1)
    t = target["fc"][iu]
    fcd = _fcd(runs, target["window"])
    return {"mean_fc": float(fc[iu].mean()), "fc_r": float(np.corrcoef(fc[iu], t)[0, 1]),
            "rmse": float(np.sqrt(np.mean((fc[iu] - t) ** 2))),
            "fcd_ks": ks(fcd, target["fcd"]), "fcd_mean": float(np.mean(fcd)),
            "fcd_sd": float(np.std(fcd))}


def _on_level(points: list[dict], level: float) -> dict | None:
    """The metrics linearly interpolated in G to where the long mean FC falls through
    ``level`` (the command's crossing: the last such pair), or None where none does."""
    for p, q in reversed(list(zip(points, points[1:]))):
        if p["mean_fc"] >= level > q["mean_fc"]:
            w = (level - p["mean_fc"]) / (q["mean_fc"] - p["mean_fc"])
            return {k: (1 - w) * p[k] + w * q[k] for k in p if isinstance(p[k], float)}
    return None


def measure(args) -> dict:
    duration, realisations = (14_400.0, 2) if args.smoke else (288_000.0, 4)
    burn_in = 7_200.0 if args.smoke else BURN_IN["rww"]
    window = (10, 2) if args.smoke else (WINDOW, STEP)
    loss = _loss(duration, realisations, burn_in)
    values = TRUTHS[TRUTH][1]
    signals = eqx.filter_jit(loss.signals)
    t0 = time.perf_counter()
    runs = np.asarray(signals(_net(**values), jax.random.key(1)))
    target = {"fc": np.asarray(nd.runs_fc(runs)), "window": window,
              "fcd": _fcd(runs, window)}
    again = _metrics(np.asarray(signals(_net(**values), jax.random.key(3))), target)
    out = {"truth": values, "duration": duration, "realisations": realisations,
           "burn_in": burn_in, "fcd_window": list(window), "target_seconds":
           time.perf_counter() - t0, "ceiling": again, "sigmas": []}
    out["target_mean_fc"] = level = _metrics(runs, target)["mean_fc"]
    print(f"target mean FC {level:.4f}; the truth again (key 3): {again}", flush=True)
    count = 3 if args.smoke else args.points
    for sigma in args.sigmas or ([0.0022] if args.smoke else SIGMAS):
        start = float(np.interp(sigma, *JUMP)) - args.before
        grid = np.round(start + args.step * np.arange(count), 6)
        t0 = time.perf_counter()
        sim = nd.sweep(lambda n: loss.signals(n, jax.random.key(2)), _net(start, sigma),
                       grid, where=lambda n: n.coupling.G, batch_size=args.batch)
        points = [{"G": float(g), **_metrics(np.asarray(s), target)}
                  for g, s in zip(grid, sim)]
        row = {"sigma": sigma, "points": points, "level": _on_level(points, level),
               "seconds": time.perf_counter() - t0}
        out["sigmas"].append(row)
        print(f"sigma {sigma:g} ({row['seconds']:.0f} s): mean FC "
              f"{[round(p['mean_fc'], 3) for p in points]}; on the level {row['level']}",
              flush=True)
    return out


def _f(x, spec=".4f") -> str:
    return "–" if x is None else format(x, spec)


def render(m: dict) -> str:
    t, c = m["truth"], m["ceiling"]
    lines = ["# sigma on the long level: does rww's FC or FCD see its noise?", "",
             f"Truth {TRUTH}: G {t['G']:g}, sigma {t['sigma']:g}; its target: "
             f"{m['realisations']} x {m['duration'] / 1000:g} s of BOLD (TR 720 ms) after a "
             f"{m['burn_in'] / 1000:g} s burn-in, noise key 1 (target mean FC "
             f"{m['target_mean_fc']:.4f}). Each point: the same length, key 2 at every "
             "point. FCD: windows of "
             f"{m['fcd_window'][0]} TRs, steps of {m['fcd_window'][1]} TRs, pooled over the "
             "runs; KS: the two-sample statistic against the target's pooled values. 'On "
             "the level': interpolated in G to where the long mean FC meets the target's.",
             "", f"Command: `python scripts/studies/bench_sigma_long.py "
             f"{' '.join(H.shown_argv(m))}`", "",
             f"Ceiling (the truth again, key 3): mean FC {c['mean_fc']:.4f}, FC r "
             f"{c['fc_r']:.4f}, RMSE {c['rmse']:.4f}, FCD KS {c['fcd_ks']:.4f}.", "",
             "## On the level", ""]
    head = ["sigma", "G on the level", "FC r", "RMSE", "FCD KS", "FCD mean", "FCD sd",
            "seconds"]
    rows = [[f"{s['sigma']:g}" + (" (truth)" if s["sigma"] == t["sigma"] else ""),
             *([_f(s["level"][k], f) for k, f in (("G", ".5f"), ("fc_r", ".4f"),
                                                   ("rmse", ".4f"), ("fcd_ks", ".4f"),
                                                   ("fcd_mean", ".4f"), ("fcd_sd", ".4f"))]
               if s["level"] else ["no crossing", *["–"] * 5]),
             f"{s['seconds']:.0f}"] for s in m["sigmas"]]
    lines += [*H.table(head, rows), "", "## Every point", ""]
    head = ["sigma", "G", "mean FC", "FC r", "RMSE", "FCD KS", "FCD mean", "FCD sd"]
    rows = [[f"{s['sigma']:g}", f"{p['G']:.4f}", *(f"{p[k]:.4f}" for k in (
        "mean_fc", "fc_r", "rmse", "fcd_ks", "fcd_mean", "fcd_sd"))]
        for s in m["sigmas"] for p in s["points"]]
    lines += [*H.table(head, rows), "", "## Reading", "", m.get("reading", "(not written yet)"),
              "", *H.machine(m), ""]
    return "\n".join(lines)


def options(p) -> None:
    p.add_argument("--sigmas", nargs="+", type=float, default=None,
                   help="the sigma grid (default 0.0016 0.0022 0.003)")
    p.add_argument("--before", type=float, default=0.0002,
                   help="the G grid starts this far below the jump (default 0.0002)")
    p.add_argument("--step", type=float, default=0.0002, help="the G grid's step")
    p.add_argument("--points", type=int, default=7, help="the G grid's points")
    p.add_argument("--batch", type=int, default=7, help="grid points simulated at once")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="sigma_long", options=options)
