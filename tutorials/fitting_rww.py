# %% [markdown]
# # Fitting a Reduced Wong-Wang network to empirical FC
#
# A whole-brain model is usually tuned by a grid search over its global coupling `G`.
# With a differentiable simulator we can instead descend the gradient of the loss, which
# also works for hundreds of parameters: here first `G` with the noise amplitude, then
# `G` together with one external input `I_o` per region (81 parameters). The target is
# the empirical functional connectivity (FC) of subjects 1-4 of the embedded `hcp` BOLD;
# every fit is checked on simulations with noise it never saw, and scored on subjects 5-7,
# which it never saw either, against the noise ceiling of that split.
#
# Run it with `python tutorials/fitting_rww.py` (`--quick` for a shorter run that shows
# the mechanics only: its simulations are too short for credible numbers). The fit of
# `G` and `sigma` is available from the command line as `netdyn fit --model rww`.

# %%
import os
import sys
import tempfile
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)  # before importing netdyn, before any array

import netdyn as nd  # noqa: E402

QUICK = "--quick" in sys.argv  # also False inside a notebook
# Figures need matplotlib (`pip install -e ".[plot]"`); they go to $NETDYN_TUTORIAL_OUT
# (by default a temporary folder).
plt = import_module("matplotlib.pyplot") if find_spec("matplotlib") else None
out = Path(os.environ.get("NETDYN_TUTORIAL_OUT", Path(tempfile.gettempdir()) / "netdyn-tutorials"))

# %% [markdown]
# ## Data and model
#
# The `hcp` dataset holds a group connectome of 80 AAL2 regions (weights
# `W[target, source]`, tract lengths in mm), and one run of resting-state BOLD from each
# of 7 subjects, sampled every `TR = 720` ms (`data.bold`, `[runs, time, regions]`). We
# fit the FC of subjects 1-4 (`nd.runs_fc`: the mean of each run's FC) and keep subjects
# 5-7 to score the fit. The FCs of the two groups correlate at r = 0.899
# (`nd.noise_ceiling`): that is the best any model fitted to subjects 1-4 can expect on
# subjects 5-7, and their levels differ too.
# The model: Reduced Wong-Wang nodes (Deco et al. 2013), delays from the tract lengths at
# 4 mm/ms, delayed linear coupling, additive noise on `S`, and Balloon-Windkessel BOLD
# computed inside the time loop.
#
# Parameters that will be fitted are given as JAX arrays from the start, with the shape
# they will have: `I_o` is a `[nodes]` vector (equal values for now). A model whose
# leaves keep their shapes compiles once for all the evaluations below.

# %%
data = nd.datasets.load("hcp")
n_nodes = data.weights.shape[0]
net = nd.Network(
    dynamics=nd.ReducedWongWang(w=0.5, I_o=jnp.full(n_nodes, 0.32)),
    coupling=nd.DelayedLinear(G=jnp.asarray(0.15)),
    graph=nd.DelayGraph.from_lengths(data.weights, data.lengths, speed=4.0),
    noise=nd.AdditiveNoise(sigma=jnp.asarray(0.005)),
)
train_runs, test_runs = data.bold[:4], data.bold[4:]
target = nd.runs_fc(train_runs)
ceiling = nd.noise_ceiling(train_runs, test_runs)
levels = [np.mean(nd.upper_triangle(f, k=1)) for f in (target, nd.runs_fc(test_runs))]
print(f"noise ceiling, subjects 1-4 against 5-7: FC r {ceiling:.3f}; mean FC {levels[0]:.3f} "
      f"(subjects 1-4), {levels[1]:.3f} (subjects 5-7)")
TR = data.tr
BURN_IN = TR * (10 if QUICK else 80)  # 7.2 s or 57.6 s, not compared
DURATION = TR * (20 if QUICK else 60)  # BOLD per realisation: 14.4 s or 43.2 s
REALISATIONS = 2 if QUICK else 4
print(f"{n_nodes} regions; per evaluation {REALISATIONS} x {DURATION / 1000:.1f} s of BOLD "
      f"({REALISATIONS * round(DURATION / TR)} samples) after a {BURN_IN / 1000:.1f} s burn-in")

