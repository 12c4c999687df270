# %% [markdown]
# # Gradient checkpointing for long delayed simulations
#
# Fitting a brain network model by gradient descent means differentiating a loss (here:
# the distance between simulated and empirical functional connectivity) through tens of
# thousands of time steps. Reverse-mode differentiation is cheap in time (a gradient
# costs a few forward passes, whatever the number of parameters) but expensive in
# memory: it stores, during the forward pass, what every step's derivative will need on
# the way back. This tutorial explains where that memory goes in a delayed network, how
# the remat (rematerialisation, or checkpointing) strategies of netdyn trade it for
# recomputation, checks that they all give the same loss and gradient, and ends with
# practical advice.
#
# Run it with `python tutorials/gradient_checkpointing.py` (`--quick` for a shorter run).

# %%
import os
import sys
import tempfile
import time
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)  # before importing netdyn, before any array

import netdyn as nd  # noqa: E402

QUICK = "--quick" in sys.argv  # also False inside a notebook
# Figures need matplotlib (`pip install -e ".[plot]"`); they go to $NETDYN_TUTORIAL_OUT
# (by default a temporary folder).
plt = import_module("matplotlib.pyplot") if find_spec("matplotlib") else None
out = Path(os.environ.get("NETDYN_TUTORIAL_OUT", Path(tempfile.gettempdir()) / "netdyn-tutorials"))

# %% [markdown]
# ## The workload
#
# The reference workload of netdyn's benchmarks: Reduced Wong-Wang nodes on the embedded
# `hcp` connectome (80 regions, weights scaled to a maximum of 1, delays = tract length /
# 4 mm/ms), delayed linear coupling `G = 0.5`, additive noise, stochastic Heun with
# `dt = 1` ms, Balloon-Windkessel BOLD sampled every second inside the time loop, and the
# loss: the RMSE between the simulated and the empirical FC. We differentiate it with
# respect to `G`. `nd.presets.reference_network` builds this network (the benchmark itself
# uses the HRF-kernel BOLD of `nd.presets.reference_simulation`). The benchmark runs 60 s;
# here we use shorter runs so that the tutorial finishes in a few minutes.

# %%
data = nd.datasets.load("hcp")
net = nd.presets.reference_network(data.weights, data.lengths)  # the workload's network
graph = net.graph
target = jnp.asarray(data.fc)
DT = 1.0  # ms
PERIOD = 1000.0  # BOLD sampling period, ms
SECONDS = 4.0 if QUICK else 20.0
N_STEPS = round(SECONDS * 1000.0 / DT)


def make_loss(remat, seconds=SECONDS):
    """``loss(G)``: the FC RMSE of a ``seconds``-long run, with the remat strategy ``remat``."""
    solver = nd.Heun(remat=remat)

    def loss(G):
        sol = nd.simulate(eqx.tree_at(lambda n: n.coupling.G, net, G), solver, t0=0.0,
                          t1=seconds * 1000.0, dt=DT, monitors={"bold": nd.Bold(period=PERIOD)},
                          key=jax.random.key(0))
        return nd.rmse(nd.fc(sol["bold"]), target)

    return loss


print(f"{graph.n_nodes} regions, {N_STEPS} steps of {DT} ms")

# %% [markdown]
# ## Where the memory goes
#
# A simulation is a loop $x_{k+1} = f(x_k, \theta)$, $k = 0, \dots, n - 1$, and the loss
# $L$ depends on the states. The chain rule, applied backwards, is
#
# $$
# \bar x_k = \bar x_{k+1}\,\frac{\partial f}{\partial x}(x_k, \theta), \qquad
# \bar\theta \mathrel{+}= \bar x_{k+1}\,\frac{\partial f}{\partial \theta}(x_k, \theta),
# $$
#
# from $k = n - 1$ down to $0$: step $k$'s derivative is needed *after* step $n - 1$ has
# run, and it needs $x_k$ (or the intermediate values of $f$ at $x_k$, the *residuals*).
# Plain reverse mode therefore keeps the residuals of every step: memory grows linearly
# with the number of steps.
#
# In a delayed network the loop's state, the *carry*, is large: besides the current
# state `[states, nodes]` it holds a history buffer of the coupled variable with one row
# per step of the longest delay, `max_delay / dt + 1` rows of `[nodes]`, plus the BOLD
# monitor's state. If every step saved its carry, a 60 s run would keep 60,000 history
# buffers. netdyn's time loop is written so that a step's residuals are only a few
# `[nodes]` vectors (the buffer is read with loop-invariant indices, so the delayed read
# saves nothing that grows with the graph), but that is still linear in the number of
# steps. Let us measure both quantities.

