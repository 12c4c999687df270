"""What the per-region input gains cost the heterogeneous fit's gradient, applied after the
weighted sum (as ``simulate`` now applies an ``nd.InputScaling``) or folded into the
weights before the time loop (as it did before), side by side in one run. Writes
benchmarks/input_gain.md (and .json).

Issue 37 (the heterogeneous loss's gradient in at most 4 of its forwards). The loss of
``bench_heterogeneity.py`` (rww-ei-fic with FIC on the embedded HCP data, input gains along
9 maps for k = 10 or one mean-free log-gain per region for k = 81; ``nd.FcLoss`` of 4 x
43.2 s after a 57.6 s burn-in, the hemodynamics every 10 ms, ``nd.Uniform(720)``), against
G and the gains. Two forms of the same network:

- **factored**: ``nd.InputScaling`` as it is: ``simulate`` keeps the structural weights
  ``W`` in the graph and the gains ``e^g`` as its ``input_gain``, so each step's coupling
  input is ``e^{g_i} sum_j W_ij x_j(t - d_ij)`` and reverse mode accumulates a ``[nodes]``
  cotangent of the gains per step;
- **folded**: the same gains folded into ``W_eff = e^{g_i} W_ij`` before the loop (a
  parameterisation wrapping the ``InputScaling``, which ``simulate`` cannot see through),
  whose ``[nodes, nodes]`` cotangent reverse mode accumulates at every step.

For each: the compiled forward (the same program for both but for the product's order)
and ``jax.value_and_grad`` with ``stages="recompute"`` and ``stages="save"``, timed
interleaved in one process, best of ``--repeats``; XLA's compiled temporary memory of each
gradient; the two forms' losses and gradients compared.

    python scripts/studies/bench_input_gain.py            # ~20 min on 2 cores
    python scripts/studies/bench_input_gain.py --smoke    # short runs, a minute
"""

import dataclasses

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import bench_heterogeneity as BH
import bench_stages as BS
import equinox as eqx
import jax
import jax.numpy as jnp

import netdyn as nd

jax.config.update("jax_enable_x64", True)

FORMS = ("factored", "folded")
STAGES = ("recompute", "save")


class Folded(nd.AbstractParameterisation):
    """An ``nd.InputScaling`` folded into one ``[nodes, nodes]`` matrix before the loop:
    resolved inside out, ``scaling`` is already ``e^{g_i} W_ij`` when ``value`` runs."""

    scaling: nd.AbstractParameterisation

    def value(self):
        return self.scaling


def case(k: int, settings: dict, form: str):
    """``(loss(theta, stages), theta0)`` of ``bench_heterogeneity``'s loss at ``k`` with
    the gains ``factored`` or ``folded``."""
    net, fc_loss, _, _ = BH.problem(k, nd.datasets.load("hcp"), settings)

    def at(theta):
        n = BH.with_theta(net, theta)
        if form == "folded":
            n = eqx.tree_at(lambda m: m.graph.weights, n, Folded(n.graph.weights))
        return n

    def loss(theta, stages):
        remat = dataclasses.replace(fc_loss.solver.remat, stages=stages)
        solver = eqx.tree_at(lambda s: s.remat, fc_loss.solver, remat)
        return fc_loss.replace(solver=solver)(at(theta), jax.random.key(0))[0]

    theta = BH.start_theta(k)
    # Off the homogeneous start, so that the gains' gradient is not special there.
    theta["gain"] = 0.05 * jnp.sin(jnp.arange(theta["gain"].size, dtype=float))
    return loss, theta, str(fc_loss.solver.remat)


def compiled(k: int, settings: dict) -> tuple[dict, dict]:
    """The forward and the four gradients at ``k``, compiled: ``(cases, facts)``."""
    cases, facts, grads = {}, {}, {}
    for form in FORMS:
        loss, x0, facts["remat"] = case(k, settings, form)
        f, facts[f"compile_forward_{form}"] = C.compile_timed(
            jax.jit(lambda x, loss=loss: loss(x, "recompute")), x0)
        cases[(k, form, "forward")] = (f, (x0,))
        for stages in STAGES:
            g, facts[f"compile_{form}_{stages}"] = C.compile_timed(
                jax.jit(jax.value_and_grad(lambda x, s=stages, loss=loss: loss(x, s))), x0)
            cases[(k, form, stages)] = (g, (x0,))
            facts[f"temp_mb_{form}_{stages}"] = g.memory_analysis().temp_size_in_bytes / 1e6
            value, grad = g(x0)
            facts[f"value_{form}_{stages}"] = float(value)
            grads[(form, stages)] = grad
            print(f"k = {k}: compiled {form} {stages} ({facts[f'temp_mb_{form}_{stages}']:.1f} "
                  "MB)", flush=True)
    facts["grad_rel"] = BS._relative(grads[("factored", "recompute")],
                                     grads[("folded", "recompute")])
    facts["value_rel"] = abs(facts["value_factored_recompute"] / facts["value_folded_recompute"]
                             - 1.0)
    return cases, facts


