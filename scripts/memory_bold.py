#!/usr/bin/env python
"""Compiled memory of the gradient of an FC loss through a BOLD monitor.

The ANCHORS reference workload (``/work/shared/design/ANCHORS.md``): Reduced Wong-Wang
(w = 0.5, I_o = 0.32, initial S = 0.3) on 84 nodes with delays up to 56 ms (58 history
rows at dt = 1 ms), delayed linear coupling G = 0.5, additive noise sigma = 0.00283,
stochastic Heun, dt = 1 ms, a BOLD monitor with TR = 1 s, loss = RMSE between the FC of
the BOLD (after skipping min(20, samples // 2) samples) and a target FC, gradient with
respect to G.

By default the connectome is random with the reference's sizes (memory depends only on
them); ``--dataset NAME`` uses ``netdyn.datasets.load(NAME)`` (weights / max, delays =
lengths / 4 mm/ms, its FC as the target). Prints XLA's ``memory_analysis()`` of
``jax.jit(jax.value_and_grad(loss))`` (compiled, not run), for each duration, monitor
and remat strategy::

    python scripts/memory_bold.py                 # 10, 30, 60 s
    python scripts/memory_bold.py --durations 60 --dataset hcp
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import netdyn as nd

jax.config.update("jax_enable_x64", True)


def connectome(dataset: str | None, n: int = 84, max_delay: float = 56.0):
    if dataset is not None:
        import netdyn.datasets

        data = netdyn.datasets.load(dataset)
        weights = data.weights / data.weights.max()
        delays = data.lengths / 4.0
        target = data.fc if data.fc is not None else np.eye(len(weights))
        return weights, delays, target, f"{dataset} ({len(weights)} nodes)"
    rng = np.random.default_rng(0)
    weights = rng.uniform(0.0, 1.0, (n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(weights, 0.0)
    delays = rng.uniform(2.0, max_delay, (n, n))
    delays[0, 1] = max_delay
    target = np.corrcoef(rng.standard_normal((4 * n, n)).T)
    return weights / weights.max(), delays, target, f"random ({n} nodes)"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--durations", type=float, nargs="+", default=[10.0, 30.0, 60.0],
                    help="run lengths in seconds")
    ap.add_argument("--dataset", default=None)
    ap.add_argument("--block", type=int, default=1000, help="Uniform remat block (steps)")
    args = ap.parse_args(argv)

    weights, delays, target, name = connectome(args.dataset)
    graph = nd.DelayGraph(weights, delays)
    print(f"connectome: {name}, max delay {float(np.max(delays)):.1f} ms, jax "
          f"{jax.__version__}, {jax.devices()[0].platform}")
    monitors = {
        "Bold": nd.Bold(period=1000.0),
        "HrfBold": nd.HrfBold(period=1000.0),
    }
    strategies = {"NoRemat": nd.NoRemat(), f"Uniform({args.block})": nd.Uniform(args.block)}
    print(f"{'T (s)':>6} {'monitor':>8} {'remat':>14} {'temp MB':>9} {'args+out MB':>12}")
    for seconds in args.durations:
        t1 = 1000.0 * seconds
        n_samples = round(seconds)
        skip = min(20, n_samples // 2)
        for mname, monitor in monitors.items():
            for rname, remat in strategies.items():

                def loss(G, monitor=monitor, remat=remat):
                    net = nd.Network(
                        nd.ReducedWongWang(w=0.5, I_o=0.32, initial_S=0.3),
                        nd.DelayedLinear(G=G),
                        graph,
                        nd.AdditiveNoise(sigma=0.00283),
                    )
                    sol = nd.simulate(net, nd.Heun(remat=remat), t0=0.0, t1=t1, dt=1.0,
                                      monitors={"bold": monitor}, key=jax.random.key(0))
                    return nd.rmse(nd.fc(sol["bold"][skip:]), target)

                compiled = jax.jit(jax.value_and_grad(loss)).lower(jnp.asarray(0.5)).compile()
                mem = compiled.memory_analysis()
                io = (mem.argument_size_in_bytes + mem.output_size_in_bytes) / 1e6
                print(f"{seconds:6.0f} {mname:>8} {rname:>14} "
                      f"{mem.temp_size_in_bytes / 1e6:9.2f} {io:12.3f}", flush=True)


if __name__ == "__main__":
    main()