# %%
rows = round(graph.max_delay / DT) + 1
carry_bytes = (rows + 1 + 4) * graph.n_nodes * 8  # history + state + 4 BOLD states, f64
plain = nd.gradient_memory(make_loss(nd.NoRemat()), 0.5)
print(f"history buffer: {rows} rows x {graph.n_nodes} nodes; "
      f"one carry ~ {carry_bytes / 1e3:.1f} kB")
print(f"NoRemat, {N_STEPS} steps:")
print(plain)
per_step = plain.residual_bytes / N_STEPS
print(f"=> {per_step / 1e3:.2f} kB of residuals per step, "
      f"{per_step * 60_000 / 1e6:.0f} MB for 60 s, {per_step * 3_600_000 / 1e9:.1f} GB "
      "for one hour")

# %% [markdown]
# `nd.gradient_memory(fn, *args)` compiles `jax.value_and_grad(fn)` without running it and
# reports XLA's temporary memory for it (`temp_bytes`, what a remat strategy reduces)
# and the residuals reverse mode saves, by shape: the arrays with a `[periods, steps per
# period, ...]` leading shape are the per-step residuals (the state, the coupling input,
# the BOLD state). Their total grows linearly with the run: fine for a minute, not for an
# hour, nor for a batch of simulations on a GPU.
#
# ## Checkpointing: store less, recompute more
#
# A remat strategy keeps only some carries during the forward pass and recomputes the
# rest from the nearest stored one during the backward pass (`jax.checkpoint` around
# blocks of steps). In netdyn it is a field of the solver, `nd.Heun(remat=...)`:
#
# - `nd.NoRemat()`: keep every step's residuals. Fastest; memory $\propto n$.
# - `nd.Uniform(K)`: keep one carry every `K` steps; while going back through a block,
#   recompute it and keep its `K` steps of residuals. Memory
#   $\approx (n / K)\,C + K\,r$ for a carry of $C$ bytes and $r$ bytes of residuals per
#   step, smallest near $K = \sqrt{n C / r}$; cost: one extra forward pass.
# - `nd.Nested(K1, K2)`: the same idea on two levels (a carry every `K2` steps, and
#   within a `K2` block one every `K1` steps): about $n / K_2 + K_2 / K_1$ carries, two
#   extra forward passes.
# - `nd.MultiLevel(b)`: blocks of $b, b^2, b^3, \dots$ steps, all nested: memory
#   $O(b \log_b n)$ carries, each step recomputed about $\log_b n$ times. A one-hour run
#   costs barely more memory than a one-minute run.
# - `nd.Policy(names)`: checkpointed blocks that nevertheless *save* the values tagged
#   with the given names (`"state"`, `"history"`, `"coupling"`, `"monitor"`), trading
#   some memory for less recomputation.
# - `nd.Auto(max_bytes=...)`: a budget rather than a strategy. `simulate` tries the
#   strategies above from the cheapest in time and runs the first whose compiled
#   gradient fits (XLA's own memory analysis).
#
# With $C \approx$ the carry and $r \approx$ the residuals per step measured above:

# %%
k_best = int(np.sqrt(N_STEPS * carry_bytes / per_step))
print(f"C = {carry_bytes / 1e3:.1f} kB, r = {per_step / 1e3:.2f} kB: "
      f"K* = sqrt(n C / r) ~ {k_best} steps for n = {N_STEPS}")
for K in (10, k_best, 1000):
    predicted = N_STEPS / K * carry_bytes + K * per_step
    print(f"  Uniform({K}): predicted ~ {predicted / 1e6:.2f} MB")

# %% [markdown]
# ## The strategies compared on a short run
#
# For each strategy: XLA's compiled temporary memory of the gradient (from
# `nd.gradient_memory`), the saved residuals, and the steady-state time of one compiled
# `jax.value_and_grad` call (best of a few calls, after compilation). Timings on a
# shared machine are noisy: read the ratios.

# %%
def uniform_sqrt(n):
    """``Uniform(K)`` with the block size that minimises the estimate above."""
    return nd.Uniform(max(1, round(np.sqrt(n * carry_bytes / per_step))))


strategies = {"NoRemat()": nd.NoRemat(), f"Uniform({k_best})": nd.Uniform(k_best),
              "MultiLevel(16)": nd.MultiLevel(16)}
if not QUICK:
    strategies |= {
        "Uniform(1000)": nd.Uniform(1000),
        "Nested(50, 1000)": nd.Nested(50, 1000),
        "MultiLevel(4)": nd.MultiLevel(4),
        "Policy(('coupling',))": nd.Policy(("coupling",)),
        "Auto(max_bytes=4 MB)": nd.Auto(max_bytes=4_000_000),
    }
