"""Forward benchmark of the reference workload: netdyn against tvboptim (when importable).

The reference workload (as in the README): Reduced Wong-Wang (w = 0.5, I_o = 0.32,
gamma = 0.641, initial S = 0.3) on the 84-region ``dk_average`` connectome
(weights / max, delays = tract length / 4 mm/ms), delayed linear coupling G = 0.5,
additive noise sigma = 0.00283 on S, stochastic Heun, dt = 1 ms, a 1 s temporal average.
``gamma = 0.641`` is TVB's, tvboptim's and netdyn's default; it is passed explicitly to
both tools so that the workload is pinned.

Run it where tvboptim is installed to compare both tools in one process (netdyn is
imported from this checkout)::

    python scripts/benchmarks/bench_forward.py                 # 60 s of model time
    python scripts/benchmarks/bench_forward.py --seconds 10    # quicker
    python scripts/benchmarks/bench_forward.py --smoke --seconds 1 --repeats 1 --micro-steps 200

For each dtype it measures the compile time (trace + XLA compile) and the steady-state
run time of a compiled call (``block_until_ready``; calls of the tools interleaved, best
of ``--repeats``), and micro-benchmarks of the formulations of the delay gather, the
history push and the per-step noise draw, then writes ``benchmarks/forward.md``. Shared
machines are noisy: compare the tools as ratios measured in the same run.
"""

import _common as C  # first: this checkout's netdyn
import _harness as H
import jax
from _common import DT, PERIOD, SIGMA, SPEED, G

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import netdyn as nd  # noqa: E402

HISTORY_MARKER = "<!-- history: kept when this file is regenerated -->"


# --------------------------------------------------------------------------- workload


def netdyn_forward(w, lengths, dtype, seconds, interpolation="nearest", noise=True):
    net = C.reference_network(w, lengths, dtype, interpolation=interpolation)
    if not noise:
        net = eqx.tree_at(lambda n: n.noise, net, None)
    monitor = nd.TemporalAverage(period=PERIOD) if seconds * 1000.0 >= PERIOD else nd.Raw()
    y0 = jnp.full((1, net.graph.n_nodes), 0.3, dtype)

    def run(net, key):
        return nd.simulate(net, nd.Heun(), t0=0.0, t1=seconds * 1000.0, dt=DT,
                           monitors={"out": monitor}, key=key, history=y0)["out"]

    return jax.jit(run), (net, jax.random.key(0))


def tvboptim_forward(w, lengths, dtype, seconds, noise=True):
    run, args = C.tvboptim_forward(w, lengths, seconds, dtype, noise)
    return jax.jit(run), args


def interleaved(cases, repeats, n_steps):
    """Best and median µs/step of each ``name: (executable, args)``, calls interleaved."""
    return C.per_step(C.interleaved(cases, repeats, warmup=True), n_steps)


# ----------------------------------------------------------------- micro-benchmarks


def _micro_loop(step, carry0, consts, n_steps):
    def outer(carry, consts):
        return lax.fori_loop(0, n_steps, lambda i, c: step(i, c, consts), carry)

    args = (carry0, consts)
    return jax.jit(outer).lower(*args).compile(), args