# %% [markdown]
# ## The loss
#
# `nd.FcLoss` simulates the network with a solver and one monitor, takes the FC of the
# monitored signal and compares it with the target. Three choices make the comparison
# credible:
#
# - **A burn-in.** All regions start from the same state; the shared relaxation from it
#   (tens of seconds with the haemodynamics) correlates every region with every other, and
#   a fit that sees it learns the transient. `burn_in=` simulates that part without
#   comparing it, and the measured run continues from its final state, exactly as one
#   long simulation would. The gradient runs through the burn-in too: it is exact.
#   (`burn_in_gradient=False` holds the burn-in's final state fixed instead: cheaper, but
#   near the critical coupling, and for regional parameters, it can point the wrong way.)
# - **Several realisations.** The FC of a few minutes of BOLD is a noisy estimate.
#   `realisations=` runs independent noise realisations in parallel (`vmap`) and compares
#   the mean of their FCs.
# - **Pattern and level.** `metric="1-r+huber"` is one minus the Pearson correlation of
#   the upper triangles plus the difference of their means through Huber's function
#   (the absolute difference far from the match, smooth within 0.05 of it, where a
#   fitted model sits): `1 - r` alone would accept an FC whose level is far too high
#   (saturated) or too low.
#
# It also reports `fc_r`, `mean_fc`, the `rmse` and the `saturation` (fraction of pairs
# above 0.9). The solver's remat strategy bounds the gradient's memory (see the
# *Gradient checkpointing* tutorial). The key fixes the noise realisations: with the same
# key at every step (the default of `nd.fit`), the loss is a smooth function of the
# parameters ("common random numbers").

# %%
loss_fn = nd.FcLoss(
    target,
    nd.Heun(remat=nd.Uniform(round(TR))),
    nd.Bold(period=TR, variables="S"),
    duration=DURATION,
    burn_in=BURN_IN,
    realisations=REALISATIONS,
    metric="1-r+huber",
)
key = jax.random.key(0)
evaluate = eqx.filter_jit(loss_fn)
loss0, metrics0 = evaluate(net, key)
print(f"initial: loss {float(loss0):.4f}, FC r {float(metrics0['fc_r']):+.4f}, "
      f"mean FC {float(metrics0['mean_fc']):.3f} (empirical "
      f"{float(np.mean(nd.upper_triangle(target, k=1))):.3f})")

# %% [markdown]
# ## Finding the band of good G
#
# The FC of this model matches the data only in a narrow band of `G` (about 0.002 wide)
# at the edge of its bifurcation, and the loss is nearly flat away from it, where a
# gradient says little. A coarse grid finds that band only by luck: scale the
# connectome's weights by 6 % and a grid that hit it misses it. `nd.level_search` follows
# the simulated mean FC instead, which jumps up where the low-activity state loses
# stability and falls back above it: from a coarse scan it searches for that peak, then
# bisects the `G` where the mean FC falls through the data's. `nd.scan_start` runs it on
# a loss and starts the fit at the lowest loss it saw (as `netdyn fit` does).

# %%
found = nd.scan_start(loss_fn, net, lambda n: n.coupling.G,
                      np.linspace(0.05, 0.45, 5 if QUICK else 17), key=key,
                      iterations=4 if QUICK else 8)
search = found.search  # every G evaluated, the loss and mean FC there, and the stage
G_grid, landscape_loss = search.values, search.results["loss"]
for stage in ("scan", "peak", "bisect"):
    picked = np.asarray(search.stage) == stage
    print(f"  {stage}: {picked.sum()} values of G, mean FC up to "
          f"{search.results['mean_fc'][picked].max(initial=-1):.3f}")
print(f"  the data's mean FC {found.level:.3f} is met in G {found.bracket}")
start = eqx.tree_at(lambda n: n.coupling.G, net, jnp.asarray(found.start))

