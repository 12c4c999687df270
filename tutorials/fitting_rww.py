# %% [markdown]
# # Fitting a Reduced Wong-Wang network to empirical FC
#
# A whole-brain model is usually tuned by a grid search over its global coupling `G`.
# With a differentiable simulator we can instead descend the gradient of the loss, which
# also works for hundreds of parameters: here first `G`, then `G` together with one
# external input `I_o` per region (81 parameters). The target is the empirical
# functional connectivity (FC) of the embedded `hcp` dataset.
#
# Run it with `python tutorials/fitting_rww.py` (`--quick` for a shorter run). The same
# fit of `G` is available from the command line as `netdyn fit`.

# %%
import os
import sys
import tempfile
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import netdyn as nd

jax.config.update("jax_enable_x64", True)
QUICK = "--quick" in sys.argv  # also False inside a notebook

# %% [markdown]
# ## Data and model
#
# The `hcp` dataset holds a group connectome of 80 AAL2 regions (weights
# `W[target, source]`, tract lengths in mm), and the group-average FC of the subjects'
# resting-state BOLD, sampled every `TR = 720` ms. The model: Reduced Wong-Wang nodes
# (Deco et al. 2013), delays from the tract lengths at 4 mm/ms, delayed linear coupling,
# additive noise on `S`, and Balloon-Windkessel BOLD computed inside the time loop.
#
# Parameters that will be fitted are given as JAX arrays from the start, with the shape
# they will have: `I_o` is a `[nodes]` vector (equal values for now). A model whose
# leaves keep their shapes compiles once for all the evaluations below.

# %%
data = nd.datasets.load("hcp")
n_nodes = data.weights.shape[0]
net = nd.Network(
    dynamics=nd.ReducedWongWang(w=0.5, I_o=jnp.full(n_nodes, 0.32)),
    coupling=nd.DelayedLinear(G=jnp.asarray(0.25)),
    graph=nd.DelayGraph.from_lengths(data.weights, data.lengths, speed=4.0),
    noise=nd.AdditiveNoise(sigma=0.00283),
)
TR = data.tr
DURATION = TR * (15 if QUICK else 50)  # 10.8 s or 36 s of simulated time
WARMUP = TR * (3 if QUICK else 10)  # ms of BOLD discarded: the initial transient
print(f"{n_nodes} regions, {DURATION / 1000:.1f} s simulated, "
      f"{round((DURATION - WARMUP) / TR)} BOLD samples per FC")

# %% [markdown]
# ## The loss
#
# `nd.FcLoss` simulates the network with a solver and one monitor, takes the FC of the
# monitored signal and compares it with the target. `metric="1-r"` minimises one minus
# the Pearson correlation of the upper triangles (the usual "FC fit", insensitive to the
# overall level of correlation); it also reports `fc_r` and the `rmse`. The solver's
# remat strategy bounds the gradient's memory (see the *Gradient checkpointing*
# tutorial): one checkpoint per BOLD sample here.
#
# The loss is called as `loss_fn(model, key)`. The key fixes the noise realisation: with
# the same key at every step (the default of `nd.fit`), the loss is a smooth function of
# the parameters ("common random numbers").

# %%
loss_fn = nd.FcLoss(
    data.fc,
    nd.Heun(remat=nd.Uniform(round(TR))),
    nd.Bold(period=TR, variables="S", warmup=WARMUP),
    duration=DURATION,
    metric="1-r",
)
key = jax.random.key(0)
evaluate = eqx.filter_jit(loss_fn)
loss0, metrics0 = evaluate(net, key)
print(f"initial: loss {float(loss0):.4f}, FC r {float(metrics0['fc_r']):+.4f}")

# %% [markdown]
# ## A look at the landscape
#
# Before fitting, the loss along `G` (forward simulations only, all at once with
# `nd.sweep`): it tells us where a reasonable optimum lies and lets us judge the fit.

# %%
G_grid = np.linspace(0.05, 0.8, 5 if QUICK else 16)
landscape = nd.sweep(lambda m: evaluate(m, key), net, G_grid,
                     where=lambda n: n.coupling.G, batch_size=8)
landscape_loss, landscape_r = landscape[0], landscape[1]["fc_r"]
for G, r in zip(G_grid, landscape_r):
    print(f"  G = {G:.3f}: FC r {r:+.3f}")

# %% [markdown]
# ## Step 1: the global coupling
#
# `nd.fit(model, loss_fn, optimizer, where=..., steps=...)` runs an Optax loop: each step
# evaluates the loss and its gradient with respect to the leaves selected by `where`, in
# one compiled function, and applies the optimiser's update. `bounds=nd.Positive()`
# optimises `G` through a softplus, so it stays positive whatever the step size (the
# Adam learning rate applies to that unconstrained value). The history holds, per step,
# the loss, the metrics, the gradient norm, the parameters and the wall time.

# %%
fitted_G, history_G = nd.fit(
    net, loss_fn, optax.adam(0.1),
    where=lambda n: n.coupling.G,
    bounds=nd.Positive(),
    steps=4 if QUICK else 20,
    key=key,
    progress=True,
)
print(f"G: {float(net.coupling.G):.3f} -> {float(fitted_G.coupling.G):.3f}; "
      f"FC r {history_G.metrics['fc_r'][0]:+.3f} -> {history_G.metrics['fc_r'][-1]:+.3f} "
      f"(at the last step evaluated)")
