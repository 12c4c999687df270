# %% [markdown]
# # From a homogeneous to a heterogeneous model: regional input gains
#
# A homogeneous whole-brain model (one set of parameters for every region, coupled through
# the structural connectome) reproduces the functional connectivity (FC) of resting-state
# BOLD only so far: on the embedded `hcp` data, fitted to subjects 1-4, it reaches an FC r of
# about 0.62 on subjects 5-7 against a noise ceiling of 0.90. What it misses is regional: in
# the model a region's FC follows its structural in-strength much more closely than in
# the data. This tutorial lets every region's input have its own gain, 80 parameters
# fitted by gradient descent through the whole simulation, and scores the result on runs
# the fit never saw, with noise it never saw.
#
# The model is the two-population Wong-Wang model with feedback inhibition control
# (Deco et al. 2014): every region's inhibitory weight is set so that its excitatory
# population fires at 3 Hz. That keeps each region balanced whatever its input gain, so
# the fit changes how regions interact without pushing any of them out of its regime.
#
# Run it with `python tutorials/heterogeneity.py` (`--quick` for a short run that shows
# the mechanics only: its simulations are far too short for credible numbers). The same
# fits from the command line: by simulation, `netdyn fit --fit G,sigma,input-gain --steps
# 20 --lr 0.04` (sigma asks for the simulation); on the analytic FC, as in the last part,
# `netdyn fit --fit G,input-gain --steps 100 --lr 0.1`.

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
plt = import_module("matplotlib.pyplot") if find_spec("matplotlib") else None
out = Path(os.environ.get("NETDYN_TUTORIAL_OUT", Path(tempfile.gettempdir()) / "netdyn-tutorials"))

# %% [markdown]
# ## Data, split and noise ceiling
#
# The FC of subjects 1-4 is the target; subjects 5-7 are kept for the score. The FC r
# between the two groups (`nd.noise_ceiling`) is the best any model fitted to subjects
# 1-4 can expect on subjects 5-7.

# %%
data = nd.datasets.load("hcp")
weights = np.asarray(data.weights) / np.max(data.weights)
train_runs, test_runs = data.bold[:4], data.bold[4:]
target = nd.runs_fc(train_runs)
ceiling = nd.noise_ceiling(train_runs, test_runs)
print(f"80 regions; noise ceiling (subjects 1-4 against 5-7): FC r {ceiling:.3f}")

# %% [markdown]
# ## The balanced model
#
# `nd.presets.rww_ei_fic` builds `nd.ReducedWongWangExcInh` nodes (TVB's equations and
# defaults) whose `J_i` is `nd.FeedbackInhibition()`: a parameterisation that
# `nd.simulate` turns into one inhibitory weight per region before every run, solved
# from the network's current parameters (so gradients pass through it).
# `nd.resolve_parameters` shows what a simulation will use: regions with more input
# need more inhibition.

# %%
net = nd.presets.rww_ei_fic(weights, data.lengths, G=0.49, sigma=0.001)
J_i = np.asarray(nd.resolve_parameters(net).dynamics.J_i)
strength = weights.sum(axis=1)
print(f"J_i from {J_i.min():.2f} to {J_i.max():.2f} nA; correlation with in-strength "
      f"{np.corrcoef(J_i, strength)[0, 1]:.2f}")

# %% [markdown]
# ## The loss, and the homogeneous model's score
#
# `nd.FcLoss` simulates a burn-in (not compared) and then several noise realisations,
# and compares the mean of their FCs with the target: one minus the FC correlation plus
# a smooth term for the FC's level. Its gradient is exact: it runs through the burn-in
# too. `G = 0.49` is where this model's mean FC meets the data's (the
# `netdyn fit --model rww-ei-fic` scan finds it with `nd.level_search`).
#
# `score` simulates a model with a new noise key, four runs of 288 s (`--quick`: much
# shorter), and scores them against the test subjects (`nd.heldout_scores`, one noise
# set; `nd.score_runs` for each).

# %%
TR = data.tr
loss_fn = nd.FcLoss(
    target,
    nd.Heun(remat=nd.Uniform(720)),
    nd.Bold(period=TR, variables="S_e"),
    duration=TR * (10 if QUICK else 60),
    burn_in=TR * (10 if QUICK else 80),
    realisations=2 if QUICK else 4,
    metric="1-r+huber",
)
heldout_fn = loss_fn.replace(duration=TR * (20 if QUICK else 400), realisations=4)
key, new_key = jax.random.key(0), jax.random.key(1)