# %% [markdown]
# ## Step 1: coupling and noise
#
# `nd.fit(model, loss_fn, optimizer, where=..., steps=...)` runs an Optax loop: each step
# evaluates the loss and its gradient with respect to the leaves selected by `where`, in
# one compiled function, and applies the optimizer's update. `bounds=nd.Positive()`
# optimizes each through a softplus, so they stay positive whatever the step size (the
# Adam learning rate applies to the unconstrained values). The history holds, per step,
# the loss, the metrics, the gradient norm, the parameters and the wall time;
# `keep="best"` returns the parameters of the step with the lowest loss.
#
# Below the band of good `G` the loss is almost flat, and a momentum method that steps
# over the band's edge lands where the gradient says nothing. `nd.backtrack(optimizer)`
# guards against it: a step that raises the loss is taken back, and the optimizer
# restarts from the best point with half the step. With a fixed noise key the loss is a
# deterministic function of the parameters, so comparing losses across steps is fair.

# %%
fitted_G, history_G = nd.fit(
    start, loss_fn, nd.backtrack(optax.adam(0.03)),
    where=lambda n: (n.coupling.G, n.noise.sigma),
    bounds=nd.Positive(),
    steps=3 if QUICK else 15,
    key=key,
    progress=True,
    keep="best",
)
print(f"G {float(start.coupling.G):.3f} -> {float(fitted_G.coupling.G):.4f}, sigma "
      f"{float(start.noise.sigma):.4f} -> {float(fitted_G.noise.sigma):.4f}; best FC r "
      f"{np.nanmax(history_G.metrics['fc_r']):+.3f}")
print(f"{len(history_G)} steps, {history_G.wall_time[1:].mean():.2f} s per step after the "
      f"first ({history_G.wall_time[0]:.1f} s, with compilation)")

# %% [markdown]
# ## Step 2: one input per region
#
# Starting from the fitted model, fit `G` and the regional input `I_o` together: `where`
# returns a tuple, and `bounds` gives one transform per selected leaf. `I_o` is kept in
# `(0.2, 0.45)` by a scaled sigmoid (`nd.Interval`), a range where the Reduced Wong-Wang
# node stays in its low-activity regime. Each step still costs one forward and one
# backward simulation: 81 parameters cost as much as one. With 81 parameters, the
# held-out check below matters most.
#
# Expect little from this fit as written (the full run moved each input by under 2e-6):
# Adam's first step moves all 80 inputs by the same amount in the same direction, their
# mean shifts the bifurcation as much as `G` does, so the step lands below the band and
# is taken back, again and again at half the length. Regional parameters want their mean
# held fixed (fit the deviations from it), or a far smaller step: the tutorial *Regional
# heterogeneity* does that, with a model that keeps every region balanced, and gains
# about 0.1 in test-run FC r.

# %%
fitted, history = nd.fit(
    fitted_G, loss_fn, nd.backtrack(optax.adam(0.02)),
    where=lambda n: (n.coupling.G, n.dynamics.I_o),
    bounds=(nd.Positive(), nd.Interval(0.2, 0.45)),
    steps=3 if QUICK else 15,
    key=key,
    progress=True,
    keep="best",
)
I_o = np.asarray(fitted.dynamics.I_o)
print(f"G = {float(fitted.coupling.G):.4f}; I_o from {I_o.min():.3f} to {I_o.max():.3f}")

# %% [markdown]
# ## Held-out validation
#
# A fit is a result only if it holds on data the fit did not see. Each model is
# simulated again with a new noise key and four times more BOLD per realisation
# (`loss_fn.replace(...)`), and scored on the FC pattern (r), its level (mean FC against
# the empirical one) and saturation (pairs above 0.9): against subjects 1-4, which it was
# fitted to, and against subjects 5-7, which it never saw, with the fraction of the noise
# ceiling reached (`nd.heldout_scores`: per noise set, the loss's own metrics and
# `nd.score_runs` against the test and the training subjects; one set here, `netdyn fit`
# runs three and reports their spread). Numbers for the full run are in
# `benchmarks/fit_rww.md`; gains that vanish here were fitted to the noise or to
# subjects 1-4.

