"""How well does the reference model fit the embedded empirical FC? Writes benchmarks/fit.md.

The model is exactly ``netdyn fit``'s default (HCP group connectome, Reduced Wong-Wang,
delayed linear coupling, BOLD of S, one fixed noise realisation), simulated for
``--duration`` ms. Three measurements, all scored by the Pearson r between the upper
triangles of the simulated and empirical FC:

(a) a grid over the global coupling G (``nd.sweep``, vmapped forward simulations);
(b) the gradient fit of G (``nd.fit``, Adam, loss 1 - r), from the command's default G;
(c) the gradient fit of G and a per-region I_o (80 values), from the result of (b).

    python scripts/fit_quality.py                      # 60 s simulations
    python scripts/fit_quality.py --duration 36000 --steps 30 --out /tmp/fit.md
"""

import argparse
import os
import platform
import time

import equinox as eqx
import jax
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402
from netdyn._cli import _build_parser, _load_data, _network, _remat, _selection  # noqa: E402


def _setup(duration: float, fit: str):
    """The model, loss, where and bounds that ``netdyn fit --duration D --fit F`` builds."""
    args = _build_parser().parse_args(["fit", "--duration", str(duration), "--fit", fit])
    weights, lengths, target, _ = _load_data(args)
    net, monitor = _network(args, weights, lengths)
    where, bounds, net = _selection(args, net)
    loss_fn = nd.FcLoss(target, nd.Heun(remat=_remat(args.remat)), monitor,
                        duration=args.duration, dt=args.dt, metric=args.loss)
    return args, net, loss_fn, where, bounds


def _final_r(loss_fn, model, key) -> float:
    return float(eqx.filter_jit(loss_fn)(model, key)[1]["fc_r"])


def _fit(net, loss_fn, where, bounds, lr, steps, key):
    t = time.perf_counter()
    fitted, h = nd.fit(net, loss_fn, optax.adam(lr), where=where, bounds=bounds,
                       steps=steps, key=key, progress=True)
    total = time.perf_counter() - t
    return fitted, h, total


def main() -> None:
    """Run the three measurements and write the report."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, default=60_000.0, help="ms (default 60000)")
    p.add_argument("--steps", type=int, default=25, help="steps of each fit (default 25)")
    p.add_argument("--grid", type=int, default=16, help="G grid points (default 16)")
    p.add_argument("--out", default="benchmarks/fit.md")
    a = p.parse_args()
    key = jax.random.key(0)
    load0 = os.getloadavg()
    t_all = time.perf_counter()

    # (a) grid over G.
    args, net, loss_fn, where_g, bounds_g = _setup(a.duration, "G")
    grid = np.linspace(0.05, 0.8, a.grid)

    def fc_r(m):
        return loss_fn(m, key)[1]["fc_r"]

    t = time.perf_counter()
    r_grid = np.asarray(nd.sweep(fc_r, net, grid, where=lambda n: n.coupling.G,
                                 batch_size=a.grid))
    t_grid = time.perf_counter() - t
    best = int(np.nanargmax(r_grid))
    print(f"grid: best G = {grid[best]:.4g}, r = {r_grid[best]:.4f} ({t_grid:.0f} s)")

    # (b) gradient fit of G.
    r_start = _final_r(loss_fn, net, key)
    fit_g, h_g, total_g = _fit(net, loss_fn, where_g, bounds_g, args.lr, a.steps, key)
    r_g = _final_r(loss_fn, fit_g, key)
    G_fit = float(fit_g.coupling.G)
    per_step_g = float(np.median(h_g.wall_time[1:]))
    print(f"fit G: G = {G_fit:.4g}, r {r_start:.4f} -> {r_g:.4f}, {per_step_g:.2f} s/step")

    # (c) G and a per-region I_o, from (b)'s G.
    _, net2, loss2, where2, bounds2 = _setup(a.duration, "G,I_o")
    net2 = eqx.tree_at(lambda n: n.coupling.G, net2, fit_g.coupling.G)
    lr2 = 0.05
    fit_2, h_2, total_2 = _fit(net2, loss2, where2, bounds2, lr2, a.steps, key)
    r_2 = _final_r(loss2, fit_2, key)
    per_step_2 = float(np.median(h_2.wall_time[1:]))
    I_o = np.asarray(fit_2.dynamics.I_o)
    print(f"fit G, I_o: r -> {r_2:.4f}, {per_step_2:.2f} s/step")
    load1 = os.getloadavg()
    t_all = time.perf_counter() - t_all

    row_a = (
        f"| (a) grid over G, {a.grid} points in [{grid[0]:g}, {grid[-1]:g}] (one vmapped "
        f"batch) | best G = {grid[best]:.3f}, **FC r = {r_grid[best]:.4f}** ({t_grid:.0f} s "
        "for the grid, compilation included) |"
    )
    row_b = (
        f"| (b) gradient fit of G, Adam lr {args.lr}, {a.steps} steps from G = "
        f"{float(net.coupling.G):g} | G = {G_fit:.4f}, FC r {r_start:.4f} -> **{r_g:.4f}**; "
        f"{per_step_g:.2f} s/step (median), first step {h_g.wall_time[0]:.0f} s "
        f"(compilation), {total_g:.0f} s in all |"
    )
    row_c = (
        f"| (c) G + per-region I_o (81 parameters), Adam lr {lr2}, {a.steps} steps from (b) "
        f"| G = {float(fit_2.coupling.G):.4f}, I_o in [{I_o.min():.3f}, {I_o.max():.3f}] "
        f"(mean {I_o.mean():.3f}), FC r -> **{r_2:.4f}**; {per_step_2:.2f} s/step (median), "
        f"{total_2:.0f} s in all |"
    )
    grid_rows = "\n".join(f"| {g:.3f} | {r:.4f} |" for g, r in zip(grid, r_grid))
    text = f"""# Fitting the reference model to the embedded empirical FC

Model: `netdyn fit`'s default (embedded HCP group connectome, 80 regions, delays =
length / 4 mm/ms; Reduced Wong-Wang w = 0.5, I_o = 0.32; delayed linear coupling;
additive noise sigma = 0.00283; stochastic Heun dt = 1 ms, remat `{args.remat}`;
Balloon-Windkessel BOLD of S at TR = 720 ms after a 7.2 s warm-up), simulated for
**{a.duration / 1000:g} s**, one fixed noise realisation (seed 0). Score: Pearson r between
the upper triangles of simulated and empirical FC.

Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, CPU only,
shared with other jobs: load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end
(times are noisy). JAX {jax.__version__}, float64. Whole script: {t_all:.0f} s.

| measurement | result |
|---|---|
{row_a}
{row_b}
{row_c}

FC r after a fit is that of the final parameters (one more simulation, same noise).

## Grid (a)

| G | FC r |
|---|---|
{grid_rows}

## Commands

```
python scripts/fit_quality.py --duration {a.duration:g} --steps {a.steps} --grid {a.grid}
netdyn fit --out /tmp/netdyn-fit                       # the default command (36 s, 30 steps)
netdyn fit --fit G,I_o --duration 60000 --out results/  # (c) from the command line
```
"""
    with open(a.out, "w") as f:
        f.write(text)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
