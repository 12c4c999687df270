"""One long run or several short realisations? Writes benchmarks/fc_stability.md.

For a fixed amount of BOLD per loss evaluation (default 288 s), compare ways to split it:
B noise realisations of T = 288 s / B each (each after its own forward-only burn-in, run
in parallel with ``vmap``). For each split, over independent seeds: the spread (standard
deviation) of the FC r against the empirical FC and of the mean FC, and the wall time of
one forward evaluation and of one gradient. The model is ``netdyn fit``'s default at the
operating point it finds (G = 0.222, sigma = 0.00287), float64.

    python scripts/benchmarks/bench_fc_stability.py
"""

import argparse
import os
import platform
import time
from pathlib import Path

import _common as C  # first: this checkout's netdyn
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402


def _timed(f, *args):
    jax.block_until_ready(f(*args))
    t = time.perf_counter()
    jax.block_until_ready(f(*args))
    return time.perf_counter() - t


def main() -> None:
    """Measure each split and write the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--total", type=float, default=288_000.0, help="ms of BOLD per evaluation")
    p.add_argument("--splits", default="1,2,4,8", help="numbers of realisations B")
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--out", default=str(C.RESULTS / "fc_stability.md"))
    a = p.parse_args()
    data = nd.datasets.load("hcp")
    net = nd.presets.rww(data.weights, data.lengths, G=jnp.asarray(0.222),
                         sigma=jnp.asarray(0.00287))
    rows = []
    for B in (int(b) for b in a.splits.split(",")):
        loss = nd.FcLoss(data.fc, nd.Heun(remat=nd.Uniform(1000)),
                         nd.Bold(period=720.0, variables="S"), duration=a.total / B,
                         burn_in=57_600.0, realisations=B, metric="1-r+mean")
        metrics = eqx.filter_jit(lambda n, k: loss(n, k)[1])
        grad = eqx.filter_jit(jax.grad(
            lambda G, k: loss(eqx.tree_at(lambda n: n.coupling.G, net, G), k)[0]))
        values = [metrics(net, jax.random.key(100 + s)) for s in range(a.seeds)]
        r = np.array([float(v["fc_r"]) for v in values])
        m = np.array([float(v["mean_fc"]) for v in values])
        t_fwd = _timed(metrics, net, jax.random.key(0))
        t_grad = _timed(grad, jnp.asarray(0.222), jax.random.key(0))
        rows.append((B, a.total / B, r.mean(), r.std(ddof=1), m.mean(), m.std(ddof=1),
                     t_fwd, t_grad))
        print(rows[-1], flush=True)
    table = "\n".join(
        f"| {B} | {T / 1000:g} s | {rm:.3f} | {rs:.3f} | {mm:.3f} | {ms:.3f} | {tf:.1f} s | "
        f"{tg:.1f} s |" for B, T, rm, rs, mm, ms, tf, tg in rows)
    Path(a.out).write_text(f"""# One long run or several realisations?

`{C.command("bench_fc_stability.py")}` on {platform.machine()}, {os.cpu_count()} CPU cores
(shared, times noisy), JAX {jax.__version__}, float64, backend {jax.default_backend()}.
{a.total / 1000:g} s of BOLD per evaluation (TR 720 ms) split into B realisations, each
after its own 57.6 s burn-in; `netdyn fit`'s model at G = 0.222, sigma = 0.00287; FC r
and mean FC (empirical 0.348) of the realisations' mean FC, over {a.seeds} seeds; time
of one forward evaluation and of one gradient (Uniform(1000)).

| B | T each | FC r mean | FC r SD | mean FC | mean FC SD | forward | gradient |
|---|---|---|---|---|---|---|---|
{table}
""")


if __name__ == "__main__":
    main()
