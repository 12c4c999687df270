# %% [markdown]
# # Composing models
#
# A netdyn model is a tree of small, immutable `equinox.Module`s: a `Network` holds a
# dynamics, one or more couplings, a graph and a noise; a solver holds a remat strategy.
# This tutorial writes a new neural mass and a new coupling, edits a model with
# `eqx.tree_at`, swaps the gradient-checkpointing strategy (the forward result does not
# change), and runs a simulation in pieces that join exactly.
#
# Run it with `python tutorials/composing_models.py` (`--quick` for a shorter run).

# %%
import os
import sys
import tempfile
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import ClassVar, Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)  # before importing netdyn, before any array

import netdyn as nd  # noqa: E402

QUICK = "--quick" in sys.argv  # also False inside a notebook
T1 = 2_000.0 if QUICK else 20_000.0  # ms
# Figures need matplotlib (`pip install -e ".[plot]"`); they go to $NETDYN_TUTORIAL_OUT
# (by default a temporary folder).
plt = import_module("matplotlib.pyplot") if find_spec("matplotlib") else None
out = Path(os.environ.get("NETDYN_TUTORIAL_OUT", Path(tempfile.gettempdir()) / "netdyn-tutorials"))

# %% [markdown]
# ## A connectome
#
# The embedded `hcp` dataset: 80 cortical regions, weights `W[target, source]` and tract
# lengths in mm. A conduction speed of 4 mm/ms turns lengths into delays (ms).

# %%
data = nd.datasets.load("hcp")
graph = nd.DelayGraph.from_lengths(data.weights, data.lengths, speed=4.0)
print(f"{graph.n_nodes} regions, delays up to {graph.max_delay:.1f} ms")

# %% [markdown]
# ## Your own dynamics
#
# A dynamics subclasses `nd.AbstractDynamics` and declares: the names of its state
# variables (rows of the state `y`, shape `[states, nodes]`), optional bounds, how many
# coupling inputs it reads (rows of `c`, shape `[inputs, nodes]`), which variables it sends
# to other nodes, its vector field and a default initial state. Parameters are fields:
# scalars, or `[nodes]` arrays for regional heterogeneity.
#
# Here the FitzHugh-Nagumo oscillator, with time in ms through a rate `eps`:
#
# $$
# \dot v = \varepsilon\,(v - v^3/3 - w + I + c), \qquad
# \dot w = \varepsilon\,(v + a - b w) / \tau.
# $$