def gather_cases(w, lengths, dtype, n_steps, interpolation):
    """Formulations of the delayed coupling ``c_i = sum_j W_ij x_j(t - d_ij)``.

    Each runs in a loop with the indices passed as arguments (loop-invariant but not
    compile-time constants, as in ``simulate``), a cheap node-wise update and the
    history push, so that what differs is the gather, its reduction and the push.
    """
    weights = (w / w.max()).astype(dtype)
    n = weights.shape[0]
    steps = lengths / SPEED / DT
    if interpolation == "nearest":
        lag = np.rint(steps).astype(np.int32)
        frac = None
    else:
        lag = np.floor(steps).astype(np.int32)
        frac = (steps - lag).astype(dtype)
    rows_n = int(lag.max()) + 1 + (interpolation == "linear")
    rows = (rows_n - 1 - lag).astype(np.int32)
    cols = np.arange(n, dtype=np.int32)
    flat = rows * n + cols
    ones = np.ones(n, dtype)
    consts = {"W": jnp.asarray(weights), "rows": jnp.asarray(rows), "flat": jnp.asarray(flat),
              "flat_nm": jnp.asarray(cols[None, :] * rows_n + rows),  # node-major, [i, j]
              "frac": None if frac is None else jnp.asarray(frac)}

    def interp(read, idx, older_idx, k):
        x = read(idx)
        if frac is None:
            return x
        f = k["frac"].reshape(k["frac"].shape + (1,) * (x.ndim - 2))
        return x + f * (read(older_idx) - x)

    def g_rows_cols_einsum(buf, k):  # previous netdyn: buf[rows, cols] on [H, N, 1]
        x = interp(lambda r: buf[r, cols], k["rows"], k["rows"] - 1, k)
        return jnp.einsum("ij,ijk->ki", k["W"], x)

    def g_rows_cols_2d(buf, k):  # same on a [H, N] buffer (no trailing axis)
        b = buf[..., 0]
        x = interp(lambda r: b[r, cols], k["rows"], k["rows"] - 1, k)
        return jnp.einsum("ij,ij->i", k["W"], x)[None]

    def g_flat_1d(buf, k):  # scalar gather from the flattened buffer
        b = buf.reshape(-1)
        x = interp(lambda f: b[f], k["flat"], k["flat"] - n, k)
        return jnp.einsum("ij,ij->i", k["W"], x)[None]

    def g_flat_einsum(buf, k):  # flat index on [H * N, 1]
        b = buf.reshape(rows_n * n, 1)
        x = interp(lambda f: b[f], k["flat"], k["flat"] - n, k)
        return jnp.einsum("ij,ijk->ki", k["W"], x)

    def g_flat_dot(buf, k):  # flat index on [H * N, 1], reduction as a dot with ones (kept)
        b = buf.reshape(rows_n * n, 1)
        x = interp(lambda f: b.at[f].get(mode="promise_in_bounds"), k["flat"], k["flat"] - n, k)
        return ((k["W"] * x[..., 0]) @ ones)[None]

    def g_take_along(buf, k):  # take_along_axis on the rows
        b = jnp.broadcast_to(buf[:, None, :, 0], (rows_n, n, n))
        x = interp(lambda r: jnp.take_along_axis(b, r[None], axis=0)[0], k["rows"],
                   k["rows"] - 1, k)
        return ((k["W"] * x) @ ones)[None]

    def g_onehot(buf, k):  # one-hot over rows, as a dense contraction (H times the flops)
        oh = jax.nn.one_hot(k["rows"], rows_n, dtype=buf.dtype)  # [i, j, r]
        x = jnp.einsum("ijr,rj->ij", oh, buf[..., 0])
        if frac is not None:
            x_old = jnp.einsum("ijr,rj->ij", jax.nn.one_hot(k["rows"] - 1, rows_n, dtype=buf.dtype),
                               buf[..., 0])
            x = x + k["frac"] * (x_old - x)
        return ((k["W"] * x) @ ones)[None]

    def push_concat(buf, y):
        return jnp.concatenate([buf[1:], y.T[None]], axis=0)

    def push_roll(buf, y):
        return jnp.roll(buf, -1, axis=0).at[-1].set(y.T)

    def make(coupling, push=push_concat, layout="time"):
        def step(i, carry, k):
            y, buf = carry
            if layout == "ring":
                big, p = buf
                view = lax.dynamic_slice_in_dim(big, p, rows_n, 0)
                c = coupling(view, k)
            else:
                c = coupling(buf, k)
            y1 = y + 1e-3 * (jnp.tanh(c) - y)
            if layout == "ring":
                p1 = jnp.where(p + 1 == rows_n, 0, p + 1)
                big = lax.dynamic_update_slice_in_dim(big, y1.T[None], p1 + rows_n - 1, 0)
                big = lax.dynamic_update_slice_in_dim(big, y1.T[None],
                                                      jnp.where(p1 == 0, rows_n - 1, p1 - 1), 0)
                return y1, (big, p1)
            if layout == "node":
                return y1, jnp.concatenate([buf[:, 1:], y1.T[:, None]], axis=1)
            return y1, push(buf, y1)

        y0 = jnp.full((1, n), 0.3, dtype)
        if layout == "ring":
            buf0 = (jnp.full((2 * rows_n, n, 1), 0.3, dtype), jnp.zeros((), jnp.int32))
        elif layout == "node":
            buf0 = jnp.full((n, rows_n, 1), 0.3, dtype)
        else:
            buf0 = jnp.full((rows_n, n, 1), 0.3, dtype)
        return _micro_loop(step, (y0, buf0), consts, n_steps)

    def g_node_major(buf, k):
        b = buf.reshape(n * rows_n, 1)
        x = interp(lambda f: b.at[f].get(mode="promise_in_bounds"), k["flat_nm"],
                   k["flat_nm"] - 1, k)
        return ((k["W"] * x[..., 0]) @ ones)[None]

    cases = {
        "`buf[rows, cols]` on `[H, N, 1]` + einsum (netdyn before)": make(g_rows_cols_einsum),
        "`buf[rows, cols]` on `[H, N]` + einsum": make(g_rows_cols_2d),
        "flat 1-D `buf.reshape(-1)[rows*N + cols]` + einsum": make(g_flat_1d),
        "flat `buf.reshape(H*N, 1)[rows*N + cols]` + einsum": make(g_flat_einsum),
        "flat `[H*N, 1]`, promise_in_bounds, `(W * x) @ ones` (netdyn now)": make(g_flat_dot),
        "idem, push by `roll(...).at[-1].set`": make(g_flat_dot, push=push_roll),
        "node-major `[N, H, 1]` buffer, flat index": make(g_node_major, layout="node"),
        "ring `[2H, N, 1]` + dynamic_slice view (loop-invariant indices)":
            make(g_flat_dot, layout="ring"),
        "`take_along_axis` over rows": make(g_take_along),
        "one-hot over rows, dense contraction": make(g_onehot),
    }
    return cases