REPEATS = 1 if QUICK else 2

results = {}
for name, remat in strategies.items():
    loss = make_loss(remat)
    # (NoRemat's figures were measured above; compiling a gradient takes seconds.)
    memory = plain if name == "NoRemat()" else nd.gradient_memory(loss, 0.5)
    grad_fn = jax.jit(jax.value_and_grad(loss))
    start = time.perf_counter()
    value, grad = jax.block_until_ready(grad_fn(0.5))
    first = time.perf_counter() - start
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        jax.block_until_ready(grad_fn(0.5))
        times.append(time.perf_counter() - start)
    results[name] = dict(memory=memory, time=min(times), first=first,
                         loss=float(value), grad=float(grad))

base = results["NoRemat()"]
print(f"{'strategy':24s} {'temp MB':>8s} {'residuals MB':>13s} {'grad s':>7s} "
      f"{'x NoRemat':>9s} {'1st call s':>10s}")
for name, r in results.items():
    print(f"{name:24s} {r['memory'].temp_bytes / 1e6:8.2f} "
          f"{r['memory'].residual_bytes / 1e6:13.2f} {r['time']:7.2f} "
          f"{r['time'] / base['time']:9.2f} {r['first']:10.1f}")

# %% [markdown]
# ## Correctness: the same loss and gradient
#
# A remat strategy changes *what is stored*, not *what is computed*: the forward
# trajectory is bit-identical (noise is drawn per step from `fold_in(key, step)`, whatever
# the blocking), and the gradient equals the one without checkpointing up to floating-point
# reassociation. As an independent check, a central finite difference of the loss (the
# noise realisation is fixed by the key, so the loss is a smooth function of `G`):

# %%
loss_fn = jax.jit(make_loss(nd.NoRemat()))
h = 1e-5
finite_difference = float((loss_fn(0.5 + h) - loss_fn(0.5 - h)) / (2 * h))
print(f"{'strategy':24s} {'loss':>20s} {'d loss / d G':>22s} {'|rel. diff.|':>12s}")
for name, r in results.items():
    rel = abs(r["grad"] - finite_difference) / abs(finite_difference)
    print(f"{name:24s} {r['loss']:20.15f} {r['grad']:22.15e} {rel:12.1e}")
print(f"{'finite difference':24s} {'':20s} {finite_difference:22.15e}")
assert all(r["loss"] == base["loss"] for r in results.values())
assert all(abs(r["grad"] - base["grad"]) <= 1e-9 * abs(base["grad"]) for r in results.values())
assert abs(base["grad"] - finite_difference) <= 1e-4 * abs(finite_difference)

# %% [markdown]
# ## How memory scales with the run length
#
# The decisive property for long runs. Compiling only (nothing runs), the gradient's
# temporary memory for runs of increasing length: linear without checkpointing, about
# $\sqrt n$ with `Uniform(K*)` (the block size above, recomputed for each length), about
# $\log n$ with `MultiLevel`.

# %%
lengths = [2.0, SECONDS] if QUICK else [5.0, 10.0, 20.0, 40.0]
scaled = {"NoRemat()": lambda n: nd.NoRemat(), "Uniform(K*)": uniform_sqrt,
          "MultiLevel(16)": lambda n: nd.MultiLevel(16)}
reuse = {"NoRemat()": "NoRemat()", "Uniform(K*)": f"Uniform({k_best})",
         "MultiLevel(16)": "MultiLevel(16)"}
if QUICK:  # compiling takes most of this tutorial's time: two strategies only
    del scaled["Uniform(K*)"]
scaling = {name: [] for name in scaled}
for seconds in lengths:
    n = round(seconds * 1000.0 / DT)
    for name, strategy in scaled.items():
        if seconds == SECONDS:  # measured in the comparison above
            scaling[name].append(results[reuse[name]]["memory"].temp_bytes)
        else:
            memory = nd.gradient_memory(make_loss(strategy(n), seconds), 0.5)
            scaling[name].append(memory.temp_bytes)
print(f"{'seconds':>8s} " + " ".join(f"{name:>16s}" for name in scaling))
for i, seconds in enumerate(lengths):
    print(f"{seconds:8g} " + " ".join(f"{v[i] / 1e6:13.2f} MB" for v in scaling.values()))

# %% [markdown]
# ## The reference benchmark
#
# `scripts/benchmarks/bench_remat.py` measures every strategy on the full 60 s reference workload,
# each in a fresh process (compiled memory, peak resident memory, gradient time), and
# writes `benchmarks/remat.md` and `benchmarks/remat.png`. When they are present in your
# checkout, the cell below prints the table and copies the figure next to this
# tutorial's figures.
#
# <!-- benchmark: remat -->