# %%
class FitzHughNagumo(nd.AbstractDynamics):
    """FitzHugh-Nagumo oscillator; ``eps`` (1/ms) sets the time scale."""

    a: float | jax.Array = 0.7
    b: float | jax.Array = 0.8
    tau: float | jax.Array = 12.5
    I: float | jax.Array = 0.5  # noqa: E741 - the model's own name
    eps: float | jax.Array = 0.1
    coupled_variables: tuple[str, ...] = eqx.field(default=("v",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("v", "w")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t, y, c):
        v, w = y
        dv = v - v**3 / 3.0 - w + self.I + c[0]
        dw = (v + self.a - self.b * w) / self.tau
        return self.eps * jnp.stack([dv, dw])

    def initial_state(self, n_nodes):
        return jnp.stack([jnp.full((n_nodes,), -1.0), jnp.full((n_nodes,), -0.5)])


# %% [markdown]
# ## Your own coupling
#
# Couplings use TVB's pre/post form, $c_i = \mathrm{post}\big(\sum_j W_{ij}\,
# \mathrm{pre}(x_i, x_j)\big)$, where `x_j` is the source's coupled variable (read through
# the delays for a delayed coupling) and `x_i` the target's. First a re-implementation of
# the library's `DelayedLinear`, to check the machinery; then a new one, a diffusive
# coupling saturated by `tanh`:
#
# $$ c_i = G \sum_j W_{ij} \tanh\big(x_j(t - d_{ij}) - x_i(t)\big). $$


# %%
class MyDelayedLinear(nd.AbstractDelayedCoupling):
    G: float | jax.Array = 1.0
    interpolation: Literal["nearest", "linear"] = eqx.field(default="nearest", static=True)

    def pre(self, x_i, x_j):
        return x_j

    def post(self, gx):
        return self.G * gx


class DelayedTanhDifference(nd.AbstractDelayedCoupling):
    G: float | jax.Array = 1.0
    interpolation: Literal["nearest", "linear"] = eqx.field(default="nearest", static=True)

    def pre(self, x_i, x_j):
        return jnp.tanh(x_j - x_i)

    def post(self, gx):
        return self.G * gx


# %% [markdown]
# A `Network` joins the parts; `nd.simulate` runs it. Monitors observe the run online:
# here a temporal average every 10 ms.

# %%
key = jax.random.key(0)
monitors = {"tavg": nd.TemporalAverage(period=10.0)}
net = nd.Network(
    dynamics=FitzHughNagumo(),
    coupling=MyDelayedLinear(G=0.05),
    graph=graph,
    noise=nd.AdditiveNoise(sigma=0.01, apply_to=("v",)),
)


def run(net, solver=nd.Heun(), t0=0.0, t1=T1, history=None):
    return nd.simulate(net, solver, t0=t0, t1=t1, dt=0.5, monitors=monitors, key=key,
                       history=history)


mine = run(net)
library = run(eqx.tree_at(lambda n: n.coupling, net, nd.DelayedLinear(G=0.05)))
print("samples:", mine["tavg"].shape, "(samples, states, nodes)")
print("MyDelayedLinear == nd.DelayedLinear:",
      bool(jnp.array_equal(mine["tavg"], library["tavg"])))

# %% [markdown]
# ## Editing with `eqx.tree_at`
#
# Modules are immutable: `eqx.tree_at(where, tree, value)` returns a modified copy. It
# reaches any leaf, so the same call sets a global parameter, makes a parameter regional,
# swaps a whole component, or adds a second coupling (their inputs add up).

# %%
stronger = eqx.tree_at(lambda n: n.coupling.G, net, 0.2)
regional = eqx.tree_at(lambda n: n.dynamics.I, net, jnp.linspace(0.3, 0.7, graph.n_nodes))
saturating = eqx.tree_at(lambda n: n.coupling, net, DelayedTanhDifference(G=0.1))
both = eqx.tree_at(lambda n: n.coupling, net, (net.coupling, DelayedTanhDifference(G=0.1)))
for name, model in [("G = 0.2", stronger), ("regional I", regional),
                    ("tanh coupling", saturating), ("two couplings", both)]:
    v = run(model)["tavg"][:, 0]
    print(f"{name:14s} mean v = {float(v.mean()):+.4f}, std over time = "
          f"{float(v.std(axis=0).mean()):.4f}")

# %% [markdown]
# ## Swapping the remat strategy
#
# The solver's `remat` field decides what reverse-mode differentiation keeps in memory
# (see the *Gradient checkpointing* tutorial). It never changes the forward result: noise
# is drawn per step from `fold_in(key, step)`, whatever the blocking of the time loop.

# %%
solver = nd.Heun()
reference = run(net, solver)["tavg"]
n_steps = round(T1 / 0.5)
for strategy in [nd.Uniform(100), nd.Uniform(777), nd.Nested(20, 400), nd.MultiLevel(4),
                 nd.Policy(("coupling",))]:
    swapped = eqx.tree_at(lambda s: s.remat, solver, strategy)
    same = bool(jnp.array_equal(run(net, swapped)["tavg"], reference))
    print(f"{strategy!s:40s} identical forward result: {same}")

# %% [markdown]
# ## Running in pieces
#
# `sol.final` holds everything needed to continue: the state, the delay history buffer,
# the global step counter (which drives the noise) and the monitors' states. Passing it as
# `history=` continues the run exactly, so a long simulation can be run (and saved) in
# pieces.

# %%
whole = run(net)
first = run(net, t0=0.0, t1=T1 / 2)
second = run(net, t0=T1 / 2, t1=T1, history=first.final)
joined = jnp.concatenate([first["tavg"], second["tavg"]])
print("pieces joined == one run:", bool(jnp.array_equal(joined, whole["tavg"])),
      f"(max |difference| = {float(jnp.max(jnp.abs(joined - whole['tavg']))):.1e})")
print("times join too:", bool(np.allclose(
    np.concatenate([first.ts["tavg"], second.ts["tavg"]]), whole.ts["tavg"])))

# %% [markdown]
# ## A look at the activity
#
# Figures need matplotlib (`pip install -e ".[plot]"`); they are saved to the folder
# printed below (`$NETDYN_TUTORIAL_OUT`, by default a temporary folder).

# %%
if plt is not None:
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 3))
    ts = np.asarray(whole.ts["tavg"])
    first = ts <= 2_000.0  # the first 2 s: individual cycles stay visible
    for i in range(3):
        ax.plot(ts[first], np.asarray(whole["tavg"])[first, 0, i], lw=0.8,
                label=data.labels[i])
    ax.set(xlabel="time (ms)", ylabel="v (10 ms average)", title="FitzHugh-Nagumo network")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "composing_models.png", dpi=120)
    plt.close(fig)
    print("figure saved to", out / "composing_models.png")
