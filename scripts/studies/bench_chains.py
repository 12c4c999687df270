"""Does a fit's burn-in paid once (``nd.Chained``) cost less per step, and does its
gradient point where the exact one does? Writes benchmarks/chains.md (and .json).

Issue 37. The default command's loss (rww on the embedded HCP connectome, BOLD at the HCP
TR, 4 realisations x 43.2 s after a 57.6 s burn-in, "1-r+huber" against the embedded FC)
at a point on the level near the bifurcation (G 0.2213, sigma 0.0022: truth rww-2 of
``bench_recovery``), where the system's memory is longest. Two questions:

1. **Time.** Value and gradient with respect to (G, sigma) of the loss itself (57.6 s
   burn-in from the initial state, exact gradient) against ``nd.Chained`` steps (a burn-in
   of B s from the chains' states), the cases interleaved in one process, with the
   forward pass of the loss itself as the unit.
2. **Bias.** The chained gradient leaves out how the parameters move the chain's start.
   For each of ``--keys`` noise keys: the exact gradient (the loss's own, its key), and
   for each B the chained gradient from a chain started at these parameters (the loss's
   burn-in, another key) and advanced by one step (forward only). Means and standard
   errors over keys, per parameter, and the chained mean's distance from the exact mean
   in standard errors of their difference.

    python scripts/studies/bench_chains.py              # ~40 min on 2 loaded cores
    python scripts/studies/bench_chains.py --smoke      # tiny runs, a few minutes
"""

import time
from pathlib import Path

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common  # noqa: F401 (first: this checkout's netdyn)
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import netdyn as nd

jax.config.update("jax_enable_x64", True)

G, SIGMA = 0.2213, 0.0022
TR = 720.0


def _setup(args, G=G, sigma=SIGMA):
    data = nd.datasets.load("hcp")
    net = nd.presets.rww(np.asarray(data.weights), np.asarray(data.lengths), G=G, sigma=sigma)
    net = eqx.tree_at(lambda n: (n.coupling.G, n.noise.sigma), net,
                      (jnp.asarray(G), jnp.asarray(sigma)))
    loss = nd.FcLoss(np.asarray(data.fc), nd.Heun(remat=nd.Uniform(1000)),
                     nd.Bold(period=TR, variables="S"), duration=args.duration,
                     burn_in=args.burn_in, realisations=args.realisations,
                     metric="1-r+huber")
    return net, loss


def _params(net):
    return net.coupling.G, net.noise.sigma


def _with(net, p):
    return eqx.tree_at(lambda n: (n.coupling.G, n.noise.sigma), net, p)


def measure(args) -> dict:
    earlier = H.loads(args.reuse.read_text()) if args.reuse else None
    out = {"duration": args.duration, "burn_in": args.burn_in,
           "realisations": args.realisations, "chain_burn_in": args.chain_burn_in,
           "keys": args.keys, "times": earlier["times"] if earlier else None,
           "points": list(earlier["points"]) if earlier else []}
    for point in args.points:
        G_, sigma = (float(x) for x in point.split(":"))
        times, grads = _point(args, G_, sigma, timing=out["times"] is None)
        out["times"] = out["times"] or times
        out["points"].append({"G": G_, "sigma": sigma, "grads": grads})
    return out