def noise_cases(dtype, n_steps, n_nodes=84):
    """Per-step standard normal draws ``[1, nodes]``, counter-based on the step: JAX's
    ``normal(fold_in(key, i))`` per key implementation, and netdyn's noise increment with
    sigma = 1 and dt = 1 (the same draw, bit for bit)."""
    unit = nd.AdditiveNoise(sigma=1.0)
    y = jnp.zeros((1, n_nodes), dtype)

    def make(draw, key):
        def step(i, carry, key):
            return carry * 0.999 + draw(key, i)

        return _micro_loop(step, jnp.zeros((1, n_nodes), dtype), key, n_steps)

    def jax_normal(key, i):
        return jax.random.normal(jax.random.fold_in(key, i), (1, n_nodes), dtype)

    def netdyn_normal(key, i):
        return unit.increment(key, i, y, 1.0, (0,))

    return {
        "threefry2x32: `normal(fold_in(key, i))` (JAX, rolled loops on CPU)":
            make(jax_normal, jax.random.key(0)),
        "threefry2x32: netdyn's noise increment (the hash written out on CPU)":
            make(netdyn_normal, jax.random.key(0)),
        "rbg: `normal(fold_in(key, i))`": make(jax_normal, jax.random.key(0, impl="rbg")),
        "unsafe_rbg: `normal(fold_in(key, i))`":
            make(jax_normal, jax.random.key(0, impl="unsafe_rbg")),
        "philox4x32: `normal(fold_in(key, i))`":
            make(jax_normal, jax.random.key(0, impl="philox4x32")),
    }


# ---------------------------------------------------------------------------- report


def measure(args) -> dict:
    """Each tool's forward time and compile time; the gather and noise micro-benchmarks."""
    w, lengths, source = C.load_connectome()
    have_tvbo = C.have_tvboptim()
    n_steps = round(args.seconds * 1000.0 / DT)

    tool_rows, compile_rows = [], []
    for dtype_name in args.dtypes:
        dtype = jnp.dtype(dtype_name)
        programs = {"netdyn (nearest delays)": netdyn_forward(w, lengths, dtype, args.seconds),
                    "netdyn (linear interpolation)":
                        netdyn_forward(w, lengths, dtype, args.seconds, "linear")}
        if have_tvbo:
            programs["tvboptim 0.4 (nearest delays)"] = tvboptim_forward(w, lengths, dtype,
                                                                         args.seconds)
        cases = {}
        for name, (f, fargs) in programs.items():
            compiled, seconds = C.compile_timed(f, *fargs)
            cases[name] = (compiled, fargs)
            compile_rows.append((dtype_name, name, seconds))
            print(f"[{dtype_name}] {name}: compiled in {seconds:.2f} s", flush=True)
        result = interleaved(cases, args.repeats, n_steps)
        ref = result.get("tvboptim 0.4 (nearest delays)")
        for name, (best, median) in result.items():
            ratio = f"{best / ref[0]:.2f} ({ref[0] / best:.2f}x)" if ref else "—"
            tool_rows.append((dtype_name, name, best, median, best * n_steps / 1e6, ratio))
            print(f"[{dtype_name}] {name}: {best:.2f} µs/step (median {median:.2f})", flush=True)

    parity = None
    if have_tvbo:
        # Same equations, no noise: the trajectories agree to rounding.
        a, aa = netdyn_forward(w, lengths, jnp.float64, 0.5, noise=False)
        b, ba = tvboptim_forward(w, lengths, jnp.float64, 0.5, noise=False)
        ya, yb = np.asarray(a(*aa)), np.asarray(b(*ba))
        parity = float(np.max(np.abs(ya.reshape(yb.shape) - yb)))
        print(f"deterministic 500 ms, netdyn vs tvboptim: max |dS| = {parity:.2e}")

    micro = {}
    if not args.skip_micro:
        for interpolation in ("nearest", "linear"):
            cases = gather_cases(w, lengths, np.float64, args.micro_steps, interpolation)
            micro[f"gather-{interpolation}"] = interleaved(cases, 2 * args.repeats,
                                                           args.micro_steps)
        for dtype_name in args.dtypes:
            cases = noise_cases(jnp.dtype(dtype_name), args.micro_steps)
            micro[f"noise-{dtype_name}"] = interleaved(cases, 2 * args.repeats, args.micro_steps)
        for key, table in micro.items():
            for name, (best, _) in table.items():
                print(f"[{key}] {name}: {best:.2f} µs/step")

    return {"source": source, "seconds": args.seconds, "repeats": args.repeats,
            "micro_steps": args.micro_steps, "tools": tool_rows, "compile": compile_rows,
            "parity": parity, "micro": micro,
            # earlier measurements below the marker: kept
            "history": C.kept_tail(H.out_path(args, "forward"), HISTORY_MARKER)}


