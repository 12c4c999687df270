# %% [markdown]
# # Sweeps and scale
#
# The classical exploration of a brain network model is a parameter sweep: simulate the
# model for every value of the global coupling `G` (and maybe a second parameter) and see
# where the simulated functional connectivity (FC) fits the empirical one best. In JAX a
# sweep is a `jax.vmap` over the parameter; `nd.sweep` adds batching (to fit memory), a
# progress line, and sharding of every batch across the available devices.
#
# Run it with `python tutorials/sweeps_and_scale.py` (`--quick` for a shorter run).

# %% [markdown]
# ## Several devices on one CPU
#
# To show sharding on a laptop, XLA can split the CPU into several "host devices" with
# `XLA_FLAGS=--xla_force_host_platform_device_count=4`. The flag must be set before JAX
# starts: this script sets it (when run as a script, before importing JAX, and only if
# you have not set it yourself); in a notebook, set it in the shell that starts Jupyter.
# A library must never do this. On a machine with GPUs, the same code sees the GPUs
# instead, and the flag has no effect on them.

# %%
import os
import sys

if "__file__" in globals() and "jax" not in sys.modules:  # a script, JAX not started yet
    _flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in _flags:
        os.environ["XLA_FLAGS"] = f"{_flags} --xla_force_host_platform_device_count=4".strip()

import tempfile  # noqa: E402
import time  # noqa: E402
from importlib import import_module  # noqa: E402
from importlib.util import find_spec  # noqa: E402
from pathlib import Path  # noqa: E402

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)  # before importing netdyn, before any array

import netdyn as nd  # noqa: E402

QUICK = "--quick" in sys.argv  # also False inside a notebook
# Figures need matplotlib (`pip install -e ".[plot]"`); they go to $NETDYN_TUTORIAL_OUT
# (by default a temporary folder).
plt = import_module("matplotlib.pyplot") if find_spec("matplotlib") else None
out = Path(os.environ.get("NETDYN_TUTORIAL_OUT", Path(tempfile.gettempdir()) / "netdyn-tutorials"))
print("devices:", jax.devices())

# %% [markdown]
# ## The model and what we measure
#
# A Reduced Wong-Wang network on the embedded `hcp` connectome, with BOLD sampled at the
# dataset's repetition time. The function to sweep takes a model and returns the
# correlation between the upper triangles of the simulated and the empirical FC. The key
# is fixed, so every grid point sees the same noise (common random numbers): differences
# between neighbouring points are due to the parameters, not to the noise. `batch_last=True`
# asks `simulate` to keep a batch of runs (the `vmap` below) on the trailing axis of the
# delay buffer, which is faster for a batch that shares the connectome.

# %%
data = nd.datasets.load("hcp")
# Reduced Wong-Wang nodes, delayed linear coupling G = 0.5 through delays of tract length /
# 4 mm/ms, additive noise sigma = 0.00283 (`netdyn fit --model rww`'s network).
net = nd.presets.rww(data.weights, data.lengths, G=0.5)
TR = data.tr  # 720 ms
T1 = TR * (20 if QUICK else 100)  # 14.4 s or 72 s of simulated time
WARMUP = TR * (4 if QUICK else 20)
empirical_fc = jnp.asarray(data.fc)
key = jax.random.key(1)


def fc_fit(net):
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=T1, dt=1.0, key=key,
                      monitors={"bold": nd.Bold(period=TR, warmup=WARMUP)}, batch_last=True)
    return nd.fc_correlation(nd.fc(sol["bold"]), empirical_fc)


# %% [markdown]
# ## A sweep is a `vmap`
#
# `eqx.tree_at` sets `G` inside the function, and `jax.vmap` maps it over an array of
# values: one compiled program simulates all of them at once. (JAX dispatches work
# asynchronously: `jax.block_until_ready` waits for the result, so that the time measured
# is the time of the computation.)

