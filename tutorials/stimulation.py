# %% [markdown]
# # Stimulating a network
#
# External input, as in TMS, tDCS or a sensory stimulus, is a *stimulus*: an
# `equinox.Module` that adds $a\, s(t)\, p_i$ to the time derivative of one state variable,
# with $a$ an amplitude, $s(t)$ a temporal profile (a pulse train, or any sampled time
# series) and $p$ a pattern over regions. This tutorial stimulates the primary visual
# cortex of a Jansen-Rit network on the embedded connectome with a train of pulses,
# follows the response as it travels along the tracts (each region answers after its
# conduction delay), then differentiates the response with respect to the stimulus'
# amplitude and onset, and recovers both from the response of the *unstimulated*
# regions with `nd.fit`.
#
# Run it with `python tutorials/stimulation.py` (`--quick` for a shorter run: a coarser
# time step and fewer fitting steps).

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
DT = 0.2 if QUICK else 0.05  # ms
REST = 500.0  # ms to settle at rest before any stimulus
T1 = REST + 400.0  # ms
FIT_STEPS = 12 if QUICK else 40
# Figures need matplotlib (`pip install -e ".[plot]"`); they go to $NETDYN_TUTORIAL_OUT
# (by default a temporary folder).
plt = import_module("matplotlib.pyplot") if find_spec("matplotlib") else None
out = Path(os.environ.get("NETDYN_TUTORIAL_OUT", Path(tempfile.gettempdir()) / "netdyn-tutorials"))

# %% [markdown]
# ## A network at rest
#
# The `hcp` connectome (80 regions, weights `W[target, source]`, tract lengths at
# 4 mm/ms), with a Jansen-Rit column in every region, coupled through the sigmoid of the
# afferents' pyramidal potential $y_1 - y_2$. The mean input `mu = 0.08` /ms is below
# the columns' oscillation threshold (about 0.09 /ms in Jansen & Rit's model), so the
# network rests at a stable fixed point, and any activity is evoked. A first run
# settles it there; `sol.final` continues it later, with time counted from `t0 = 0`.

# %%
data = nd.datasets.load("hcp")
labels = list(data.labels)
n = data.n_nodes
graph = nd.DelayGraph.from_lengths(data.weights, data.lengths, speed=4.0)
net = nd.Network(
    dynamics=nd.JansenRit(mu=0.08),
    coupling=nd.DelayedSigmoidalJansenRit(G=10.0),
    graph=graph,
)
monitors = {"v": nd.TemporalAverage(period=1.0, variables=("y1", "y2"))}  # 1 kHz
rest = nd.simulate(net, nd.Heun(), t0=0.0, t1=REST, dt=DT, monitors=monitors)
v_rest = rest["v"][:, 0] - rest["v"][:, 1]
drift = float(jnp.abs(v_rest[-1] - v_rest[-11]).max())
print(f"{n} regions, delays up to {graph.max_delay:.1f} ms; at rest y1 - y2 = "
      f"{float(v_rest[-1].mean()):.3f} mV (drifting {drift:.0e} mV over the last 10 ms)")

# %% [markdown]
# ## A pulse train on the visual cortex
#
# `nd.PulseTrain` adds `amplitude` to the derivative of `variable` during pulses of
# `width` ms every `period` ms from `onset`. Here three 5 ms pulses at 10 Hz drive the
# excitatory interneurons' state `y4` ($\dot y_1$) of both calcarine cortices (V1), the
# regions named in `regions`: in Jansen-Rit's equation for $\dot y_4 = A a(\mu + \dots)
# - \dots$ an input $u$ on `y4` is a burst of extra afferent rate $u / (A a)$ /ms. The
# edges rise in `rise_time = 1` ms (logistic, 10 % to 90 %), so the response is
# differentiable in the timing too; without `rise_time` the edges are sharp.
#
# Times are global: the onset 550 ms lies in the continuation that starts at
# `t0 = REST = 500` ms. A network holds its stimulus as a field (`stimulus=`), here added
# to the resting network with `eqx.tree_at`. The same network with amplitude 0 is run
# alongside from the same state (the same compiled function, as only a leaf differs),
# and the *evoked* response is the difference of the two.

# %%
v1 = (labels.index("Calcarine_L"), labels.index("Calcarine_R"))
pulses = nd.PulseTrain("y4", amplitude=0.6, onset=550.0, width=5.0, period=100.0,
                       n_pulses=3, rise_time=1.0, regions=v1)
stimulated = eqx.tree_at(lambda m: m.stimulus, net, pulses, is_leaf=lambda x: x is None)


@eqx.filter_jit
def membrane(model, t1=T1):
    """y1 - y2 (mV) of every region, 1 ms averages, from the resting state to ``t1``."""
    sol = nd.simulate(model, nd.Heun(), t0=REST, t1=t1, dt=DT, monitors=monitors,
                      history=rest.final)
    return sol["v"][:, 0] - sol["v"][:, 1]


