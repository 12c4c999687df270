"""Float32 across the critical region: finite FC and gradients everywhere. Appends to
benchmarks/float32.md.

Reduced Wong-Wang's transfer function H = u / (1 - exp(-d u)) is 0/0 at u = 0, which the
default model crosses at its operating point; written naively it gave NaN FC for half of
a float32 G grid. This runs a float32 grid over G (forward, several noise realisations,
after a burn-in) and the float32 gradient of the fit's loss at each point.

    python scripts/studies/bench_float32.py
    python scripts/studies/bench_float32.py --smoke     # 2 values of G, 1 realisation
"""

import time

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import netdyn as nd


def measure(a) -> dict:
    """The grid's values and gradients; the truncated and exact derivative at one point."""
    if a.smoke:
        a.grid, a.realisations = 2, 1
    assert not jax.config.jax_enable_x64
    data = nd.datasets.load("hcp")
    net = nd.presets.rww(data.weights.astype(np.float32), data.lengths.astype(np.float32),
                         G=jnp.asarray(0.22, jnp.float32),
                         sigma=jnp.asarray(0.00283, jnp.float32))
    loss = nd.FcLoss(data.fc.astype(np.float32), nd.Heun(remat=nd.Uniform(720)),
                     nd.Bold(period=720.0, variables="S"), duration=43_200.0,
                     burn_in=57_600.0, realisations=a.realisations, metric="1-r+mean",
                     burn_in_gradient=False)  # the truncated gradient, as measured
    key = jax.random.key(0)

    @eqx.filter_jit
    def point(G):
        def f(G):
            return loss(eqx.tree_at(lambda n: n.coupling.G, net, G), key)
        (value, metrics), grad = jax.value_and_grad(f, has_aux=True)(G)
        return value, metrics, grad

    Gs = np.linspace(0.20, 0.26, a.grid).astype(np.float32)
    rows = []
    t = time.perf_counter()
    for G in Gs:
        value, metrics, grad = point(jnp.asarray(G))
        rows.append((float(G), float(value), float(metrics["fc_r"]), float(metrics["mean_fc"]),
                     float(grad)))
        print(rows[-1], flush=True)
    seconds = time.perf_counter() - t
    # The truncated and the exact derivative against finite differences, on the upper branch.
    G_check, h = 0.245, 0.002
    one = loss.replace(realisations=1)  # truncated (burn_in_gradient=False, as above)
    exact = one.replace(burn_in_gradient=True)

    def value(loss_fn, G):
        return loss_fn(eqx.tree_at(lambda n: n.coupling.G, net, G), key)[0]

    G = jnp.asarray(G_check, jnp.float32)
    g_trunc = float(jax.jit(jax.grad(lambda G: value(one, G)))(G))
    g_full = float(jax.jit(jax.grad(lambda G: value(exact, G)))(G))
    f = jax.jit(lambda G: value(one, G))
    g_fd = (float(f(G + h)) - float(f(G - h))) / (2 * h)
    print("truncated", g_trunc, "exact", g_full, "fd", g_fd)
    finite = all(np.isfinite(r[1:]).all() for r in rows)
    print("finite:", finite)
    return {"grid": a.grid, "realisations": a.realisations, "seconds": seconds, "rows": rows,
            "finite": bool(finite), "G_check": G_check, "h": h, "g_trunc": g_trunc,
            "g_full": g_full, "g_fd": g_fd, "jax": f"JAX {jax.__version__}, "
            f"{jax.default_backend()}"}


def render(m: dict) -> str:
    """The grid's table and the derivative check."""
    rows = m["rows"]
    table = "\n".join(f"| {G:.4f} | {v:.4f} | {r:.3f} | {mf:.3f} | {g:.4g} |"
                      for G, v, r, mf, g in rows)
    return f"""# Float32 across the critical region

`{C.command("studies/bench_float32.py")}` (float32, {m['jax']}):
the default model of `netdyn fit` (sigma = 0.00283), {m['grid']} values of G over
[{rows[0][0]:.2f}, {rows[-1][0]:.2f}], each: a 57.6 s burn-in, then {m['realisations']} x 43.2 s of
BOLD, loss 1 - r + |mean FC difference| and its gradient in G ({m['seconds']:.0f} s in all).
**Every value and gradient finite: {m['finite']}.**

The derivative is `FcLoss`'s default, which holds the burn-in's final state fixed. It is
finite everywhere, but where the dynamics relax slowly from the held state (the upper
branch, above the FC peak) it can have the wrong sign. At G = {m['G_check']}, one realisation:
{m['g_trunc']:.4g} truncated, {m['g_full']:.4g} with `burn_in_gradient=True`, {m['g_fd']:.4g} by
central differences of the whole objective (G +- {m['h']}).

| G | loss | FC r | mean FC | d loss / dG |
|---|---|---|---|---|
{table}
"""


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--grid", type=int, default=21)
    p.add_argument("--realisations", type=int, default=4)


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="float32", options=options)
