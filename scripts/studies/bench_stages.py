"""What recomputing the solver stages costs the gradient: ``stages="recompute"`` (the
default of every remat strategy) against ``stages="save"``, side by side in one run.
Writes benchmarks/stages.md (and .json).

Issue 37 (the heterogeneous loss's gradient in forwards). Three workloads, each as a
compiled forward and two compiled ``jax.value_and_grad``, one per ``stages``, timed
interleaved in one process (best of ``--repeats``), with XLA's compiled temporary memory
of each gradient and the relative difference between the two gradients:

- **reference**: the reference workload of ``bench_remat.py`` (Reduced Wong-Wang on an
  84-region connectome, 60 s at dt = 1 ms, stochastic Heun, in-loop HRF BOLD at TR 1 s),
  ``mean(BOLD**2)`` against G under ``nd.Uniform(1000)``;
- **k = 10** and **k = 81**: the heterogeneous fit's loss of ``bench_heterogeneity.py``
  (rww-ei-fic with FIC on the embedded HCP data, input gains along 9 maps or one
  mean-free log-gain per region; ``nd.FcLoss`` of 4 x 43.2 s after a 57.6 s burn-in, the
  hemodynamics every 10 ms, ``nd.Uniform(720)``), against G and the gains.

    python scripts/studies/bench_stages.py            # ~15 min on 2 cores
    python scripts/studies/bench_stages.py --smoke    # short runs, a minute
"""

import dataclasses

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import bench_heterogeneity as BH
import equinox as eqx
import jax
import jax.numpy as jnp
from _common import DT, PERIOD

import netdyn as nd

jax.config.update("jax_enable_x64", True)

STAGES = ("recompute", "save")


def reference_case(seconds: float, w, lengths):
    """``(loss(G, remat), G0, remat)`` of the reference workload on ``(w, lengths)``."""
    net = C.reference_network(w, lengths)
    y0 = jnp.full((1, net.graph.n_nodes), 0.3)

    def loss(G, remat):
        sol = nd.simulate(eqx.tree_at(lambda n: n.coupling.G, net, G), nd.Heun(remat=remat),
                          t0=0.0, t1=seconds * 1000.0, dt=DT,
                          monitors={"bold": nd.HrfBold(period=PERIOD, interim=DT)},
                          key=jax.random.key(0), history=y0)
        return jnp.mean(sol["bold"] ** 2)

    return loss, jnp.asarray(C.G), nd.Uniform(1000)


def heterogeneous_case(k: int, settings: dict):
    """``(loss(theta, remat), theta0, remat)`` of ``bench_heterogeneity``'s loss at ``k``."""
    net, fc_loss, _, _ = BH.problem(k, nd.datasets.load("hcp"), settings)

    def loss(theta, remat):
        solver = eqx.tree_at(lambda s: s.remat, fc_loss.solver, remat)
        return fc_loss.replace(solver=solver)(BH.with_theta(net, theta),
                                              jax.random.key(0))[0]

    return loss, BH.start_theta(k), fc_loss.solver.remat


def _relative(a, b) -> float:
    """The largest difference between the gradients ``a`` and ``b``, relative to ``b``'s
    largest entry."""
    da = jnp.concatenate([jnp.ravel(x) for x in jax.tree.leaves(a)])
    db = jnp.concatenate([jnp.ravel(x) for x in jax.tree.leaves(b)])
    return float(jnp.max(jnp.abs(da - db)) / jnp.max(jnp.abs(db)))


def compiled_case(name: str, loss, x0, remat) -> tuple[dict, dict]:
    """The forward and the two gradients of one workload, compiled: ``(cases, facts)``."""
    cases, facts = {}, {"remat": str(remat)}
    f, facts["compile_forward"] = C.compile_timed(jax.jit(lambda x: loss(x, remat)), x0)
    cases[(name, "forward")] = (f, (x0,))
    grads = {}
    for stages in STAGES:
        r = dataclasses.replace(remat, stages=stages)
        g, facts[f"compile_{stages}"] = C.compile_timed(
            jax.jit(jax.value_and_grad(lambda x, r=r: loss(x, r))), x0)
        cases[(name, stages)] = (g, (x0,))
        facts[f"temp_mb_{stages}"] = g.memory_analysis().temp_size_in_bytes / 1e6
        value, grads[stages] = g(x0)
        facts[f"value_{stages}"] = float(value)
        print(f"{name}: compiled {stages} ({facts[f'compile_{stages}']:.1f} s, "
              f"{facts[f'temp_mb_{stages}']:.2f} MB)", flush=True)
    facts["grad_rel"] = _relative(grads["save"], grads["recompute"])
    return cases, facts


