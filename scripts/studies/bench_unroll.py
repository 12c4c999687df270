"""Unrolling the time loop: forward and gradient time of the reference workload per ``unroll``.

The reference workload of ``bench_forward.py`` and ``bench_remat.py``:
Reduced Wong-Wang (w = 0.5, I_o = 0.32, gamma = 0.641, initial S = 0.3) on an 84-region
connectome (tvboptim's ``dk_average`` when importable, else the seeded random 84-node
graph of ``_common.load_connectome``; weights / max, delays = tract length / 4 mm/ms),
delayed linear coupling G = 0.5, additive noise sigma = 0.00283 on S, stochastic Heun,
dt = 1 ms, the hemodynamic-response-kernel BOLD ``nd.HrfBold(period=1000, interim=dt)``
computed in the loop. ``--seconds`` of model time (default 10 s).

For every dtype and every ``unroll`` it compiles (AOT, trace + XLA compile timed) the
forward run ``G -> BOLD`` under ``nd.NoRemat(unroll=u)`` and the gradient
``jax.value_and_grad`` of ``mean(BOLD**2)`` with respect to G under
``nd.Uniform(1000, unroll=u)``, then times all of them in one process, calls interleaved
in random order, best of ``--repeats``, and writes ``benchmarks/unroll.md`` with the times
as ratios to ``unroll=1`` of the same dtype (shared machines are noisy: compare ratios
from one run). It also checks that the BOLD of every ``unroll`` is bit-identical to that of
``unroll=1`` and reports the gradient's relative difference::

    python scripts/studies/bench_unroll.py       # 10 s, float64 and float32, unroll 1-16
    python scripts/studies/bench_unroll.py --smoke --repeats 1 --unrolls 1 2 --seconds 1
"""

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _common import DT, PERIOD, SIGMA, SPEED, G  # noqa: E402

import netdyn as nd  # noqa: E402

BLOCK = 1000  # Uniform block of the gradient (steps)


def bold_fn(w, lengths, dtype, seconds, remat):
    """``bold(G)``: the BOLD samples of the reference workload under ``remat``."""
    import equinox as eqx

    net = C.reference_network(w, lengths, dtype)
    y0 = jnp.full((1, net.graph.n_nodes), 0.3, dtype)

    def bold(G):
        sol = nd.simulate(
            eqx.tree_at(lambda n: n.coupling.G, net, G), nd.Heun(remat=remat), t0=0.0,
            t1=seconds * 1000.0, dt=DT, monitors={"bold": nd.HrfBold(period=PERIOD, interim=DT)},
            key=jax.random.key(0), history=y0,
        )
        return sol["bold"]

    return bold


def measure(args) -> dict:
    """Every dtype's and unroll's compiled forward and gradient, timed interleaved."""
    if 1 not in args.unrolls:
        raise SystemExit("--unrolls must include 1 (the reference of the ratios)")
    w, lengths, source = C.load_connectome()
    n_steps = round(args.seconds * 1000.0 / DT)

    cases, compile_s, temp_mb, outputs = {}, {}, {}, {}
    for dtype_name in args.dtypes:
        dtype = jnp.dtype(dtype_name)
        G0 = jnp.asarray(G, dtype)
        for u in args.unrolls:
            fwd = bold_fn(w, lengths, dtype, args.seconds, nd.NoRemat(unroll=u))
            bold = bold_fn(w, lengths, dtype, args.seconds, nd.Uniform(BLOCK, unroll=u))

            def loss(G, bold=bold):
                return jnp.mean(bold(G) ** 2)

            f, tf = C.compile_timed(jax.jit(fwd), G0)
            g, tg = C.compile_timed(jax.jit(jax.value_and_grad(loss)), G0)
            cases[(dtype_name, "forward", u)] = (f, G0)
            cases[(dtype_name, "gradient", u)] = (g, G0)
            compile_s[(dtype_name, u)] = (tf, tg)
            temp_mb[(dtype_name, u)] = g.memory_analysis().temp_size_in_bytes / 1e6
            outputs[(dtype_name, u)] = (np.asarray(f(G0)), np.asarray(g(G0)[1]))
            print(f"[{dtype_name}] unroll={u}: compiled forward {tf:.2f} s, "
                  f"gradient {tg:.2f} s", flush=True)

    times = C.interleaved({name: (f, (G0,)) for name, (f, G0) in cases.items()}, args.repeats,
                          log=True)
    best = {name: min(ts) for name, ts in times.items()}
    median = {name: float(np.median(ts)) for name, ts in times.items()}

    rows = []
    for dtype_name in args.dtypes:
        ref_bold, ref_grad = outputs[(dtype_name, 1)]
        f1, g1 = best[(dtype_name, "forward", 1)], best[(dtype_name, "gradient", 1)]
        for u in args.unrolls:
            f, g = best[(dtype_name, "forward", u)], best[(dtype_name, "gradient", u)]
            bold, grad = outputs[(dtype_name, u)]
            rows.append({
                "dtype": dtype_name, "unroll": u, "fwd_us": f / n_steps * 1e6,
                "fwd_med_us": median[(dtype_name, "forward", u)] / n_steps * 1e6,
                "fwd_ratio": f / f1, "grad_s": g,
                "grad_med_s": median[(dtype_name, "gradient", u)], "grad_ratio": g / g1,
                "compile_fwd": compile_s[(dtype_name, u)][0],
                "compile_grad": compile_s[(dtype_name, u)][1],
                "temp_mb": temp_mb[(dtype_name, u)],
                "identical": bool(np.array_equal(bold, ref_bold)),
                "grad_rel": float(abs(grad - ref_grad) / abs(ref_grad)),
            })
            print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in rows[-1].items()), flush=True)
    return {"source": source, "n_steps": n_steps, "seconds": args.seconds,
            "repeats": args.repeats, "dtypes": args.dtypes, "rows": rows}