silent = eqx.tree_at(lambda m: m.stimulus.amplitude, stimulated, 0.0)
ts = REST + 1.0 + np.arange(int(T1 - REST))  # the end of each 1 ms average
evoked = np.asarray(membrane(stimulated) - membrane(silent))  # [time, regions]
peak = np.abs(evoked).max(axis=0)
others = np.array([i for i in range(n) if i not in v1])
print("peak evoked |y1 - y2| (mV): stimulated "
      + ", ".join(f"{labels[i]} {peak[i]:.1f}" for i in v1))
print("strongest responses elsewhere: "
      + ", ".join(f"{labels[i]} {peak[i]:.2f}" for i in others[np.argsort(-peak[others])][:5]))
print(f"median over the {len(others)} unstimulated regions: {np.median(peak[others]):.3f} mV")

# %% [markdown]
# ## The response travels along the tracts
#
# When does each region start to respond? The runs are deterministic, so a region's
# evoked response is exactly zero until the stimulus' effect reaches it: take the first
# time its evoked response exceeds 0.1 µV (a detection threshold; every region peaks
# far above it) and compare it with the shortest conduction delay from V1 through the
# connectome (a shortest path over the delays of existing connections: a region may
# hear V1 first through a neighbour). No region can respond before that delay; how much
# later it does depends on how strongly it is connected to V1, as a weak input takes
# longer to build up a detectable potential.

# %%
delay = np.where(data.weights > 0, np.asarray(graph.delays), np.inf)  # [target, source]
np.fill_diagonal(delay, 0.0)
for k in range(n):  # Floyd-Warshall: shortest path delays, delay[i, j] from j to i
    delay = np.minimum(delay, delay[:, [k]] + delay[[k], :])
path_delay = delay[:, list(v1)].min(axis=1)

THRESHOLD = 1e-4  # mV
first = np.argmax(np.abs(evoked) > THRESHOLD, axis=0)
latency = ts[first] - pulses.onset  # ms, at the 1 ms resolution of the monitor
lag = latency - path_delay
strength = data.weights[:, list(v1)].sum(axis=1)  # input weight from V1, W[target, source]
strong = others[np.argsort(-strength[others])][:10]
print(f"latency - path delay over the {len(others)} unstimulated regions: "
      f"{lag[others].min():.1f} to {lag[others].max():.1f} ms")
print(f"the 10 regions most strongly connected to V1: {lag[strong].min():.1f} to "
      f"{lag[strong].max():.1f} ms")
r = np.corrcoef(np.log(strength[others]), lag[others])[0, 1]
print(f"correlation of that lag with log(input weight from V1): {r:.2f}")

# %% [markdown]
# ## Figure
#
# Top: the stimulated regions and the stimulus; the strongest responses elsewhere.
# Bottom: every region's evoked response around the first pulse, sorted by path delay
# from V1, on a log scale from the detection threshold (the wave of activity follows
# the delays), and the onset latencies.

# %%
if plt is not None:
    out.mkdir(parents=True, exist_ok=True)
    fine = np.arange(REST, T1, 0.1)
    drive = pulses.amplitude * np.asarray(jax.vmap(pulses.profile)(jnp.asarray(fine)))
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    ax = axes[0, 0]
    for i in v1:
        ax.plot(ts, evoked[:, i], label=labels[i])
    ax.set(xlabel="time (ms)", ylabel="evoked y1 - y2 (mV)", title="stimulated regions")
    ax.legend(loc="upper right", fontsize=8)
    twin = ax.twinx()
    twin.fill_between(fine, drive, color="0.85", zorder=-1)
    twin.set(ylabel="stimulus on y4 (mV/ms$^2$)", ylim=(0, 4 * pulses.amplitude))
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    ax = axes[0, 1]
    shown = others[np.argsort(-peak[others])][:5]
    for i in shown:
        ax.plot(ts, evoked[:, i], lw=1, label=f"{labels[i]} ({path_delay[i]:.0f} ms)")
    ax.set(xlabel="time (ms)", ylabel="evoked y1 - y2 (mV)",
           title="strongest unstimulated responses (path delay from V1)")
    ax.legend(fontsize=8)
    ax = axes[1, 0]
    order = np.argsort(path_delay)
    window = (ts > pulses.onset - 10.0) & (ts <= pulses.onset + 60.0)
    image = np.log10(np.maximum(np.abs(evoked[window][:, order]), 1e-12))
    im = ax.imshow(image.T, aspect="auto", cmap="magma", interpolation="nearest",
                   vmin=np.log10(THRESHOLD), vmax=1.0,
                   extent=(-10.0, 60.0, n - 0.5, -0.5))
    ax.plot(path_delay[order], np.arange(n), "c.", ms=3, label="path delay from V1")
    ax.set(xlabel="time after the first pulse onset (ms)",
           ylabel="region (sorted by path delay)",
           title="log10 |evoked y1 - y2| (mV)")
    ax.legend(loc="lower right", fontsize=8)
    fig.colorbar(im, ax=ax)
    ax = axes[1, 1]
    sc = ax.scatter(path_delay[others], latency[others], c=np.log10(strength[others]),
                    s=14, cmap="viridis")
    x = np.linspace(0.0, path_delay[others].max(), 2)
    ax.plot(x, x, "k--", lw=1, label="latency = path delay")
    ax.set(xlabel="shortest path delay from V1 (ms)",
           ylabel="response onset latency (ms, > 0.1 µV)",
           title="onset latency of unstimulated regions")
    ax.legend(fontsize=8)
    fig.colorbar(sc, ax=ax, label="log10 input weight from V1")
    fig.tight_layout()
    fig.savefig(out / "stimulation.png", dpi=110)
    plt.close(fig)
    print("figure saved to", out / "stimulation.png")

