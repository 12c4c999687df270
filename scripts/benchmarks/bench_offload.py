#!/usr/bin/env python
"""Host offloading of checkpoints on an accelerator: what ``Policy(offload=True)`` buys.

On a GPU, ``nd.Policy(names, offload=True)`` moves the values tagged ``names`` to pinned
host memory during the forward pass (``save_and_offload_only_these_names``) instead of
keeping them on the device. This script compiles the gradient of an FC loss through a
BOLD monitor (reference-like workload: RWW, delays, noise, stochastic Heun, dt = 1 ms)
with and without offloading and prints XLA's ``memory_analysis()`` (device and host
temporaries), then times each gradient. On a CPU there is no separate host memory and
offloading is pointless: the script says so and exits.

    python scripts/benchmarks/bench_offload.py --seconds 60
"""

import argparse
import time

import _common as C  # first: this checkout's netdyn
import equinox as eqx
import jax
import jax.numpy as jnp

import netdyn as nd


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--nodes", type=int, default=84)
    ap.add_argument("--x64", action="store_true")
    args = ap.parse_args(argv)
    if args.x64:
        jax.config.update("jax_enable_x64", True)
    platform = jax.devices()[0].platform
    print(f"jax {jax.__version__} on {platform}: {jax.devices()[0].device_kind}")
    if platform == "cpu":
        print("CPU only: host offloading does not apply.")
        return
    weights, lengths, target = C.random_connectome(args.nodes, pin_longest=False)
    net = nd.presets.rww(weights, lengths)  # the reference network (weights / max)
    target = jnp.asarray(target)
    t1 = 1000.0 * args.seconds

    def make_loss(remat):
        def loss(G):
            sol = nd.simulate(eqx.tree_at(lambda n: n.coupling.G, net, G),
                              nd.Heun(remat=remat), t0=0.0, t1=t1, dt=1.0,
                              monitors={"bold": nd.Bold(period=1000.0)},
                              key=jax.random.key(0))
            return nd.rmse(nd.fc(sol["bold"][:, 0]), target)

        return loss

    strategies = {
        "NoRemat": nd.NoRemat(),
        "Uniform(1000)": nd.Uniform(1000),
        "MultiLevel(16)": nd.MultiLevel(16),
        "Policy(coupling)": nd.Policy(("coupling",), block=1000),
        "Policy(coupling, offload)": nd.Policy(("coupling",), block=1000, offload=True),
        "Policy(state+coupling)": nd.Policy(("state", "coupling"), block=1000),
        "Policy(state+coupling, offload)": nd.Policy(("state", "coupling"), block=1000,
                                                     offload=True),
    }
    G = jnp.asarray(0.5)
    print(f"{'strategy':34} {'dev temp MB':>11} {'host temp MB':>12} {'grad s':>8} "
          f"{'loss':>10} {'dloss/dG':>12}")
    for name, remat in strategies.items():
        f = jax.jit(jax.value_and_grad(make_loss(remat)))
        try:
            compiled = f.lower(G).compile()
        except Exception as e:  # report and go on: one strategy failing is a result
            print(f"{name:34} failed to compile: {type(e).__name__}: {str(e)[:200]}")
            continue
        mem = compiled.memory_analysis()
        host = getattr(mem, "host_temp_size_in_bytes", float("nan"))
        value, grad = compiled(G)
        jax.block_until_ready(grad)
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            jax.block_until_ready(compiled(G))
            best = min(best, time.perf_counter() - t)
        print(f"{name:34} {mem.temp_size_in_bytes / 1e6:11.2f} {host / 1e6:12.2f} "
              f"{best:8.3f} {float(value):10.6f} {float(grad):12.6e}", flush=True)


if __name__ == "__main__":
    main()
