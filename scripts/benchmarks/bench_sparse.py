"""Dense vs sparse graphs: forward (and gradient) time per step at several densities.

The reference node model (nearest delays, float64, a 100 ms temporal average) on
``dk_average`` (else the embedded ``hcp``) and on a seeded, spatially embedded synthetic
connectome of 400 nodes, each thresholded to its strongest 10, 20, 30 or 100 % of entries:
``DelayGraph`` against ``SparseDelayGraph.from_dense``. A second table times the delayed
gather + weighted sum alone in a bare ``lax.scan``: dense einsum, ``segment_sum`` over
target-sorted edges, padded ELL and ``SparseGraph``'s binary chunks.

    python scripts/benchmarks/bench_sparse.py         # writes benchmarks/sparse.md
    python scripts/benchmarks/bench_sparse.py --smoke # fewer steps and repeats
"""

import datetime
import os
import platform

import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402


def _dk_average() -> str:
    """Path of the ``dk_average`` connectome in the tvboptim wheel ("" without tvboptim)."""
    import importlib.util
    import pathlib

    spec = importlib.util.find_spec("tvboptim")
    if spec is None or spec.origin is None:
        return ""
    return str(pathlib.Path(spec.origin).parent / "data/connectivity/dk_average/data.npz")
SPEED = 4.0
DENSITIES = (0.1, 0.2, 0.3, 1.0)


def connectome_small(path=None):
    path = _dk_average() if path is None else path
    if os.path.exists(path):
        d = np.load(path)
        return np.asarray(d["weights"], float), np.asarray(d["lengths"], float), "dk_average"
    data = nd.datasets.load("hcp")
    return np.asarray(data.weights), np.asarray(data.lengths), "hcp"


def connectome_large(n=400, seed=0):
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=(n, 3))
    pos *= 70.0 / np.linalg.norm(pos, axis=1, keepdims=True) ** 0.3
    dist = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    w = rng.lognormal(0.0, 1.0, (n, n)) * np.exp(-dist / 40.0)
    w = (w + w.T) / 2
    np.fill_diagonal(w, 0.0)
    lengths = dist * 1.3
    lengths *= 220.0 / lengths.max()
    return w, lengths, f"synthetic{n}"


def threshold(w, density):
    w = w / w.max()
    if density >= 1.0:
        return w
    return np.where(w > np.quantile(w, 1.0 - density), w, 0.0)


def best_of(fns, repeats):
    """Compile every function, then time them interleaved; best time of each."""
    times = C.interleaved({i: (f, ()) for i, f in enumerate(fns)}, repeats, warmup=True)
    return [min(times[i]) for i in range(len(fns))]


def network(graph):
    return nd.Network(
        dynamics=nd.ReducedWongWang(w=0.5, I_o=0.32),
        coupling=nd.DelayedLinear(G=0.5), graph=graph,
        noise=nd.AdditiveNoise(sigma=0.00283),
    )