def measure(args) -> dict:
    settings = {**(BH.QUICK if args.smoke else BH.FULL)}
    w, lengths, source = C.load_connectome()
    workloads = {"reference": reference_case(6.0 if args.smoke else 60.0, w, lengths)}
    for k in (10, 81):
        workloads[f"k = {k}"] = heterogeneous_case(k, settings)
    cases, facts = {}, {}
    for name, (loss, x0, remat) in workloads.items():
        c, facts[name] = compiled_case(name, loss, x0, remat)
        cases.update(c)
    times = C.interleaved(cases, args.repeats, log=True)
    for (name, what), ts in times.items():
        facts[name][f"seconds_{what}"] = min(ts)
    return {"source": source, "settings": settings, "repeats": args.repeats,
            "smoke": args.smoke, "workloads": facts}


def render(m: dict) -> str:
    rows = []
    for name, f in m["workloads"].items():
        fwd = f["seconds_forward"]
        rec, sav = f["seconds_recompute"], f["seconds_save"]
        rows.append((name, f["remat"], f"{fwd:.2f}", f"{rec:.2f} ({rec / fwd:.2f})",
                     f"{sav:.2f} ({sav / fwd:.2f})", f"{sav / rec:.2f}",
                     f"{f['temp_mb_recompute']:.2f}", f"{f['temp_mb_save']:.2f}",
                     f"{f['grad_rel']:.1e}",
                     "yes" if f["value_save"] == f["value_recompute"] else "NO"))
    s = m["settings"]
    cmd = C.command("studies/bench_stages.py", m["smoke"] and "--smoke",
                    m["repeats"] != 3 and f"--repeats {m['repeats']}")
    out = ["# What recomputing the solver stages costs the gradient", "",
           f"Written by `{cmd}`" + (" (**smoke run**: short runs, not a measurement)"
                                    if m["smoke"] else "") + ". Every remat strategy "
           "takes `stages=\"recompute\"` (the default: reverse mode keeps each step's inputs "
           "and recomputes its solver stages when the step is differentiated) or "
           "`stages=\"save\"` (it keeps the stages' intermediates). Each workload's forward "
           "and its two gradients are compiled, then timed interleaved in one process, "
           f"best of {m['repeats']}; *in forwards*: the gradient's time over the forward's. "
           "*temp MB*: XLA's compiled temporary memory of each gradient. *Δgrad*: the "
           "largest difference between the two gradients, relative to the largest entry.",
           "", "- **reference**: Reduced Wong-Wang on " + m["source"] + " (weights / max, "
           "delays = lengths / 4 mm/ms), G = 0.5, sigma = 0.00283, stochastic Heun, dt = 1 ms, "
           "60 s, in-loop HRF BOLD at TR 1 s; `mean(BOLD**2)` against G.",
           "- **k = 10**, **k = 81**: the loss of `bench_heterogeneity.py`: rww-ei-fic with FIC "
           "on the embedded HCP data, G 0.49 and input gains along 9 maps (k = 10) or one "
           f"mean-free log-gain per region (k = 81); `nd.FcLoss` of {s['realisations']} x "
           f"{s['duration'] / 1000:g} s after a {s['burn_in'] / 1000:g} s burn-in (its "
           f"gradient exact), BOLD at TR 720 ms with the hemodynamics every "
           f"{s['balloon_step']:g} ms, `1-r+huber`, float64; against G and the gains.", "",
           *H.table(("workload", "strategy", "forward s", "gradient, recompute: s (in forwards)",
                     "gradient, save: s (in forwards)", "save / recompute", "temp MB, recompute",
                     "temp MB, save", "Δgrad", "same loss"), rows), "", "## Reading", ""]
    for name, f in m["workloads"].items():
        rec, sav = f["seconds_recompute"], f["seconds_save"]
        out.append(f"- {name}: saving the stages takes the gradient from "
                   f"{rec / f['seconds_forward']:.2f} to {sav / f['seconds_forward']:.2f} "
                   f"forwards ({100 * (1 - sav / rec):.0f} % less time) for "
                   f"{f['temp_mb_save'] / f['temp_mb_recompute']:.2f}x the compiled memory.")
    fit = [f["seconds_save"] / f["seconds_forward"] for n, f in m["workloads"].items()
           if n != "reference"]
    over = (f" Saved, the fit's gradient still costs {min(fit):.2f}-{max(fit):.2f} of its "
            "forwards, over the 4 of issue 37: the stages are not all that the backward pass "
            "repeats." if fit and min(fit) > 4 else "")
    out += ["", "The forward pass is the same program either way (the *same loss* column: "
            "bit for bit); the gradients differ by rounding (*Δgrad*)." + over, ""]
    out += H.machine(m)
    return "\n".join(out) + "\n"


def options(p) -> None:
    p.add_argument("--repeats", type=int, default=3, help="timed rounds (default 3)")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="stages", options=options)