# %%
heldout_fn = loss_fn.replace(duration=4 * DURATION)
new_key = jax.random.key(1)
models = {"initial": net, "scan start": start, "fitted G, sigma": fitted_G,
          "fitted G + regional I_o": fitted}
print(f"{'model':26s} {'r (fit)':>8s} {'r (held-out)':>13s} {'mean FC':>8s} {'> 0.9':>6s} "
      f"{'r (subjects 5-7)':>16s} {'of ceiling':>11s}")
for name, model in models.items():
    fit_metrics = evaluate(model, key)[1]
    scores = nd.heldout_scores(heldout_fn, model, key=new_key, sets=1, test=test_runs,
                               train=train_runs)
    new, test = scores.sets[0]["fit"], scores.sets[0]["test"]
    print(f"{name:26s} {float(fit_metrics['fc_r']):+8.3f} {new['fc_r']:+13.3f} "
          f"{new['mean_fc']:8.3f} {100 * new['saturation']:5.1f}% "
          f"{test['fc_r']:+16.3f} {100 * test['fraction_of_ceiling']:10.0f}%")
    if name == "fitted G + regional I_o":
        simulated = scores.fc

# %% [markdown]
# ## Plots
#
# The loss along `G` with the steps of the first fit, the loss of both fits, the
# simulated and empirical FC, and the fitted regional inputs against each region's
# total incoming weight. The history can also be saved (`history.to_csv(...)`,
# `history.to_json(...)`); `nd.fit(..., checkpoint=nd.Checkpoint(path, resume=True))`
# makes a long fit resumable.

# %%
if plt is not None:
    out.mkdir(parents=True, exist_ok=True)
    iu = np.triu_indices(n_nodes, 1)
    fig, axes = plt.subplots(2, 3, figsize=(14, 8))
    ax = axes[0, 0]
    order = np.argsort(G_grid)
    ax.plot(G_grid[order], landscape_loss[order], "k.-", label="search for the start")
    ax.plot(history_G.params["coupling.G"], history_G.loss, "o-", color="C1", ms=4,
            label="fit steps")
    ax.set(xlabel="G", ylabel="1 - FC r + Huber(mean FC difference)", title="loss along G")
    ax.legend()
    ax = axes[0, 1]
    n1 = len(history_G)
    ax.plot(np.arange(n1), history_G.loss, label="step 1: G, sigma")
    ax.plot(n1 + np.arange(len(history)), history.loss, label="step 2: G + regional I_o")
    ax.set(xlabel="optimization step", ylabel="loss", title="loss")
    ax.legend()
    ax = axes[0, 2]
    strength = data.weights.sum(axis=1)  # incoming: W[target, source] summed over sources
    ax.scatter(strength, I_o, s=12)
    ax.set(xlabel="incoming weight (row sum of W)", ylabel="fitted I_o",
           title="regional inputs")
    for ax, matrix, title in [(axes[1, 0], target, "empirical FC, subjects 1-4"),
                              (axes[1, 1], simulated, "simulated FC (held-out noise)")]:
        # One colour scale for both (the level matters), the diagonal (always 1) masked.
        shown = np.where(np.eye(n_nodes, dtype=bool), np.nan, matrix)
        im = ax.imshow(shown, vmin=-0.2, vmax=1.0, cmap="viridis")
        ax.set(title=title, xlabel="region", ylabel="region")
        fig.colorbar(im, ax=ax, fraction=0.046)
    ax = axes[1, 2]
    test_fc = nd.runs_fc(test_runs)
    ax.scatter(test_fc[iu], simulated[iu], s=2, alpha=0.4)
    ax.set(xlabel="empirical FC, subjects 5-7 (never fitted)", ylabel="simulated FC (held-out)",
           title=f"r = {np.corrcoef(test_fc[iu], simulated[iu])[0, 1]:.3f}")
    fig.tight_layout()
    fig.savefig(out / "fitting_rww.png", dpi=120)
    plt.close(fig)
    print("figure saved to", out / "fitting_rww.png")