# %%
n_devices = len(jax.devices())
n_G = -(-(4 if QUICK else 12) // n_devices) * n_devices  # rounded up to whole devices
Gs = np.linspace(0.0, 1.0, n_G)


def fit_at(G):
    return fc_fit(eqx.tree_at(lambda n: n.coupling.G, net, G))


start = time.perf_counter()
r_vmap = jax.block_until_ready(jax.jit(jax.vmap(fit_at))(jnp.asarray(Gs)))
print(f"vmap over {len(Gs)} values of G: {time.perf_counter() - start:.1f} s")
for G, r in zip(Gs, r_vmap):
    print(f"  G = {G:.3f}: FC correlation {float(r):+.3f}")

# %% [markdown]
# ## The same batch, sharded across devices
#
# `jax.sharding` describes how an array is laid out over devices: a `Mesh` names the axes
# of an array of devices (here one axis, `"batch"`, over all of them), and a
# `NamedSharding` maps an array's axes onto mesh axes (`PartitionSpec("batch")`: split
# the first axis along `"batch"`, each device holding a contiguous slice). Put the input
# there and the compiled `vmap` runs each slice on its own device; the model, closed
# over, is replicated. The output comes back sharded the same way.

# %%
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

mesh = Mesh(np.asarray(jax.devices()), ("batch",))
G_sharded = jax.device_put(jnp.asarray(Gs), NamedSharding(mesh, PartitionSpec("batch")))
for shard in G_sharded.addressable_shards:
    print(f"  {shard.device}: G = {np.asarray(shard.data)}")
start = time.perf_counter()
r_sharded = jax.block_until_ready(jax.jit(jax.vmap(fit_at))(G_sharded))  # (JAX is async)
print(f"sharded vmap: {time.perf_counter() - start:.1f} s, output sharding "
      f"{r_sharded.sharding.spec}")
print("max |sharded - vmap| =", float(np.max(np.abs(np.asarray(r_sharded) - r_vmap))))

# %% [markdown]
# (On this CPU the "devices" share the same cores, so sharding is not faster here; on
# several GPUs each one simulates its slice.)
#
# Two parameters: `vmap` over a flattened grid (or nest two `vmap`s). Here `G` and the
# external input `I_o`.

# %%
I_os = np.linspace(0.30, 0.34, 3)
G_grid, I_grid = np.meshgrid(Gs, I_os, indexing="ij")


def fit_at_2d(G, I_o):
    return fc_fit(eqx.tree_at(lambda n: (n.coupling.G, n.dynamics.I_o), net, (G, I_o)))


r_2d_vmap = jax.jit(jax.vmap(fit_at_2d))(jnp.asarray(G_grid.ravel()),
                                         jnp.asarray(I_grid.ravel()))
r_2d_vmap = np.asarray(r_2d_vmap).reshape(G_grid.shape)
print("2-D grid (rows: G, columns: I_o):\n", np.round(r_2d_vmap, 3))

# %% [markdown]
# ## The same sweep with `nd.sweep`
#
# A `vmap` over thousands of values does not fit in memory: every simulation in the batch
# keeps its own state and delay buffer, and its own residuals if you differentiate.
# `nd.sweep(fn, model, values, where=...)` splits the grid into batches, `vmap`s each
# batch, and shards the batch axis over all devices (a `jax.sharding.Mesh`
# with one axis and a `NamedSharding` that splits the batch; the model is replicated). The
# last batch is padded to the common batch shape, so `fn` is compiled once, and the
# padding is dropped from the results. Results come back as NumPy arrays shaped like the
# grid. Without `batch_size`, the sweep takes the largest batch that fits in the devices'
# free memory, from XLA's memory analysis of the compiled batch (`max_bytes=` sets the
# budget); here `batch_size=4` just shows several batches on a small grid.

# %%
start = time.perf_counter()
r_sweep = nd.sweep(fc_fit, net, Gs, where=lambda n: n.coupling.G, batch_size=4,
                   progress=True)
print(f"nd.sweep over {len(Gs)} values on {len(jax.devices())} devices: "
      f"{time.perf_counter() - start:.1f} s")
print("max |nd.sweep - vmap| =", float(np.max(np.abs(r_sweep - np.asarray(r_vmap)))))

# %% [markdown]
# With several parameters, `where` returns a tuple and `values` is a tuple of 1-D grids:
# the sweep runs over their outer product, and the result has one axis per parameter.
# Values may also be arrays per grid point (e.g. `[n, nodes]` for a regional
# parameter, or one connectome per subject with `where=lambda n: n.graph.weights`).

# %%
r_2d = nd.sweep(fc_fit, net, (Gs, I_os),
                where=lambda n: (n.coupling.G, n.dynamics.I_o), batch_size=8)
print("result shape:", r_2d.shape, "  max |nd.sweep - vmap| =",
      float(np.max(np.abs(r_2d - r_2d_vmap))))

# %% [markdown]
# ## More devices, more hosts
#
# Nothing above is specific to CPUs. On a machine with several GPUs, `jax.devices()` lists
# them and `nd.sweep` splits every batch across them; the automatic batch is what fits
# on each device times the number of devices. Pass `devices=` to use a subset.
#
# On a cluster, start one process per host (e.g. one per node with SLURM) and call
# `jax.distributed.initialize()` at the top of the script, before anything else touches
# JAX (on SLURM and other common launchers, it finds the coordinator by itself). After
# that, `jax.devices()` lists the devices of *every* host, and every process runs the same
# script: `nd.sweep` builds each batch as a global array (each process supplies the
# shards its own devices hold), the compiled program runs across all hosts, and every
# process receives the full results. No home-made scheduler is involved: it is JAX's
# multi-controller model, the same one used to train large models.
#
# ```python
# import jax
# jax.distributed.initialize()          # one process per host
# import netdyn as nd
# r = nd.sweep(fc_fit, net, Gs, where=lambda n: n.coupling.G)
# if jax.process_index() == 0:
#     np.save("r.npy", r)
# ```
#
# ## Plots

# %%
if plt is not None:
    out.mkdir(parents=True, exist_ok=True)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
    ax1.plot(Gs, r_sweep, "o-")
    ax1.set(xlabel="G", ylabel="FC correlation", title="1-D sweep")
    im = ax2.pcolormesh(Gs, I_os, r_2d.T, shading="nearest")  # cells centred on the grid
    ax2.set(xlabel="G", ylabel="I_o", title="2-D sweep")
    fig.colorbar(im, ax=ax2, label="FC correlation")
    fig.tight_layout()
    fig.savefig(out / "sweeps_and_scale.png", dpi=120)
    plt.close(fig)
    print("figure saved to", out / "sweeps_and_scale.png")