def heldout(model):
    """``model``'s held-out simulation (its FC ``.fc``), scored against the test subjects
    (``.sets[0]["test"]``)."""
    return nd.heldout_scores(heldout_fn, model, key=new_key, sets=1, test=test_runs,
                             train=train_runs)


def score(model):
    """The held-out scores this tutorial compares."""
    s = heldout(model).sets[0]["test"]
    return {k: s[k] for k in ("fc_r", "mean_fc", "fraction_of_ceiling")}


homogeneous = score(net)
print("homogeneous, test subjects:", {k: round(v, 3) for k, v in homogeneous.items()})

# %% [markdown]
# ## One gain per region
#
# `nd.InputScaling(weights, log_gain)` scales each region's input, $W_{ij} e^{g_i}$.
# The log-gains are `nd.RegionalDeviation(0, d)`: mean-free deviations, so the overall
# level stays with `G`, and `eqx.tree_at` puts the parameterisation in the place of the
# graph's weights. Before trusting a gradient, check it against central finite
# differences of the same loss along a random direction (`nd.check_gradient`).

# %%
gains = nd.InputScaling(weights, nd.RegionalDeviation(0.0, jnp.zeros(80)))
hetero = eqx.tree_at(lambda n: n.graph.weights, net, gains)
where = lambda n: (n.graph.weights.log_gain.deviations, n.coupling.G)  # noqa: E731
check = nd.check_gradient(loss_fn, hetero, where, key=key, step=1e-3)
print(f"gradient {check.gradient:.4g}, central differences {check.finite_difference_half:.4g}"
      f" ({'agree' if check.agree else 'DISAGREE'})")

# %% [markdown]
# Adam moves every parameter by about its learning rate per step. A region's gain moves
# only that region; `G` moves all of them at once, so it gets a tenth of the step
# (`optax.multi_transform`; the optimizer sees a list of the leaves `where` selects, in
# its order). One noise key for the whole fit makes the loss a smooth function of the
# parameters.

# %%
optimizer = optax.multi_transform({"gains": optax.adam(0.02), "G": optax.adam(0.002)},
                                  ["gains", "G"])
fitted, history = nd.fit(hetero, loss_fn, optimizer, where=where,
                         steps=3 if QUICK else 30, key=key, keep="best")
g = np.asarray(nd.resolve_parameters(fitted).graph.weights.sum(axis=1) / strength)
print(f"G {float(fitted.coupling.G):.4f}; input gains from {g.min():.2f} to {g.max():.2f}; "
      f"fit FC r {history.metrics['fc_r'][0]:.3f} -> {np.max(history.metrics['fc_r']):.3f}")

# %% [markdown]
# ## Held out: new noise, runs never seen
#
# The test that counts: the fitted model with new noise against subjects 5-7. A gain that
# holds there was not fitted to the noise of the fit or to subjects 1-4.

# %%
heterogeneous = score(fitted)
for name, s in (("homogeneous", homogeneous), ("input gains", heterogeneous)):
    print(f"{name:12s} test-run FC r {s['fc_r']:.3f} ({100 * s['fraction_of_ceiling']:.0f} % "
          f"of the ceiling), mean FC {s['mean_fc']:.3f}")

# %% [markdown]
# ## What the gains say
#
# The fitted log-gains against the regions' in-strength and the principal gradient of
# the training FC (`nd.maps`): a map that explains them is a hypothesis with a handful of
# parameters instead of 80. `nd.MapParameter(0.0, maps, relative=False)` in place of the
# deviations fits exactly that model (`--fit G,sigma,input-gain:maps` on the command
# line).

# %%
log_gain = np.log(g)
maps = {"in-strength": nd.maps.in_strength(weights), "FC gradient": nd.maps.fc_gradient(target)}
for name, m in maps.items():
    print(f"log-gain against {name}: r = {np.corrcoef(log_gain, m)[0, 1]:+.2f}")

if plt is not None:
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    axes[0].plot(history.metrics["fc_r"], "o-")
    axes[0].set(xlabel="step", ylabel="FC r (fit's noise)", title="fit")
    axes[1].scatter(maps["in-strength"], log_gain, s=12)
    axes[1].set(xlabel="in-strength (z)", ylabel="fitted log-gain", title="gains")
    iu = np.triu_indices(80, 1)
    test_fc = np.asarray(nd.runs_fc(test_runs))[iu]
    for model, label in ((net, "homogeneous"), (fitted, "input gains")):
        fc = heldout(model).fc[iu]
        axes[2].scatter(test_fc, fc, s=2, alpha=0.4, label=label)
    axes[2].set(xlabel="FC, test subjects 5-7", ylabel="FC, held-out simulation", title="held out")
    axes[2].legend(markerscale=5)
    fig.tight_layout()
    fig.savefig(out / "heterogeneity.png", dpi=110)
    print(f"saved {out / 'heterogeneity.png'}")

