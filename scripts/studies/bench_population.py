"""What one CMA-ES generation costs on the heterogeneous fit's loss: its candidates one at
a time, as one plain ``vmap``, or as one batch-last loop of candidates x realisations (the
nested batches merged), side by side in one run. Writes benchmarks/population.md (and
.json).

Issue 37 (a fair CMA-ES: the population evaluated as one batch, the batch-last loop). The
loss of ``bench_heterogeneity.py`` (rww-ei-fic with FIC on the embedded HCP data, input
gains along 9 maps for k = 10 or one mean-free log-gain per region for k = 81;
``nd.FcLoss`` of 4 x 43.2 s after a 57.6 s burn-in), at pycma's default population for k
parameters (10 at k = 10, 17 at k = 81), candidates drawn as CMA-ES's first generation
(``x0 = 0``, ``sigma0 = 0.5`` in the benchmark's scaled coordinates).

- **one at a time**: the compiled loss called once per candidate (its 4 realisations
  under the loss's own ``vmap``: below 8 members, the plain one);
- **plain vmap**: ``jax.vmap`` of the loss over the candidates, each given its own copy
  of the structural weights, so that the batch does not share its graph and runs the
  plain ``vmap`` (what the batch did before the nested batches merged);
- **batch-last**: ``jax.vmap`` of the loss over the candidates, as ``bench_heterogeneity``
  runs it: candidates x realisations merge into one batch-last loop (``FcLoss`` asks for
  it from 8 members; ``simulate(..., batch_last=8)``).

Compiled, then timed interleaved in one process, best of ``--repeats``; the losses of the
three compared (the batch-last loop adds the edge sums in another order).

    python scripts/studies/bench_population.py            # ~10 min on 2 cores (--repeats 1: ~6)
    python scripts/studies/bench_population.py --smoke    # short runs, a minute
"""

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import bench_heterogeneity as BH
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import netdyn as nd

jax.config.update("jax_enable_x64", True)

WAYS = ("one at a time", "plain vmap", "batch-last")


def candidates(k: int, n: int) -> dict:
    """``n`` thetas as CMA-ES's first generation draws them (``x0 = 0``, ``sigma0 = 0.5``),
    in ``bench_heterogeneity``'s scaled coordinates, stacked."""
    x = 0.5 * np.random.default_rng(1).standard_normal((n, k))
    return {"G": jnp.asarray(BH.G0 + BH.CMA_SCALE_G * x[:, 0]),
            "gain": jnp.asarray(BH.CMA_SCALE_GAIN * x[:, 1:])}


def programs(k: int, settings: dict) -> tuple[dict, dict]:
    """The three ways of evaluating one generation at ``k``, compiled: ``(cases, facts)``."""
    net, loss_fn, _, _ = BH.problem(k, nd.datasets.load("hcp"), settings)
    key, n = jax.random.key(0), BH.popsize(k)
    thetas = candidates(k, n)
    weights = net.graph.weights.weights  # the InputScaling's structural weights

    def one(theta):
        return loss_fn(BH.with_theta(net, theta), key)[0]

    def own_weights(theta, w):
        scaled = eqx.tree_at(lambda m: m.graph.weights.weights, net, w)
        return loss_fn(BH.with_theta(scaled, theta), key)[0]

    single, t_single = C.compile_timed(jax.jit(one), jax.tree.map(lambda x: x[0], thetas))
    copies = jnp.broadcast_to(weights, (n,) + weights.shape)
    plain, t_plain = C.compile_timed(jax.jit(jax.vmap(own_weights)), thetas, copies)
    last, t_last = C.compile_timed(jax.jit(jax.vmap(one)), thetas)

    def each(thetas):
        return jnp.stack([single(jax.tree.map(lambda x, i=i: x[i], thetas)) for i in range(n)])

    cases = {(k, WAYS[0]): (each, (thetas,)), (k, WAYS[1]): (plain, (thetas, copies)),
             (k, WAYS[2]): (last, (thetas,))}
    # The layout each batch ran: the batch-last loop's ring buffer is ``[2 rows, nodes, k,
    # members]``, candidates x realisations on its trailing axis.
    members, nodes = n * settings["realisations"], weights.shape[0]
    layout = {WAYS[1]: BH.has_ring(jax.make_jaxpr(jax.vmap(own_weights))(thetas, copies),
                                   nodes, members),
              WAYS[2]: BH.has_ring(jax.make_jaxpr(jax.vmap(one))(thetas), nodes, members)}
    facts = {"popsize": n, "members": members, "batch_last_ring": layout,
             "compile_s": {WAYS[0]: t_single, WAYS[1]: t_plain, WAYS[2]: t_last}}
    print(f"k = {k}: compiled ({n} candidates)", flush=True)
    return cases, facts