def _point(args, G_, sigma, timing: bool):
    net, loss = _setup(args, G_, sigma)
    p0 = _params(net)
    chained = {B: nd.Chained(loss, burn_in=B * 1000.0) for B in args.chain_burn_in}

    forward = jax.jit(lambda p, k: loss(_with(net, p), k)[0])
    exact = jax.jit(jax.value_and_grad(lambda p, k: loss(_with(net, p), k)[0]))
    start = {B: eqx.filter_jit(c.start) for B, c in chained.items()}
    advance = {B: eqx.filter_jit(lambda n, k, s, c=c: c.continue_from(n, k, s)[2])
               for B, c in chained.items()}
    grad_chain = {B: jax.jit(jax.value_and_grad(
        lambda p, k, s, c=c: c.continue_from(_with(net, p), k, s)[0])) for B, c in chained.items()}

    def timed(f, *a):
        t = time.perf_counter()
        out = jax.block_until_ready(f(*a))
        return out, time.perf_counter() - t

    times = None
    if timing:
        key = jax.random.key(11)
        carry = {B: start[B](net, key) for B in chained}
        # Compile every case once, then time them interleaved.
        timed(forward, p0, key), timed(exact, p0, key)
        for B in chained:
            timed(grad_chain[B], p0, key, carry[B])
        times = {"forward": [], "exact": [], **{f"chained {B:g} s": [] for B in chained}}
        for r in range(args.repeats):
            k = jax.random.fold_in(key, r)
            times["forward"].append(timed(forward, p0, k)[1])
            times["exact"].append(timed(exact, p0, k)[1])
            for B in chained:
                times[f"chained {B:g} s"].append(timed(grad_chain[B], p0, k, carry[B])[1])
            print({n: round(v[-1], 1) for n, v in times.items()}, flush=True)

    grads = {"exact": [], **{f"chained {B:g} s": [] for B in chained}}
    for i in range(args.keys):
        k = jax.random.key(100 + i)
        (v, g), _ = timed(exact, p0, k)
        grads["exact"].append([float(x) for x in g])
        for B in chained:
            s = start[B](net, jax.random.key(1000 + i))
            s = advance[B](net, jax.random.key(2000 + i), s)
            (v, g), _ = timed(grad_chain[B], p0, k, s)
            grads[f"chained {B:g} s"].append([float(x) for x in g])
        print(G_, sigma, i, {n: v[-1] for n, v in grads.items()}, flush=True)
    return times, grads


def _stats(values: list) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(values)
    return a.mean(0), a.std(0, ddof=1) / np.sqrt(len(a))


def render(m: dict) -> str:
    lines = ["# A burn-in paid once per fit: `nd.Chained`", "",
             "Written by `python scripts/studies/bench_chains.py` (issue 37). The default "
             f"command's loss (rww, embedded HCP connectome and FC, BOLD at TR 720 ms, "
             f"{m['realisations']} realisations x {m['duration'] / 1000:g} s after a "
             f"{m['burn_in'] / 1000:g} s burn-in, `1-r+huber`), times at G "
             f"{m['points'][0]['G']:g}, sigma {m['points'][0]['sigma']:g} (on the level, near "
             "the bifurcation). Chained: each step's runs start from the previous step's end "
             "states after a burn-in of B s.", "",
             "## Time of one value and gradient (G, sigma)", ""]
    fwd = np.median(m["times"]["forward"])
    head = ["case", "simulated per realisation (s)", "median s", "in forwards of the loss"]
    sim = {"forward": m["burn_in"] + m["duration"], "exact": m["burn_in"] + m["duration"]}
    sim.update({n: float(n.split()[1]) * 1000 + m["duration"] for n in m["times"]
                if n.startswith("chained")})
    rows = [[n, f"{sim[n] / 1000:g}", f"{np.median(t):.1f}", f"{np.median(t) / fwd:.2f}"]
            for n, t in m["times"].items()]
    lines += [*H.table(head, rows), "",
              f"The cases interleaved, {len(m['times']['forward'])} rounds, medians.", "",
              "## The gradient's direction", ""]
    for point in m["points"]:
        lines += [f"### G {point['G']:g}, sigma {point['sigma']:g}", ""]
        ex_mean, ex_se = _stats(point["grads"]["exact"])
        head = ["gradient", "keys", "d/dG (mean ± se)", "d/dsigma (mean ± se)",
                "G: distance from exact (se)", "sigma: distance from exact (se)",
                "keys whose d/dG has the sign of exact's mean"]
        rows = []
        for n, g in point["grads"].items():
            mean, se = _stats(g)
            z = (mean - ex_mean) / np.sqrt(se ** 2 + ex_se ** 2)
            same = int(np.sum(np.sign(np.asarray(g)[:, 0]) == np.sign(ex_mean[0])))
            rows.append([n, len(g), f"{mean[0]:.3g} ± {se[0]:.2g}",
                         f"{mean[1]:.4g} ± {se[1]:.2g}",
                         "–" if n == "exact" else f"{z[0]:+.1f}",
                         "–" if n == "exact" else f"{z[1]:+.1f}", f"{same} of {len(g)}"])
        lines += [*H.table(head, rows), ""]
    lines += ["Each chained gradient from its own chain (the loss's burn-in with another key, "
              "advanced by one step).", "", *_fits_section(m.get("fits")),
              "## Reading", "", m.get("reading", "(not written yet)"), "", *H.machine(m), ""]
    return "\n".join(lines)