# %% [markdown]
# ## The same fit in seconds: the analytic FC
#
# Near its stable fixed point, with small noise, the network is a linear stochastic
# system, and its stationary covariance solves a Lyapunov equation: `nd.linear_fc` gives
# the FC of the network linearised there (BOLD through the linearised Balloon model,
# delays ignored) with no simulation, and `nd.LinearFcLoss` compares it with the target
# as `nd.FcLoss` does. The loss is deterministic (no noise, no burn-in: `key` is
# ignored), so its gradient is exact and a fit can take many short steps. Beyond a
# spectral abscissa of -5e-4 per ms (the slowest mode decaying within 2 s) a smooth
# barrier keeps the fit where the linear picture holds (the metrics' `abscissa` and
# `barrier`).
#
# `nd.backtrack` takes back a step that raised the loss and retries it shorter.

# %%
linear_loss = nd.LinearFcLoss(target, nd.Bold(period=TR, variables="S_e"),
                              metric="1-r+huber")
optimizer = nd.backtrack(optax.multi_transform(
    {"gains": optax.adam(0.1), "G": optax.adam(0.01)}, ["gains", "G"]))
linear_fitted, linear_history = nd.fit(hetero, linear_loss, optimizer, where=where,
                                       steps=15 if QUICK else 150, key=key, keep="best")
best = linear_history.best_step()
print(f"{len(linear_history.loss)} steps in {linear_history.wall_time.sum():.0f} s "
      f"(first, compiling: {linear_history.wall_time[0]:.0f} s); analytic loss "
      f"{linear_history.loss[0]:.3f} -> {linear_history.loss[best]:.3f}, fit FC r "
      f"{linear_history.metrics['fc_r'][0]:.3f} -> {linear_history.metrics['fc_r'][best]:.3f}")

# %% [markdown]
# ## Held out, simulated
#
# The analytic FC is what the fit believes; the model that counts is the nonlinear,
# delayed one with noise. Simulate the analytically fitted model as before (new noise,
# subjects 5-7), and compare with the analytic FC's own score on the test subjects. The linear
# picture is exact only for vanishing noise: at this model's noise level the simulated
# FC is higher than the analytic one (by about 0.06 in mean FC at `sigma=0.001` on the
# full-length runs), while its pattern follows it closely. Look at the level and the
# saturation (`nd.score_runs`'s `saturation`) before trusting an r.
#
# The analytic FC also assumes that the simulation stays near the fixed point it
# linearises at (`linear.fixed_point`; with FIC, the balanced state: S_e = 0.161 in every
# region). Where the model is multistable, noise can carry the simulation to another
# state (some regions firing far above 3 Hz), and the simulated FC then has little to do
# with the analytic one. `benchmarks/heterogeneity_linear.md` shows such end
# points: an analytic loss as low as the others, a simulated FC that collapses.

# %%
iu = np.triu_indices(80, 1)
test_fc = np.asarray(nd.runs_fc(test_runs))
linear = eqx.filter_jit(nd.linear_fc)(nd.resolve_parameters(linear_fitted),
                                     linear_loss.monitor)
believed = np.corrcoef(np.asarray(linear.fc)[iu], test_fc[iu])[0, 1]
simulated = heldout(linear_fitted).sets[0]["test"]
S_e = np.asarray(linear.fixed_point)[0]
print(f"fixed point: S_e from {S_e.min():.3f} to {S_e.max():.3f}; slowest mode decays in "
      f"{-1 / float(linear.abscissa) / 1000:.1f} s")
print(f"analytic FC against the test subjects: r {believed:.3f}, mean FC "
      f"{np.asarray(linear.fc)[iu].mean():.3f}")
print(f"simulated against the test subjects:   r {simulated['fc_r']:.3f} "
      f"({100 * simulated['fraction_of_ceiling']:.0f} % of the ceiling), mean FC "
      f"{simulated['mean_fc']:.3f} (test subjects' {simulated['empirical_mean_fc']:.3f}), "
      f"saturation {simulated['saturation']:.2f}")