# %% [markdown]
# ## Gradients through the stimulus
#
# The response is a differentiable function of the stimulus' fields: `amplitude` (and
# the `weights` of the spatial pattern) always; `onset`, `width` and `period` with
# smooth edges (with sharp ones, their derivatives are zero). A loss on the evoked
# responses of the **unstimulated** regions over the 100 ms after the first pulse,
# against a recording made with a stimulus of unknown amplitude and onset (here
# simulated with amplitude 0.5 and onset 552 ms), has a gradient in both; a central
# finite difference checks it. One compiled `value_and_grad` serves for both.

# %%
T_FIT = 650.0  # ms: up to the second pulse
recording = eqx.tree_at(lambda m: (m.stimulus.amplitude, m.stimulus.onset), stimulated,
                        (0.5, 552.0))
baseline = membrane(silent, T_FIT)[:, others]
observed = membrane(recording, T_FIT)[:, others] - baseline


def loss_fn(model, key=None):
    """Mean squared difference of the unstimulated regions' evoked responses (mV^2)."""
    return jnp.mean((membrane(model, T_FIT)[:, others] - baseline - observed) ** 2)


where = lambda m: (m.stimulus.amplitude, m.stimulus.onset)  # noqa: E731
value_and_grad = eqx.filter_jit(jax.value_and_grad(
    lambda p: loss_fn(eqx.tree_at(where, stimulated, p))))
params = (jnp.asarray(0.6), jnp.asarray(550.0))
loss, (d_amplitude, d_onset) = value_and_grad(params)
h = 1e-5
fd_amplitude = (value_and_grad((params[0] + h, params[1]))[0]
                - value_and_grad((params[0] - h, params[1]))[0]) / (2 * h)
fd_onset = (value_and_grad((params[0], params[1] + h))[0]
            - value_and_grad((params[0], params[1] - h))[0]) / (2 * h)
print(f"loss {float(loss):.3e} mV^2")
print(f"d loss / d amplitude = {float(d_amplitude):+.6e} (finite difference "
      f"{float(fd_amplitude):+.6e})")
print(f"d loss / d onset     = {float(d_onset):+.6e} /ms (finite difference "
      f"{float(fd_onset):+.6e})")

# %% [markdown]
# ## Recovering the stimulus
#
# `nd.fit` minimises that loss over the two fields. Their scales differ (an amplitude
# of order 1, an onset in ms), so each gets its own Adam step size through
# `optax.multi_transform`, decaying over the fit (a cosine schedule) so that the last
# steps refine; `keep="best"` returns the best parameters met. The response
# of the distant regions saturates with the amplitude (the stimulated columns fire a
# full Jansen-Rit spike above a threshold), so the amplitude is the less well
# determined of the two.

# %%
optimizer = optax.multi_transform(
    {"amplitude": optax.adam(optax.cosine_decay_schedule(0.03, FIT_STEPS)),
     "onset": optax.adam(optax.cosine_decay_schedule(0.5, FIT_STEPS))},
    lambda p: type(p)(["amplitude", "onset"]),
)
fitted, history = nd.fit(stimulated, loss_fn, optimizer, where=where, steps=FIT_STEPS,
                         keep="best")
best = int(np.argmin(history.loss))
print(f"{FIT_STEPS} steps: loss {history.loss[0]:.2e} -> {history.loss[best]:.2e} mV^2 "
      f"(step {best})")
print(f"amplitude {float(fitted.stimulus.amplitude):.3f} (true 0.5), onset "
      f"{float(fitted.stimulus.onset):.2f} ms (true 552)")

# %% [markdown]
# ## What next
#
# - `nd.SampledStimulus(variable, samples, sampling_period)` drives a variable with any
#   recorded or designed waveform, `[time]` for every region or `[time, nodes]` one per
#   region, linearly interpolated at the solver stages.
# - `weights` (a `[nodes]` array, or one weight per listed region) shapes the input over
#   space, e.g. an electric-field distribution from a TMS or tDCS model; it is a leaf,
#   so `jax.grad` and `nd.fit` reach it too.
# - A tuple of stimuli adds up: `stimulus=(pulses, nd.SampledStimulus(...))`.
# - **References**: Jansen & Rit (1995), *Electroencephalogram and visual evoked
#   potential generation in a mathematical model of coupled cortical columns*, Biol.
#   Cybern. 73:357-366; Sanz Leon et al. (2013), *The Virtual Brain: a simulator of
#   primate brain network dynamics*, Front. Neuroinform. 7:10 (stimuli as input to the
#   state variables' derivatives).
