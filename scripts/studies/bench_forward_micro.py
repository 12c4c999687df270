"""Forward micro-benchmarks: which formulation of the delay gather and history push, and
of the per-step noise draw? Writes benchmarks/forward_micro.md (and .json).

On the reference workload's connectome (``_common.load_connectome``): loops of ``--steps``
steps of each formulation of the delayed coupling (nearest and linear delays, float64) and
of each per-step standard normal draw (per dtype, per key implementation), the cases of a
table interleaved, best and median of ``--repeats``. The formulations netdyn uses are
marked "netdyn now"; ``scripts/studies/bench_xla_tricks.py`` measures them in the forward.

    python scripts/studies/bench_forward_micro.py            # a few minutes
    python scripts/studies/bench_forward_micro.py --smoke    # 200 steps, 2 rounds
"""

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import jax
from _common import DT, SPEED

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import netdyn as nd  # noqa: E402


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
            if layout == "pair":  # row r holds (x_r, x_{r-1})
                new = jnp.stack([y1[0], buf[-1, :, 0]], axis=-1)[None]
                return y1, jnp.concatenate([buf[1:], new], axis=0)
            return y1, push(buf, y1)

        y0 = jnp.full((1, n), 0.3, dtype)
        if layout == "ring":
            buf0 = (jnp.full((2 * rows_n, n, 1), 0.3, dtype), jnp.zeros((), jnp.int32))
        elif layout == "node":
            buf0 = jnp.full((n, rows_n, 1), 0.3, dtype)
        elif layout == "pair":
            buf0 = jnp.full((rows_n, n, 2), 0.3, dtype)
        else:
            buf0 = jnp.full((rows_n, n, 1), 0.3, dtype)
        return _micro_loop(step, (y0, buf0), consts, n_steps)

    def g_node_major(buf, k):
        b = buf.reshape(n * rows_n, 1)
        x = interp(lambda f: b.at[f].get(mode="promise_in_bounds"), k["flat_nm"],
                   k["flat_nm"] - 1, k)
        return ((k["W"] * x[..., 0]) @ ones)[None]

    def g_both_rows(buf, k):  # linear: one gather of both rows' indices
        b = buf.reshape(rows_n * n, 1)
        x = b.at[jnp.stack([k["flat"], k["flat"] - n])].get(mode="promise_in_bounds")[..., 0]
        return ((k["W"] * (x[0] + k["frac"] * (x[1] - x[0]))) @ ones)[None]

    def g_folded(buf, k):  # linear: two gathers, frac folded into two weight matrices
        b = buf.reshape(rows_n * n, 1)
        x, old = (b.at[f].get(mode="promise_in_bounds")[..., 0]
                  for f in (k["flat"], k["flat"] - n))
        return ((k["W"] * (1 - k["frac"]) * x + k["W"] * k["frac"] * old) @ ones)[None]

    def g_pair(buf, k):  # linear: [H, N, 2] buffer, both rows in one gather of width 2
        x = buf.reshape(rows_n * n, 2).at[k["flat"]].get(mode="promise_in_bounds")
        return ((k["W"] * (x[..., 0] + k["frac"] * (x[..., 1] - x[..., 0]))) @ ones)[None]

    def make_carried():
        # Linear: the older row read at step t is the newer one read at step t - 1 (the
        # buffer rolls by one row a step): one gather a step, the last read carried.
        def step(i, carry, k):
            y, buf, prev = carry
            x = buf.reshape(rows_n * n, 1).at[k["flat"]].get(mode="promise_in_bounds")[..., 0]
            c = ((k["W"] * (x + k["frac"] * (prev - x))) @ ones)[None]
            y1 = y + 1e-3 * (jnp.tanh(c) - y)
            return y1, push_concat(buf, y1), x

        carry0 = (jnp.full((1, n), 0.3, dtype), jnp.full((rows_n, n, 1), 0.3, dtype),
                  jnp.full((n, n), 0.3, dtype))
        return _micro_loop(step, carry0, consts, n_steps)

    gather_pair = lax.GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(),
                                             start_index_map=(0,))

    def g_node_major_pair(buf, k):  # linear: [N, H] buffer, [older, newer] as one slice of 2
        p = lax.gather(buf.reshape(n * rows_n), (k["flat_nm"] - 1)[..., None], gather_pair,
                       slice_sizes=(2,), mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
        return ((k["W"] * (p[..., 1] + k["frac"] * (p[..., 0] - p[..., 1]))) @ ones)[None]

    def g_no_read(buf, k):  # the rest of the step: the newest row broadcast, no gather
        return ((k["W"] * jnp.broadcast_to(buf[-1, :, 0][None], (n, n))) @ ones)[None]

    def g_nearest_arith(buf, k):  # one gather and the interpolation's arithmetic on it
        b = buf.reshape(rows_n * n, 1)
        x = b.at[k["flat"]].get(mode="promise_in_bounds")[..., 0]
        return ((k["W"] * (x + k["frac"] * (x * x - x))) @ ones)[None]

    def make_carried_sums():
        # Linear: sum_j W f x_j(older row) at step t is sum_j W f x_j(newer row) at step
        # t - 1: one gather a step, two weighted sums, one of them carried ([N]).
        def step(i, carry, k):
            y, buf, pending = carry
            x = buf.reshape(rows_n * n, 1).at[k["flat"]].get(mode="promise_in_bounds")[..., 0]
            now, nxt = (((k["W"] * w) * x) @ ones for w in (1 - k["frac"], k["frac"]))
            y1 = y + 1e-3 * (jnp.tanh((now + pending)[None]) - y)
            return y1, push_concat(buf, y1), nxt

        carry0 = (jnp.full((1, n), 0.3, dtype), jnp.full((rows_n, n, 1), 0.3, dtype),
                  jnp.zeros(n, dtype))
        return _micro_loop(step, carry0, consts, n_steps)

    linear_only = {} if frac is None else {
        "idem, one gather of both rows' indices": make(g_both_rows),
        "idem, two gathers, `frac` folded into two weight matrices": make(g_folded),
        "pair buffer `[H, N, 2]` (each row beside the one before), one gather": make(
            g_pair, layout="pair"),
        "one gather, the last step's read carried (`[N, N]` in the carry)": make_carried(),
        "node-major `[N, H]` buffer, both rows as one gathered slice of 2": make(
            g_node_major_pair, layout="node"),
        "one gather, the older row's weighted sum carried (`[N]` in the carry)":
            make_carried_sums(),
        "(parts) no gather: the newest row broadcast, the rest of the step": make(g_no_read),
        "(parts) one gather and the interpolation's arithmetic": make(g_nearest_arith),
    }
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
        **linear_only,
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


def measure(args) -> dict:
    """Every gather formulation (nearest, linear) and every noise draw (per dtype)."""
    if args.smoke:
        args.steps, args.repeats = 200, 2
    w, lengths, source = C.load_connectome()
    micro = {}
    for interpolation in ("nearest", "linear"):
        cases = gather_cases(w, lengths, np.float64, args.steps, interpolation)
        micro[f"gather-{interpolation}"] = C.per_step(
            C.interleaved(cases, args.repeats, warmup=True), args.steps)
    for dtype_name in args.dtypes:
        cases = noise_cases(jnp.dtype(dtype_name), args.steps)
        micro[f"noise-{dtype_name}"] = C.per_step(
            C.interleaved(cases, args.repeats, warmup=True), args.steps)
    for key, table in micro.items():
        for name, (best, _) in table.items():
            print(f"[{key}] {name}: {best:.2f} µs/step")
    return {"source": source, "repeats": args.repeats, "micro_steps": args.steps,
            "micro": micro}


def render(m: dict) -> str:
    """Both sections' tables."""
    micro = m["micro"]
    out = ["# Forward micro-benchmarks: the delay gather and the per-step noise draw", "",
           f"Written by `{C.command('studies/bench_forward_micro.py', *H.shown_argv(m))}`, "
           f"on the reference workload's connectome ({m['source']}); each table's cases "
           "interleaved, best and median of the rounds (compare within a table).",
           *H.machine(m)]
    out += ["", "## Delay gather formulations", ""]
    out.append(
        f"A loop of {m['micro_steps']} steps of coupling + a cheap node-wise update + history "
        "push (float64, indices passed as arguments, as in `simulate`), so that only the "
        "formulation differs. `(W * x) @ ones` rather than `einsum`/`sum`: XLA:CPU sends "
        "reductions and batched dots to YNNPACK, whose per-call cost at this size exceeds "
        "that of its own dot kernel for a matrix-vector product (a few µs per step with "
        "nearest delays here; with linear interpolation the einsum also drags the "
        "interpolation into the library call). The rows marked *(parts)* are pieces of a "
        "step rather than formulations: the step without its gather, and one gather with "
        "the interpolation's arithmetic on it; the second read of linear interpolation costs "
        "the difference between the latter and netdyn's two-gather row."
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
    return "\n".join(out) + "\n"


def micro_table(title, what, table) -> list[str]:
    """A micro-benchmark's table under ``title:``, best and median µs/step per ``what``."""
    return ["", f"{title}:", "", *H.table((what, "µs/step (best)", "median"), [
        (name, f"{b:.2f}", f"{md:.2f}") for name, (b, md) in table.items()])]


def options(p) -> None:
    """This study's own flags."""
    p.add_argument("--steps", type=int, default=4000, help="steps per loop (default 4000)")
    p.add_argument("--repeats", type=int, default=10, help="interleaved rounds (default 10)")
    p.add_argument("--dtypes", nargs="+", default=["float64", "float32"])


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="forward_micro", options=options)