def render(m: dict) -> str:
    """The table of ratios and its reading."""
    source, n_steps, rows, seconds, repeats = (
        m["source"], m["n_steps"], m["rows"], m["seconds"], m["repeats"])
    cmd = C.command("studies/bench_unroll.py", seconds != 10.0 and f"--seconds {seconds:g}",
                    repeats != 5 and f"--repeats {repeats}")
    out = ["# Unrolling the time loop", ""]
    out.append(
        f"Generated by `{cmd}`. Reduced Wong-Wang (w = 0.5, I_o = 0.32, gamma = 0.641, "
        f"initial S = 0.3), {source} (weights / max, delays = lengths / {SPEED:g} mm/ms), "
        f"delayed linear coupling G = {G}, additive noise sigma = {SIGMA} on S, stochastic "
        f"Heun, dt = {DT:g} ms, {seconds:g} s of model time ({n_steps} steps), "
        f"`nd.HrfBold(period={PERIOD:g}, interim={DT:g})` computed in the loop."
    )
    out += [
        "", "*forward*: `G -> BOLD` under `nd.NoRemat(unroll=u)`. *gradient*: "
        f"`jax.value_and_grad` of `mean(BOLD**2)` with respect to G under "
        f"`nd.Uniform({BLOCK}, unroll=u)`. Steady-state time of compiled calls, best of "
        f"{repeats} calls interleaved in random order between all rows, in one process; "
        "*ratio*: to `unroll=1` of the same dtype (the machine is shared: compare ratios "
        "from one run, not absolute times across runs). *compile*: trace + XLA compile "
        "(AOT). *temp MB*: the gradient's compiled temporary memory. *BOLD = unroll 1*: the "
        "forward samples are bit-identical to `unroll=1`; *Δgrad*: relative difference of "
        "the gradient to `unroll=1`'s.",
    ]
    out += H.machine(m)
    out += ["", "## Results", "", *H.table(
        ("dtype", "unroll", "forward µs/step (best)", "median", "forward ratio",
         "gradient s (best)", "median", "gradient ratio", "compile fwd s", "compile grad s",
         "temp MB", "BOLD = unroll 1", "Δgrad"),
        [(r["dtype"], r["unroll"], f"{r['fwd_us']:.2f}", f"{r['fwd_med_us']:.2f}",
          f"{r['fwd_ratio']:.2f}", f"{r['grad_s']:.3f}", f"{r['grad_med_s']:.3f}",
          f"{r['grad_ratio']:.2f}", f"{r['compile_fwd']:.2f}", f"{r['compile_grad']:.2f}",
          f"{r['temp_mb']:.2f}", "yes" if r["identical"] else "NO", f"{r['grad_rel']:.1e}")
         for r in rows])]
    out += ["", "## Reading", ""]
    for dtype_name in m["dtypes"]:
        rs = [r for r in rows if r["dtype"] == dtype_name and r["unroll"] != 1]
        if not rs:
            continue
        fwd = min(rs, key=lambda r: r["fwd_ratio"])
        grad = min(rs, key=lambda r: r["grad_ratio"])
        big = max(rs, key=lambda r: r["unroll"])
        one = next(r for r in rows if r["dtype"] == dtype_name and r["unroll"] == 1)
        out.append(
            f"- {dtype_name}: best forward at unroll={fwd['unroll']} ({fwd['fwd_ratio']:.2f}x "
            f"the time of unroll=1), best gradient at unroll={grad['unroll']} "
            f"({grad['grad_ratio']:.2f}x); unroll={big['unroll']} compiles the forward "
            f"{big['compile_fwd'] / one['compile_fwd']:.1f}x and the gradient "
            f"{big['compile_grad'] / one['compile_grad']:.1f}x as long as unroll=1."
        )
    out += [
        "",
        f"Defaults (`nd.default_unroll`, resolved at trace time): CPU {nd.default_unroll('cpu')}, "
        f"GPU {nd.default_unroll('gpu')} (not measured here; see `nd.AbstractRemat`). The copies "
        "of the step are separated by `lax.optimization_barrier`: with `lax.scan(unroll=...)` XLA "
        "fused consecutive steps and the float64 BOLD moved by ~4e-15 already at unroll=2.",
    ]
    return "\n".join(out) + "\n"


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--seconds", type=float, default=10.0, help="model time (s)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    p.add_argument("--unrolls", nargs="+", type=int, default=[1, 2, 4, 8, 16])


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="unroll", options=options)
