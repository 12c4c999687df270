"""Batched forward throughput: ``jax.vmap`` of the reference forward over B values of G.

Writes ``benchmarks/batch.md``: per batch size B, in network-steps per second (``B * steps
/ seconds``, best of ``--repeats`` interleaved calls), netdyn on one shared graph
(``batch_last=True``), netdyn with the weights batched too (the plain ``vmap``) and
tvboptim 0.4 where it is installed; ``--dtype`` (float32), a 100 ms temporal average.

    python scripts/benchmarks/bench_batch.py                  # ~15 min on 2 CPU cores
    python scripts/benchmarks/bench_batch.py --smoke --batches 1 4 16 --seconds 0.1
"""

import _common as C
import _harness as H
import numpy as np


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--batches", type=int, nargs="+", default=[1, 4, 16, 64, 256, 1024, 4096])
    p.add_argument("--slow-up-to", type=int, default=1024,
                   help="largest B for the per-member-graph and tvboptim programs (their "
                        "calls grow long on a CPU)")
    p.add_argument("--seconds", type=float, default=0.5, help="model time per member (s)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")


def programs(w, lengths, seconds, dtype, period=100.0):
    """``{tool: fn(Gs)}`` of the batched forwards (a ``period`` ms temporal average)."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    import netdyn as nd

    net = C.reference_network(w, lengths, dtype)
    t1 = seconds * 1000.0
    monitors = {"tavg": nd.TemporalAverage(period=period)}
    key = jax.random.key(0)

    def one(network, batch_last=False):
        return nd.simulate(network, nd.Heun(), t0=0.0, t1=t1, dt=C.DT, monitors=monitors,
                           key=key, batch_last=batch_last)["tavg"]

    def shared(Gs):
        return jax.vmap(lambda g: one(eqx.tree_at(lambda n: n.coupling.G, net, g), True))(Gs)

    def per_member(Gs):
        # Built from the traced Gs (times one, exactly): a broadcast of the constant weights
        # made XLA constant-fold the graph's runtime checks over B copies of them, which
        # took the GPU run's whole compile budget at B = 8192 (benchmarks/gpu.md).
        ones = jnp.ones_like(Gs)[:, None, None]
        weights = ones * net.graph.weights

        def member(g, wm):
            return one(eqx.tree_at(lambda n: (n.coupling.G, n.graph.weights), net, (g, wm)))

        return jax.vmap(member)(Gs, weights)

    fns = {"netdyn, shared graph": shared, "netdyn, per-member graph": per_member}
    if C.have_tvboptim():
        from tvboptim.experimental.network_dynamics import prepare
        from tvboptim.experimental.network_dynamics.solvers import Heun
        from tvboptim.observations.tvb_monitors.downsampling import TemporalAverage

        network = C.tvboptim_network(w, lengths, dtype=dtype)
        solve_fn, config = prepare(network, Heun(), t0=0.0, t1=t1, dt=C.DT)
        average = TemporalAverage(period=period)

        def tvboptim(Gs):
            return jax.vmap(lambda g: average(solve_fn(
                eqx.tree_at(lambda c: c.coupling.delayed.G, config, g))).ys)(Gs)

        fns["tvboptim"] = tvboptim
    return fns


def measure(args) -> dict:
    """Each batch size's throughput, memory and compile time per program."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", args.dtype == "float64")
    dtype = np.float32 if args.dtype == "float32" else np.float64
    w, lengths, source = C.load_connectome()
    n_steps = round(args.seconds * 1000.0 / C.DT)
    fns = programs(w, lengths, args.seconds, dtype)
    rows = []
    print(f"{source}; {n_steps} steps per member, {args.dtype}", flush=True)
    for B in args.batches:
        Gs = jnp.linspace(0.3, 0.7, B, dtype=dtype)
        cases, compile_s, temp = {}, {}, {}
        for tool, fn in fns.items():
            if tool != "netdyn, shared graph" and B > args.slow_up_to:
                continue
            exe, compile_s[tool] = C.compile_timed(jax.jit(fn), Gs)
            temp[tool] = exe.memory_analysis().temp_size_in_bytes
            cases[tool] = (exe, (Gs,))
        times = C.interleaved(cases, args.repeats, warmup=True)
        first = next(iter(cases))
        check = {tool: np.asarray(f(*a)) for tool, (f, a) in cases.items()}
        for tool, ts in times.items():
            rate = B * n_steps / min(ts)
            diff = float(np.max(np.abs(check[tool] - check[first])))
            rows.append((B, tool, rate, min(ts), temp[tool], compile_s[tool], diff))
            print(f"B={B:5d} {tool:26s} {rate / 1e6:7.3f} M network-steps/s  "
                  f"({min(ts):.3f} s, temp {C.mb(temp[tool]):.1f} MB, compile "
                  f"{compile_s[tool]:.1f} s, max |diff| to the first {diff:.1e})", flush=True)
    return {"source": source, "n_steps": n_steps, "dtype": args.dtype,
            "repeats": args.repeats, "batches": args.batches, "rows": rows}


def render(m: dict) -> str:
    """The throughput table and the shared graph's ratios to the other programs."""
    source, n_steps, rows = m["source"], m["n_steps"], m["rows"]
    lines = [
        "# Batched forward throughput (CPU)", "",
        f"Written by `{C.command('bench_batch.py', *H.shown_argv(m))}`. `jax.vmap` over B values",
        f"of G (0.3-0.7) of the reference network's forward ({source}; RWW, delayed linear",
        f"coupling, additive noise, stochastic Heun, dt = 1 ms), {n_steps} steps per member,",
        f"{m['dtype']}, a 100 ms temporal average; network-steps per second (B x steps /",
        f"seconds, best of {m['repeats']} interleaved calls); XLA temp: the compiled program's",
        "temporary memory; |diff|: the largest difference to the first program's outputs",
        "(tvboptim draws its own noise). *netdyn, shared graph*: `simulate(..., batch_last=True)`",
        "(its batch-last loop: B contiguous values per delayed read, ring buffer); *per-member",
        "graph*: the weights batched too, the plain `vmap` (batch-first); *tvboptim*: its 0.4",
        "forward, where installed.", "",
        *H.table(("B", "program", "M network-steps/s", "s per call", "XLA temp MB",
                  "compile s", "max abs diff"),
                 [(B, tool, f"{rate / 1e6:.3f}", f"{s:.3f}", f"{C.mb(t):.1f}", f"{c:.1f}",
                   f"{d:.1e}") for B, tool, rate, s, t, c, d in rows]),
    ]
    by = {(B, tool): rate for B, tool, rate, *_ in rows}
    shared = [(B, by[(B, "netdyn, shared graph")]) for B in m["batches"]]
    lines += ["", "## Ratios (same run)", ""]
    for B, rate in shared:
        ratios = [f"{rate / by[(B, tool)]:.2f}x the {name}'s"
                  for tool, name in (("netdyn, per-member graph", "per-member graph"),
                                     ("tvboptim", "tvboptim"))
                  if (B, tool) in by]
        lines.append(f"- B = {B}: the shared graph's throughput is " + ", ".join(ratios)
                     if ratios else f"- B = {B}: only the shared-graph program ran")
    return "\n".join(lines + H.machine(m)) + "\n"


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="batch", options=options)
