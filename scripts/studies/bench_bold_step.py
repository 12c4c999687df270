"""What integrating the Balloon-Windkessel hemodynamics on a coarser step than the network's
(``nd.Bold(integration_step=...)``) changes in the BOLD and its FC, and what it saves.
Writes benchmarks/bold_step.md (and .json).

For rww (G 0.2213, sigma 0.0022: near the bifurcation, where the FC is most sensitive) and
rww-ei-fic (G 0.49, sigma 0.001) on the embedded HCP connectome, dt = 1 ms, BOLD at the HCP
TR (720 ms): one run of ``--duration`` ms with the same noise key at each integration
step, the first ``--drop`` samples left out (hemodynamic transient). Against integrating
every step: the largest BOLD difference (in units of the signal's sd), the largest FC
difference, the FC r between the two FCs, the change of the mean FC; next to them, the
same figures between two noise keys (what one realisation moves). Times: the forward run,
and the value and gradient (G) of an ``nd.FcLoss`` of 4 realisations x 14.4 s after 7.2 s,
best of ``--repeats``, the steps interleaved.

    python scripts/studies/bench_bold_step.py           # ~10 min on 2 cores
    python scripts/studies/bench_bold_step.py --smoke
"""

import time

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common  # noqa: F401 (first: this checkout's netdyn)
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import netdyn as nd

jax.config.update("jax_enable_x64", True)

TR = 720.0
MODELS = {"rww": (0.2213, 0.0022, "S"), "rww-ei-fic": (0.49, 0.001, "S_e")}


def _network(name, data):
    G, sigma, _ = MODELS[name]
    w = np.asarray(data.weights, float) / np.max(data.weights)
    build = nd.presets.rww if name == "rww" else nd.presets.rww_ei_fic
    return build(w, np.asarray(data.lengths), G=G, sigma=sigma)