print(f"{len(history_G)} steps, {history_G.wall_time[1:].mean():.2f} s per step after the "
      f"first ({history_G.wall_time[0]:.1f} s, with compilation)")

# %% [markdown]
# ## Step 2: one input per region
#
# Starting from the fitted model, fit `G` and the regional input `I_o` together: `where`
# returns a tuple, and `bounds` gives one transform per selected leaf. `I_o` is kept in
# `(0.2, 0.45)` by a scaled sigmoid (`nd.Interval`), a range where the Reduced Wong-Wang
# node stays in its low-activity regime. Each step still costs one forward and one
# backward simulation: 81 parameters cost as much as one.

# %%
fitted, history = nd.fit(
    fitted_G, loss_fn, optax.adam(0.05),
    where=lambda n: (n.coupling.G, n.dynamics.I_o),
    bounds=(nd.Positive(), nd.Interval(0.2, 0.45)),
    steps=4 if QUICK else 25,
    key=key,
    progress=True,
)
I_o = np.asarray(fitted.dynamics.I_o)
print(f"G = {float(fitted.coupling.G):.3f}; I_o from {I_o.min():.3f} to {I_o.max():.3f}")
print(f"FC r {history.metrics['fc_r'][0]:+.3f} -> {history.metrics['fc_r'][-1]:+.3f}")

# %% [markdown]
# The correlation `r` is insensitive to the overall level of the simulated FC: the RMSE
# reported alongside shows how far that level is from the empirical one (short
# simulations, dominated by slow fluctuations shared by all regions, give high
# correlations everywhere). Fit with `metric="rmse"` when the level matters too.
#
# ## Did it generalise?
#
# The fit used one noise realisation. A fresh key gives a new one: if the FC correlation
# holds up, the parameters describe the model, not the particular noise. (With 81
# parameters and a short simulation, some of the gain is expected to be overfitting to
# the noise; longer simulations and `redraw=True`, a new key every step, reduce it.)

# %%
models = {"initial": net, "fitted G": fitted_G, "fitted G + regional I_o": fitted}
print(f"{'model':26s} {'FC r (fit noise)':>17s} {'FC r (new noise)':>17s}")
for name, model in models.items():
    r_fit = float(evaluate(model, key)[1]["fc_r"])
    r_new = float(evaluate(model, jax.random.key(1))[1]["fc_r"])
    print(f"{name:26s} {r_fit:+17.3f} {r_new:+17.3f}")

# %% [markdown]
# ## Plots
#
# The loss along `G` with the steps of the first fit, the loss of both fits, the
# simulated and empirical FC, and the fitted regional inputs against each region's
# total incoming weight. The history can also be saved (`history.to_csv(...)`,
# `history.to_json(...)`); `nd.fit(..., checkpoint=path, resume=True)` makes a long fit
# resumable.

# %%
try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    out = Path(os.environ.get("NETDYN_TUTORIAL_OUT",
                              Path(tempfile.gettempdir()) / "netdyn-tutorials"))
    out.mkdir(parents=True, exist_ok=True)
    simulated = np.asarray(eqx.filter_jit(loss_fn.simulated_fc)(fitted, key))
    iu = np.triu_indices(n_nodes, 1)
    fig, axes = plt.subplots(2, 3, figsize=(14, 8))
    ax = axes[0, 0]
    ax.plot(G_grid, landscape_loss, "k.-", label="sweep")
    ax.plot(history_G.params["coupling.G"], history_G.loss, "o-", color="C1", ms=4,
            label="fit steps")
    ax.set(xlabel="G", ylabel="1 - FC r", title="loss along G")
    ax.legend()
    ax = axes[0, 1]
    n1 = len(history_G)
    ax.plot(np.arange(n1), history_G.loss, label="step 1: G")
    ax.plot(n1 + np.arange(len(history)), history.loss, label="step 2: G + regional I_o")
    ax.set(xlabel="optimisation step", ylabel="1 - FC r", title="loss")
    ax.legend()
    ax = axes[0, 2]
    strength = data.weights.sum(axis=1)  # incoming: W[target, source] summed over sources
    ax.scatter(strength, I_o, s=12)
    ax.set(xlabel="incoming weight (row sum of W)", ylabel="fitted I_o",
           title="regional inputs")
    for ax, matrix, title in [(axes[1, 0], np.asarray(data.fc), "empirical FC"),
                              (axes[1, 1], simulated, "simulated FC (fitted)")]:
        # Each on its own colour scale (the loss 1 - r ignores the overall level), the
        # diagonal (always 1) masked.
        shown = np.where(np.eye(n_nodes, dtype=bool), np.nan, matrix)
        im = ax.imshow(shown, vmin=np.nanpercentile(shown, 2),
                       vmax=np.nanpercentile(shown, 98), cmap="viridis")
        ax.set(title=title, xlabel="region", ylabel="region")
        fig.colorbar(im, ax=ax, fraction=0.046)
    ax = axes[1, 2]
    ax.scatter(np.asarray(data.fc)[iu], simulated[iu], s=2, alpha=0.4)
    ax.set(xlabel="empirical FC", ylabel="simulated FC",
           title=f"r = {np.corrcoef(np.asarray(data.fc)[iu], simulated[iu])[0, 1]:.3f}")
    fig.tight_layout()
    fig.savefig(out / "fitting_rww.png", dpi=120)
    plt.close(fig)
    print("figure saved to", out / "fitting_rww.png")