# %%
def find_repo_root():
    here = [Path(__file__).resolve().parent] if "__file__" in globals() else []
    for folder in here + [Path.cwd()]:
        for candidate in (folder, *folder.parents):
            if (candidate / "benchmarks").is_dir() and (candidate / "netdyn").is_dir():
                return candidate
    return None


out.mkdir(parents=True, exist_ok=True)
root = find_repo_root()
report = None if root is None else root / "benchmarks" / "remat.md"
if report is not None and report.is_file():
    tables, current = [], []
    for line in report.read_text().splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    print(f"{report}: {len(tables)} table(s)")
    for table in tables:
        print("\n" + "\n".join(table))
    figure = report.with_suffix(".png")
    if figure.is_file():
        (out / "remat_benchmark.png").write_bytes(figure.read_bytes())
        print("benchmark figure copied to", out / "remat_benchmark.png")
else:
    print("benchmarks/remat.md not found: run "
          "`python scripts/benchmarks/bench_remat.py` to produce it.")

# %% [markdown]
# ## Figures

# %%
if plt is not None:
    names = list(results)
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(14, 4))
    ax1.barh(names, [results[k]["memory"].temp_bytes / 1e6 for k in names])
    ax1.set(xlabel="compiled temporary memory (MB)", title=f"gradient memory, {SECONDS:g} s")
    ax1.invert_yaxis()
    ax2.barh(names, [results[k]["time"] / base["time"] for k in names])
    ax2.axvline(1.0, color="k", lw=0.8)
    ax2.set(xlabel="gradient time / NoRemat", title="recomputation cost")
    ax2.invert_yaxis()
    ax2.set_yticklabels([])
    for name, values in scaling.items():
        ax3.plot(lengths, np.asarray(values) / 1e6, "o-", label=name)
    ax3.set(xscale="log", yscale="log", xlabel="simulated time (s)",
            ylabel="compiled temporary memory (MB)", title="scaling with run length")
    ax3.set_xticks(lengths, [f"{s:g}" for s in lengths])
    ax3.set_xticks([], minor=True)
    ax3.legend()
    fig.tight_layout()
    fig.savefig(out / "gradient_checkpointing.png", dpi=120)
    plt.close(fig)
    print("figure saved to", out / "gradient_checkpointing.png")

# %% [markdown]
# ## Choosing a strategy
#
# - **Short runs, or memory to spare**: `nd.NoRemat()` (the default of `nd.Heun()`) does
#   the least arithmetic. It is not always the fastest: on a CPU, checkpointed blocks
#   keep the working set in cache, and `Uniform` often runs as fast or faster (compare
#   the table above on your machine). Use `nd.gradient_memory` on your loss to see what
#   `NoRemat` costs.
# - **The usual choice**: `nd.Uniform(K)` with `K` near $\sqrt{n\,C/r}$ (a few hundred
#   to a thousand steps for a minute of simulation): memory drops by one to two orders of
#   magnitude for roughly one extra forward pass. A `K` that does not divide the number
#   of steps is fine (blocks are balanced and padded); a `K` that is a multiple of the
#   monitor period groups whole periods.
# - **Very long runs (many minutes to hours), or large batches on a GPU**:
#   `nd.MultiLevel(b)` (e.g. `b = 8` or `16`) keeps memory logarithmic in the run length
#   for a few extra forward passes (a smaller `b` means more levels: less memory, more
#   recomputation, and a longer compilation); `nd.Nested(K1, K2)` is the two-level middle
#   ground.
# - **A hard memory budget**: `nd.Auto(max_bytes=...)` picks the fastest candidate whose
#   compiled gradient fits, from the shapes of the run alone. It compiles several
#   candidates in every trace of `simulate`, so call
#   `nd.choose_remat(network, solver, t0=..., t1=..., dt=..., monitors=..., key=...)`
#   (the arguments of `simulate`) once, outside `jax.jit`: it returns the strategy and its
#   memory, to print, hard-code, or put in the solver in place of the budget.
# - Vectorising over a batch (`jax.vmap`, `nd.sweep`, `nd.fit_multistart`) multiplies the
#   per-simulation memory by the batch size: that is where checkpointing pays most.
#
# Swapping the strategy of an existing solver is one line,
# `eqx.tree_at(lambda s: s.remat, solver, nd.Uniform(500))`; the forward result does not
# change, so it can be tuned after the model is written.

# %%
solver = eqx.tree_at(lambda s: s.remat, nd.Heun(), nd.Uniform(500))
print(solver)