def measure(args) -> dict:
    settings = {**(BH.QUICK if args.smoke else BH.FULL)}
    cases, facts = {}, {}
    for k in args.ks:
        c, facts[str(k)] = programs(k, settings)
        cases.update(c)
    outputs = {}
    times = C.interleaved(cases, args.repeats, log=True, outputs=outputs)
    for (k, way), ts in times.items():
        f = facts[str(k)]
        f.setdefault("seconds", {})[way] = min(ts)
        values, ref = np.asarray(outputs[(k, way)]), np.asarray(outputs[(k, WAYS[0])])
        f.setdefault("losses", {})[way] = values.tolist()
        f.setdefault("max_rel_diff", {})[way] = float(np.max(np.abs(values / ref - 1)))
    return {"settings": settings, "repeats": args.repeats, "smoke": args.smoke, "ks": args.ks,
            "workloads": facts}


def render(m: dict) -> str:
    s, w = m["settings"], m["workloads"]
    cmd = C.command("studies/bench_population.py", m["smoke"] and "--smoke",
                    m["repeats"] != 2 and f"--repeats {m['repeats']}",
                    m["ks"] != [10, 81] and "--ks " + " ".join(map(str, m["ks"])))
    rows = []
    for k in m["ks"]:
        f = w[str(k)]
        base = f["seconds"][WAYS[0]]
        for way in WAYS:
            sec = f["seconds"][way]
            rows.append([f"k = {k}", str(f["popsize"]), way, f"{sec:.1f}",
                         f"{sec / f['popsize']:.2f}", f"{base / sec:.2f}",
                         f"{f['max_rel_diff'][way]:.1e}"])
    out = ["# One CMA-ES generation: candidates one at a time, a plain vmap, or one "
           "batch-last loop", "",
           f"Written by `{cmd}`" + (" (**smoke run**: short runs, not a measurement)"
                                    if m["smoke"] else "") + " (issue 37). The heterogeneous "
           "fit's loss of `bench_heterogeneity.py`: rww-ei-fic with FIC on the embedded HCP "
           "data, G and input gains (`nd.InputScaling`) along 9 maps (k = 10) or one "
           f"mean-free log-gain per region (k = 81); `nd.FcLoss` of {s['realisations']} x "
           f"{s['duration'] / 1000:g} s after a {s['burn_in'] / 1000:g} s burn-in, float64. "
           "One generation of pycma's default population for k parameters, drawn as CMA-ES's "
           "first (x0 = 0, sigma0 = 0.5, the benchmark's scaled coordinates).", "",
           "- **one at a time**: the compiled loss once per candidate (its realisations "
           "under the loss's own `vmap`, the plain one below 8 members).",
           "- **plain vmap**: `jax.vmap` of the loss over the candidates, each with its own "
           "copy of the weights, so that the batch does not share its graph (the layout the "
           "population ran in before nested batches merged).",
           "- **batch-last**: `jax.vmap` of the loss over the candidates as "
           "`bench_heterogeneity.py` runs it: candidates x realisations merge into one "
           "batch-last loop (`FcLoss` asks for it from 8 members).", "",
           f"Compiled, then timed interleaved in one process, best of {m['repeats']}. "
           "*speed-up*: one-at-a-time's time over the row's. *rel. diff*: the largest "
           "difference of the row's losses from one-at-a-time's, relative.", "",
           *H.table(("k", "candidates", "evaluation", "seconds per generation",
                     "seconds per candidate", "speed-up", "rel. diff"), rows),
           "", "## Reading", ""]
    for k in m["ks"]:
        f = w[str(k)]
        sec = f["seconds"]
        out.append(f"- k = {k} ({f['popsize']} candidates x {s['realisations']} realisations "
                   f"= {f['members']} members): batch-last {sec[WAYS[2]]:.1f} s against the "
                   f"plain vmap's {sec[WAYS[1]]:.1f} s ({sec[WAYS[1]] / sec[WAYS[2]]:.2f}x) and "
                   f"one at a time's {sec[WAYS[0]]:.1f} s "
                   f"({sec[WAYS[0]] / sec[WAYS[2]]:.2f}x).")
    rings = [f"k = {k}: {way}: {'yes' if w[str(k)]['batch_last_ring'][way] else 'no'}"
             for k in m["ks"] for way in WAYS[1:]]
    out += ["", "The batch-last loop's ring buffer (`[2 rows, nodes, 1, members]`) in the "
            "traced program: " + "; ".join(rings) + ".", "", *H.machine(m)]
    return "\n".join(out) + "\n"


def options(p) -> None:
    p.add_argument("--repeats", type=int, default=2, help="timed rounds (default 2)")
    p.add_argument("--ks", type=int, nargs="+", default=[10, 81], choices=[10, 81])


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="population", options=options)