def _best(f, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = jax.block_until_ready(f())
        times.append(time.perf_counter() - t)
    return out, min(times)


def _fc_figures(a, b) -> dict:
    iu = np.triu_indices(a.shape[1], 1)
    fa, fb = np.corrcoef(a.T)[iu], np.corrcoef(b.T)[iu]
    return {"bold": float(np.abs(a - b).max() / b.std()), "fc": float(np.abs(fa - fb).max()),
            "fc_r": float(np.corrcoef(fa, fb)[0, 1]), "mean_fc": float(fa.mean() - fb.mean())}


def _one_model(name, data, args) -> dict:
    net = _network(name, data)
    var = MODELS[name][2]
    target = nd.runs_fc(np.asarray(data.bold, float)[:4])
    steps = [None, *args.steps]
    out = {"steps": steps, "forward": {}, "gradient": {}, "figures": {}}
    runs, fwd, vg = {}, {}, {}
    for h in steps:
        bold = nd.Bold(period=TR, variables=var, integration_step=h)
        fwd[h] = jax.jit(lambda k, b=bold: nd.simulate(
            net, nd.Heun(), t0=0.0, t1=args.duration, dt=1.0, monitors={"b": b}, key=k)["b"])
        loss = nd.FcLoss(target, nd.Heun(remat=nd.Uniform(720)), bold, duration=14_400.0,
                         dt=1.0, metric="1-r+huber", burn_in=7_200.0, realisations=4)
        vg[h] = jax.jit(jax.value_and_grad(lambda G, k, loss=loss: loss(
            eqx.tree_at(lambda n: n.coupling.G, net, G), k)[0]))
        jax.block_until_ready(fwd[h](jax.random.key(0)))  # compile
        jax.block_until_ready(vg[h](jnp.asarray(MODELS[name][0]), jax.random.key(0)))
    for h in steps:  # interleaved, after every compilation
        x, out["forward"][str(h)] = _best(lambda h=h: fwd[h](jax.random.key(0)), args.repeats)
        runs[h] = np.asarray(x)[args.drop:, 0]
        _, out["gradient"][str(h)] = _best(
            lambda h=h: vg[h](jnp.asarray(MODELS[name][0]), jax.random.key(0)), args.repeats)
        print(name, h, out["forward"][str(h)], out["gradient"][str(h)], flush=True)
    other = np.asarray(fwd[None](jax.random.key(1)))[args.drop:, 0]
    out["figures"] = {str(h): _fc_figures(runs[h], runs[None]) for h in args.steps}
    out["figures"]["another noise key"] = _fc_figures(other, runs[None])
    return out


def measure(args) -> dict:
    data = nd.datasets.load("hcp")
    return {"duration": args.duration, "drop": args.drop, "repeats": args.repeats,
            "models": {name: _one_model(name, data, args) for name in args.models}}


def render(m: dict) -> str:
    lines = ["# BOLD on a coarser hemodynamic step: `nd.Bold(integration_step=...)`", "",
             "Written by `python scripts/studies/bench_bold_step.py`. The embedded HCP "
             "connectome, dt = 1 ms, BOLD at TR 720 ms; one run of "
             f"{m['duration'] / 1000:g} s per case with the same noise key, the first "
             f"{m['drop']} samples left out. Each case against integrating the hemodynamics "
             "every step (one RK4 step per ms); the last row of each table is a second "
             "noise key against the first: what one realisation moves.", ""]
    for name, r in m["models"].items():
        G, sigma, _ = MODELS[name]
        lines += [f"## {name} (G {G:g}, sigma {sigma:g})", ""]
        head = ["integration step", "largest BOLD difference (sd)", "largest FC difference",
                "FC r", "mean FC change", "forward s", "forward speed-up",
                "loss value and gradient s", "gradient speed-up"]
        f0, g0 = r["forward"]["None"], r["gradient"]["None"]
        rows = [["every step (1 ms)", "–", "–", "–", "–", f"{f0:.2f}", "1.00", f"{g0:.2f}",
                 "1.00"]]
        for h in r["steps"][1:]:
            fig = r["figures"][str(h)]
            f, g = r["forward"][str(h)], r["gradient"][str(h)]
            rows.append([f"{h:g} ms", f"{fig['bold']:.1e}", f"{fig['fc']:.1e}",
                         f"{fig['fc_r']:.10f}", f"{fig['mean_fc']:+.1e}", f"{f:.2f}",
                         f"{f0 / f:.2f}", f"{g:.2f}", f"{g0 / g:.2f}"])
        fig = r["figures"]["another noise key"]
        rows.append(["another noise key, every step", f"{fig['bold']:.1e}",
                     f"{fig['fc']:.1e}", f"{fig['fc_r']:.4f}", f"{fig['mean_fc']:+.1e}",
                     "–", "–", "–", "–"])
        lines += [*H.table(head, rows), ""]
    lines += ["Times: best of the rounds; the gradient is that of an `nd.FcLoss` "
              "(`1-r+huber`, 4 realisations x 14.4 s after 7.2 s, Uniform(720) remat) with "
              "respect to G.", "", "## Reading", "", m.get("reading", "(not written yet)"), "",
              *H.machine(m), ""]
    return "\n".join(lines)


def options(p) -> None:
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--steps", type=float, nargs="+", default=[2.0, 5.0, 10.0, 20.0, 40.0],
                   help="integration steps (ms) compared with every step")
    p.add_argument("--duration", type=float, default=432_000.0, help="ms per run")
    p.add_argument("--drop", type=int, default=80, help="samples left out at the start")
    p.add_argument("--repeats", type=int, default=2)


def _smoke(argv):
    return argv + ["--steps", "10", "--duration", "72000", "--drop", "20", "--repeats", "1"]


if __name__ == "__main__":
    import sys

    if "--smoke" in sys.argv:
        sys.argv = _smoke(sys.argv)
    H.main(measure, render, doc=__doc__, name="bold_step", options=options)