def end_to_end(w, lengths, n_steps, n_grad, repeats):
    delays = lengths / SPEED
    graphs = {
        "dense": nd.DelayGraph(w, delays),
        "sparse": nd.SparseDelayGraph.from_dense(w, delays),
    }
    key = jax.random.key(0)
    monitors = {"tavg": nd.TemporalAverage(period=100.0)}

    def forward(net):
        return nd.simulate(net, nd.Heun(), t0=0.0, t1=float(n_steps), dt=1.0,
                           monitors=monitors, key=key)["tavg"]

    @eqx.filter_jit
    def gradient(net):
        def loss(G):
            n = eqx.tree_at(lambda n: n.coupling.G, net, G)
            sol = nd.simulate(n, nd.Heun(), t0=0.0, t1=float(n_grad), dt=1.0,
                              monitors=monitors, key=key)
            return jnp.mean(sol["tavg"] ** 2)

        return jax.grad(loss)(jnp.asarray(0.5))

    nets = {k: network(g) for k, g in graphs.items()}
    fwd = best_of([lambda n=n: forward(n) for n in nets.values()], repeats)
    out = {k: t / n_steps * 1e6 for k, t in zip(nets, fwd)}
    if n_grad:
        grd = best_of([lambda n=n: gradient(n) for n in nets.values()], max(2, repeats // 2))
        out.update({f"{k}_grad": t / n_grad * 1e6 for k, t in zip(nets, grd)})
    a, b = (np.asarray(forward(n)) for n in nets.values())
    out["max_diff"] = float(np.abs(a - b).max())
    out["edges"] = graphs["sparse"].n_edges
    return out


# --- formulations of the delayed gather + weighted sum, in a bare scan ---------------------


def formulations(w, lengths, n_steps, repeats):
    n = w.shape[0]
    D = np.rint(lengths / SPEED).astype(np.int32)
    H = int(D.max()) + 1
    rows = H - 1 - D
    t, s = np.nonzero(w)
    j = jnp.asarray

    def dense(buf, rows, W):
        x = buf.reshape(-1, buf.shape[-1])[rows * n + jnp.arange(n)]
        return jnp.einsum("ij,ijk->ki", W, x)

    def segment(buf, flat, tt, we):
        x = buf.reshape(-1, buf.shape[-1])[flat] * we[:, None]
        return jax.ops.segment_sum(x, tt, num_segments=n, indices_are_sorted=True).T

    deg = np.bincount(t, minlength=n)
    K = max(int(deg.max()), 1)
    ell_flat = np.tile(((H - 1) * n + np.arange(n))[:, None], (1, K)).astype(np.int32)
    ell_w = np.zeros((n, K))
    for i in range(n):
        src = s[t == i]
        ell_flat[i, : src.size] = rows[i, src] * n + src
        ell_w[i, : src.size] = w[i, src]

    def ell(buf, flat, W):
        x = buf.reshape(-1, buf.shape[-1])[flat]
        return jnp.einsum("ij,ijk->ki", W, x)

    g = nd.SparseDelayGraph.from_dense(w, lengths / SPEED)
    index = g.delay_index(1.0, H, "nearest")

    def chunks(buf, g, index):
        return g.weighted_sum(g.delayed_source_values(buf, index))

    cands = {
        "dense einsum": (dense, (j(rows), j(w))),
        "segment_sum": (segment, (j(rows[t, s] * n + s), j(t, jnp.int32), j(w[t, s]))),
        "padded ELL": (ell, (j(ell_flat), j(ell_w))),
        "binary chunks": (chunks, (g, index)),
    }

    def scan(fn):
        def body(carry, args):
            y, buf = carry
            y = y + 0.01 * (-y + fn(buf, *args))
            return y, jnp.concatenate([buf[1:], y.T[None]], 0)

        @eqx.filter_jit
        def run(y, buf, args):
            return jax.lax.scan(lambda c, _: (body(c, args), None), (y, buf), None,
                                length=n_steps)[0]

        return run

    buf0 = j(np.random.default_rng(1).random((H, n, 1)))
    y0 = jnp.zeros((1, n))
    fns, refs = [], []
    for fn, args in cands.values():
        run = scan(fn)
        fns.append(lambda run=run, args=args: run(y0, buf0, args))
        refs.append(np.asarray(fn(buf0, *args)))
    for r in refs[1:]:
        np.testing.assert_allclose(r, refs[0], rtol=1e-12, atol=1e-12)
    times = best_of(fns, repeats)
    return dict(zip(cands, (t / n_steps * 1e6 for t in times))), int(K), len(t)


HISTORY_MARKER = "<!-- earlier measurements: kept when this file is regenerated -->"


def measure(args) -> dict:
    """Both tables' timings for each graph and density (``--smoke``: a fifth of the steps)."""
    scale = 0.2 if args.smoke else 1.0
    repeats = 3 if args.smoke else args.repeats
    small_w, small_l, small_name = connectome_small(args.dk_average)
    large_w, large_l, large_name = connectome_large()
    setups = [
        (small_name, small_w, small_l, int(20_000 * scale), int(5_000 * scale)),
        (large_name, large_w, large_l, int(2_000 * scale), int(1_000 * scale)),
    ]
    ends, sums = [], []
    for name, w, lengths, n_steps, n_grad in setups:
        for density in DENSITIES:
            r = end_to_end(threshold(w, density), lengths, n_steps,
                           0 if args.no_grad else n_grad, repeats)
            ends.append({"graph": name, "n": w.shape[0], "density": density, **r})
            print(ends[-1], flush=True)
    for name, w, lengths, n_steps, _ in setups:
        for density in DENSITIES:
            t, K, E = formulations(threshold(w, density), lengths, n_steps, repeats)
            sums.append({"graph": name, "n": w.shape[0], "density": density, "edges": E,
                         "K": K, "us": t})
            print(sums[-1], flush=True)
    dev = jax.devices()[0]
    return {"date": str(datetime.date.today()), "repeats": repeats,
            "platform": f"{platform.machine()}, {os.cpu_count()} CPU cores, JAX "
                        f"{jax.__version__} on {dev.platform} ({dev.device_kind})",
            "end_to_end": ends, "formulations": sums,
            # earlier measurements added by hand below the marker: kept
            "history": C.kept_tail(H.out_path(args, "sparse"), HISTORY_MARKER)}


def render(m: dict) -> str:
    """Both tables, then the earlier measurements kept below the marker."""
    lines = [
        "# Sparse vs dense graphs", "",
        f"Generated by `{C.command('bench_sparse.py')}` on {m['date']}: {m['platform']}, "
        f"float64. Best of {m['repeats']} interleaved calls.", "",
        "## End to end: `simulate` forward and gradient, µs per step", "",
        "Reduced Wong-Wang, `DelayedLinear(G=0.5)` (nearest delays), additive noise, "
        "stochastic Heun, dt = 1 ms, `TemporalAverage(100 ms)`; gradient of the mean squared "
        "average with respect to G (`NoRemat`). Density = fraction of the N² entries kept "
        "(the strongest); `max |diff|` compares the dense and sparse outputs.", "",
        *H.table(("graph", "N", "density", "edges", "dense fwd", "sparse fwd", "speed-up",
                  "dense grad", "sparse grad", "speed-up", "max \\|diff\\|"), [
            (r["graph"], r["n"], f"{r['density']:.0%}", r["edges"], f"{r['dense']:.1f}",
             f"{r['sparse']:.1f}", f"{r['dense'] / r['sparse']:.2f}x",
             *((f"{r['dense_grad']:.1f}", f"{r['sparse_grad']:.1f}",
                f"{r['dense_grad'] / r['sparse_grad']:.2f}x") if "dense_grad" in r
               else ("—",) * 3), f"{r['max_diff']:.1e}") for r in m["end_to_end"]]),
        "", "## The weighted sum over in-edges, four formulations (bare scan), µs per step", "",
        "Delayed gather (flat index into the `[rows * N, 1]` buffer) + weighted sum + a "
        "trivial update and the buffer roll, no dynamics or noise. `K` = largest in-degree "
        "(the padded ELL width).", "",
        *H.table(("graph", "N", "density", "edges", "K", *m["formulations"][0]["us"]), [
            (r["graph"], r["n"], f"{r['density']:.0%}", r["edges"], r["K"],
             *(f"{v:.1f}" for v in r["us"].values())) for r in m["formulations"]])]
    return "\n".join([*lines, "", m["history"]]).rstrip("\n") + "\n"


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--no-grad", action="store_true")
    p.add_argument("--dk-average", default=None,
                   help="path of dk_average's data.npz (default: tvboptim's, else hcp)")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="sparse", options=options)