def measure(args) -> dict:
    settings = {**(BH.QUICK if args.smoke else BH.FULL)}
    cases, facts = {}, {}
    for k in args.ks:
        c, facts[str(k)] = compiled(k, settings)
        cases.update(c)
    times = C.interleaved(cases, args.repeats, log=True)
    for (k, form, what), ts in times.items():
        facts[str(k)][f"seconds_{form}_{what}"] = min(ts)
    return {"settings": settings, "repeats": args.repeats, "smoke": args.smoke, "ks": args.ks,
            "workloads": facts}


def _row(k, f, form):
    fwd = f[f"seconds_{form}_forward"]
    cells = [f"k = {k}", form, f"{fwd:.2f}"]
    for stages in STAGES:
        s = f[f"seconds_{form}_{stages}"]
        cells += [f"{s:.2f} ({s / fwd:.2f})", f"{f[f'temp_mb_{form}_{stages}']:.1f}"]
    return cells


def render(m: dict) -> str:
    s, w = m["settings"], m["workloads"]
    cmd = C.command("studies/bench_input_gain.py", m["smoke"] and "--smoke",
                    m["repeats"] != 2 and f"--repeats {m['repeats']}",
                    m["ks"] != [10, 81] and "--ks " + " ".join(map(str, m["ks"])))
    rows = [_row(k, w[str(k)], form) for k in m["ks"] for form in FORMS]
    out = ["# The input gains in the gradient: after the weighted sum, or folded into the "
           "weights", "",
           f"Written by `{cmd}`" + (" (**smoke run**: short runs, not a measurement)"
                                    if m["smoke"] else "") + " (issue 37). The heterogeneous "
           "fit's loss of `bench_heterogeneity.py`: rww-ei-fic with FIC on the embedded HCP "
           "data, G 0.49 and input gains (`nd.InputScaling`) along 9 maps (k = 10) or one "
           f"mean-free log-gain per region (k = 81); `nd.FcLoss` of {s['realisations']} x "
           f"{s['duration'] / 1000:g} s after a {s['burn_in'] / 1000:g} s burn-in (its gradient "
           "exact), BOLD at TR 720 ms with the hemodynamics every "
           f"{s['balloon_step']:g} ms, `1-r+huber`, float64, `{w[str(m['ks'][0])]['remat']}`; "
           "value and gradient against G and the gains at gains 0.05 sin(i).", "",
           "- **factored** (what `simulate` now does with an `InputScaling`): the graph keeps "
           "the structural weights and the gains as its `input_gain`, each step's coupling "
           "input $e^{g_i} \\sum_j W_{ij} x_j(t - d_{ij})$; reverse mode accumulates a "
           "`[nodes]` cotangent of the gains per step.",
           "- **folded** (what it did before): $W^{eff}_{ij} = e^{g_i} W_{ij}$ formed before "
           "the loop; reverse mode accumulates its `[nodes, nodes]` cotangent at every step.",
           "", "Compiled, then timed interleaved in one process, best of "
           f"{m['repeats']}; *in forwards*: the gradient's time over its form's forward. "
           "*temp MB*: XLA's compiled temporary memory of the gradient.", "",
           *H.table(("k", "form", "forward s", "gradient, recompute: s (in forwards)",
                     "temp MB", "gradient, save: s (in forwards)", "temp MB"), rows),
           "", "## Reading", ""]
    for k in m["ks"]:
        f = w[str(k)]
        fold = {st: f[f"seconds_folded_{st}"] / f["seconds_folded_forward"] for st in STAGES}
        fact = {st: f[f"seconds_factored_{st}"] / f["seconds_factored_forward"] for st in STAGES}
        out.append(
            f"- k = {k}: the gradient in forwards {fold['recompute']:.2f} -> "
            f"{fact['recompute']:.2f} (recompute) and {fold['save']:.2f} -> {fact['save']:.2f} "
            f"(save); compiled memory {f['temp_mb_folded_recompute']:.0f} -> "
            f"{f['temp_mb_factored_recompute']:.0f} MB (recompute). The two forms' losses "
            f"differ by {f['value_rel']:.1e} relative, their gradients by {f['grad_rel']:.1e} "
            "(largest difference over the largest entry).")
    best = [min(w[str(k)][f"seconds_factored_{st}"] for st in STAGES)
            / w[str(k)]["seconds_factored_forward"] for k in m["ks"]]
    verdict = "met" if max(best) <= 4 else "not met"
    out += ["", f"Issue 37's target of at most 4 forwards for the gradient: **{verdict}** "
            f"(best of the two `stages`: {', '.join(f'{b:.2f}' for b in best)} at k = "
            f"{', '.join(map(str, m['ks']))}).", ""]
    out += H.machine(m)
    return "\n".join(out) + "\n"


def options(p) -> None:
    p.add_argument("--repeats", type=int, default=2, help="timed rounds (default 2)")
    p.add_argument("--ks", type=int, nargs="+", default=[10, 81], choices=[10, 81])


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="input_gain", options=options)
