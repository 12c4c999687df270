"""One long run or several short realisations? Writes benchmarks/fc_stability.md.

For a fixed amount of BOLD per loss evaluation (default 288 s), compare ways to split it:
B noise realisations of T = 288 s / B each (each after its own forward-only burn-in, run
in parallel with ``vmap``). For each split, over independent seeds: the spread (standard
deviation) of the FC r against the empirical FC and of the mean FC, and the wall time of
one forward evaluation and of one gradient. The model is ``netdyn fit``'s default at the
operating point it finds (G = 0.222, sigma = 0.00287), float64.

    python scripts/studies/bench_fc_stability.py
    python scripts/studies/bench_fc_stability.py --smoke      # 2 splits of 14.4 s, 2 seeds
"""

import os
import platform

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402


def _timed(f, *args):
    """Seconds of the second call of ``f`` (the first compiles)."""
    jax.block_until_ready(f(*args))
    return C.timed(f, *args)[1]


def measure(a) -> dict:
    """Each split's spread of FC r and mean FC over the seeds, and its times."""
    if a.smoke:
        a.total, a.splits, a.seeds = 14_400.0, "1,2", 2
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
    return {"total": a.total, "seeds": a.seeds, "rows": rows,
            "platform": f"{platform.machine()}, {os.cpu_count()} CPU cores",
            "jax": f"JAX {jax.__version__}, float64, backend {jax.default_backend()}"}


def render(m: dict) -> str:
    """The table of splits."""
    table = "\n".join(
        f"| {B} | {T / 1000:g} s | {rm:.3f} | {rs:.3f} | {mm:.3f} | {ms:.3f} | {tf:.1f} s | "
        f"{tg:.1f} s |" for B, T, rm, rs, mm, ms, tf, tg in m["rows"])
    return f"""# One long run or several realisations?

`{C.command("studies/bench_fc_stability.py")}` on {m['platform']}
(shared, times noisy), {m['jax']}.
{m['total'] / 1000:g} s of BOLD per evaluation (TR 720 ms) split into B realisations, each
after its own 57.6 s burn-in; `netdyn fit`'s model at G = 0.222, sigma = 0.00287; FC r
and mean FC (empirical 0.348) of the realisations' mean FC, over {m['seeds']} seeds; time
of one forward evaluation and of one gradient (Uniform(1000)).

| B | T each | FC r mean | FC r SD | mean FC | mean FC SD | forward | gradient |
|---|---|---|---|---|---|---|---|
{table}
""" + (f"\n{m['reading']}\n" if "reading" in m else "")  # a reading added by hand, kept


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--total", type=float, default=288_000.0, help="ms of BOLD per evaluation")
    p.add_argument("--splits", default="1,2,4,8", help="numbers of realisations B")
    p.add_argument("--seeds", type=int, default=6)


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="fc_stability", options=options)