def render(m: dict) -> str:
    """The forward and compile tables, the micro-benchmarks, the history kept."""
    seconds, parity, micro = m["seconds"], m["parity"], m["micro"]
    out = ["# Forward benchmark: the reference workload", ""]
    out.append(
        "Generated by `"
        + C.command("bench_forward.py", seconds != 60.0 and f"--seconds {seconds:g}")
        + "`. Reduced Wong-Wang (w = 0.5, I_o = 0.32, gamma = 0.641, initial S = 0.3), "
        f"{m['source']} connectome (weights / max, delays = lengths / {SPEED:g} mm/ms, 58 history "
        f"rows), delayed linear coupling G = {G}, additive noise sigma = {SIGMA} on S, "
        f"stochastic Heun, dt = {DT:g} ms, {seconds:g} s of model time, 1 s temporal "
        "average. Steady-state time of a compiled call, best of "
        f"{m['repeats']} calls interleaved between the tools (the machine is shared: compare "
        "ratios from one run, not absolute times across runs)."
    )
    out += H.machine(m)
    out += ["", "## Forward time", "", *H.table(
        ("dtype", "tool", "µs/step (best)", "µs/step (median)", "s per run",
         "time / tvboptim's (speed-up)"),
        [(d, name, f"{best:.2f}", f"{median:.2f}", f"{run_s:.3f}", ratio)
         for d, name, best, median, run_s, ratio in m["tools"]]),
        "", "Compile time (trace + XLA compile, AOT):", "",
        *H.table(("dtype", "tool", "compile s"), [(d, name, f"{c:.2f}")
                                                  for d, name, c in m["compile"]])]
    if parity is not None:
        out += [
            "", f"Same workload check: without noise, 500 ms of netdyn and tvboptim trajectories "
            f"(float64) differ by at most {parity:.1e} in S. The noisy runs use different "
            "random streams (tvboptim pre-samples an `[n_steps, ...]` array; netdyn draws "
            "`fold_in(key, step)` inside the loop).",
        ]
    if micro:
        out += ["", "## Delay gather formulations", ""]
        out.append(
            f"A loop of {m['micro_steps']} steps of coupling + a cheap node-wise update + history "
            "push (float64, indices passed as arguments, as in `simulate`), so that only the "
            "formulation differs. `(W * x) @ ones` rather than `einsum`/`sum`: XLA:CPU sends "
            "reductions and batched dots to YNNPACK, whose per-call cost at this size exceeds "
            "that of its own dot kernel for a matrix-vector product (a few µs per step with "
            "nearest delays here; with linear interpolation the einsum also drags the "
            "interpolation into the library call)."
        )
        for interpolation in ("nearest", "linear"):
            if micro.get(f"gather-{interpolation}"):
                out += micro_table(interpolation, "formulation", micro[f"gather-{interpolation}"])
        out += ["", "## Per-step noise draw", ""]
        out.append(
            f"A loop of {m['micro_steps']} steps drawing `[1, 84]` standard normals for step `i`, "
            "as netdyn's noise does (`jax.random.normal(fold_in(key, i))`), per key "
            "implementation. JAX lowers Threefry on CPU to rolled loops (nested while loops per "
            "draw); netdyn's noise writes the 20 rounds out on CPU and reproduces JAX's draw bit "
            "for bit (`fold_in_normal` in `netdyn/_xla_tricks.py`)."
        )
        for key, table in micro.items():
            if key.startswith("noise-"):
                out += micro_table(key[6:], "draw", table)
    return "\n".join([*out, "", m["history"]]).rstrip("\n") + "\n"


def micro_table(title, what, table) -> list[str]:
    """A micro-benchmark's table under ``title:``, best and median µs/step per ``what``."""
    return ["", f"{title}:", "", *H.table((what, "µs/step (best)", "median"), [
        (name, f"{b:.2f}", f"{md:.2f}") for name, (b, md) in table.items()])]


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--seconds", type=float, default=60.0, help="model time (s)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    p.add_argument("--micro-steps", type=int, default=4000)
    p.add_argument("--skip-micro", action="store_true")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="forward", options=options)