def _fits_section(fits: dict | None) -> list[str]:
    """The side-by-side fits (``--fits-from``: two ``netdyn fit`` folders' results)."""
    if not fits:
        return []
    head = ["fit", "G [95 %]", "sigma", "steps' G (first, last)", "kept step",
            "fit s", "held-out FC r", "held-out mean FC (data 0.307)",
            "test-subject FC r", "test FCD KS", "command s"]
    rows = []
    for name, f in fits.items():
        rows.append([f"`{f['command']}`", f"{f['G']:.4f} [{f['G_low']:.4f}, {f['G_high']:.4f}]",
                     f"{f['sigma']:.5g}", f"{f['G_first']:.5f}, {f['G_last']:.5f}",
                     f"{f['best_step']} of {f['steps']}", f"{f['fit_seconds']:.0f}",
                     f"{f['heldout_r']:.3f} ± {f['heldout_r_sd']:.3f}",
                     f"{f['heldout_mean_fc']:.3f}",
                     f"{f['test_r']:.3f} ± {f['test_r_sd']:.3f}", f"{f['test_fcd']:.3f}",
                     f"{f['command_seconds']:.0f}"])
    return ["## A fit to the end, with and without chains", "",
            "The two commands ran at the same time on the 2 cores (one each), with the "
            "command's defaults otherwise (12 steps, `keep=\"best\"`, one noise key for the "
            "exact fit's steps).", "", *H.table(head, rows), ""]


def options(p) -> None:
    p.add_argument("--duration", type=float, default=43_200.0, help="measured ms per run")
    p.add_argument("--burn-in", type=float, default=57_600.0, help="the loss's burn-in (ms)")
    p.add_argument("--realisations", type=int, default=4)
    p.add_argument("--chain-burn-in", type=float, nargs="+", default=[0.0, 14.4, 28.8],
                   help="the chained steps' burn-ins B (s)")
    p.add_argument("--keys", type=int, default=6, help="noise keys per gradient case")
    p.add_argument("--repeats", type=int, default=2, help="timing rounds")
    p.add_argument("--points", nargs="+", default=[f"{G}:{SIGMA}"], metavar="G:SIGMA",
                   help=f"where the gradients are compared (default {G}:{SIGMA}); the times "
                   "are measured at the first")
    p.add_argument("--reuse", type=Path, default=None, metavar="JSON",
                   help="keep the times and points of an earlier run's .json, add --points")


def _smoke(argv):
    return argv + ["--duration", "7200", "--burn-in", "7200", "--realisations", "2",
                   "--chain-burn-in", "0", "1.44", "--keys", "2", "--repeats", "1",
                   "--points", f"{G}:{SIGMA}", f"{G}:0.003"]


if __name__ == "__main__":
    import sys

    if "--smoke" in sys.argv:
        sys.argv = _smoke(sys.argv)
    H.main(measure, render, doc=__doc__, name="chains", options=options)
