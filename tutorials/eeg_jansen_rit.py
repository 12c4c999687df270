# %% [markdown]
# # EEG from a Jansen-Rit network
#
# Jansen-Rit neural masses (Jansen & Rit 1995) are the classic model of the EEG's alpha
# rhythm. This tutorial builds a network of them on the embedded connectome, projects the
# pyramidal cells' membrane potential onto scalp electrodes with a lead-field monitor
# (`nd.LeadField`) inside the time loop, and looks at the sensors' spectrum with Welch's
# method (`nd.welch`), its alpha band power and its peak frequency. All of these are
# differentiable: the last section takes the gradient of the alpha peak frequency with
# respect to a model parameter and checks it against finite differences.
#
# Run it with `python tutorials/eeg_jansen_rit.py` (`--quick` for a shorter run: its
# spectra are noisier, with 1 Hz instead of 0.5 Hz resolution).

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

jax.config.update("jax_enable_x64", True)  # before importing netdyn, before any array

import netdyn as nd  # noqa: E402

QUICK = "--quick" in sys.argv  # also False inside a notebook
DT = 0.5  # ms
WARMUP = 1_000.0  # ms of start-up transient, not recorded
T1 = WARMUP + (3_000.0 if QUICK else 20_000.0)  # ms
SEGMENT = 1_000 if QUICK else 2_000  # Welch segment (samples at 1 kHz): 1 s or 2 s
# Figures need matplotlib (`pip install -e ".[plot]"`); they go to $NETDYN_TUTORIAL_OUT
# (by default a temporary folder).
plt = import_module("matplotlib.pyplot") if find_spec("matplotlib") else None
out = Path(os.environ.get("NETDYN_TUTORIAL_OUT", Path(tempfile.gettempdir()) / "netdyn-tutorials"))

# %% [markdown]
# ## The network
#
# The `hcp` connectome: 80 AAL2 regions, weights `W[target, source]` and tract lengths in
# mm, turned into delays at 4 mm/ms. Each region is a Jansen-Rit column, coupled through
# the sigmoid of its afferents' pyramidal potential $y_1 - y_2$
# (`DelayedSigmoidalJansenRit`). The input to the excitatory interneurons is noisy, as in
# Jansen & Rit's paper (there a uniform random pulse rate; here additive white noise on
# $\dot y_1$, i.e. on state `y4`).
#
# One parameter departs from netdyn's (TVB's) defaults: the firing threshold
# `v0 = 6.0` mV of Jansen & Rit (1995, Table 1) instead of TVB's 5.52 mV. With TVB's
# value and the mean input `mu = 0.22` /ms, an isolated column oscillates at about 7 Hz
# (theta); with the original 6 mV it oscillates at 10.9 Hz, in the alpha band (measured
# with this library: the zero crossings of a noiseless column's $y_1 - y_2$ over 20 s).
# `dt = 0.5` ms changes that frequency by 0.002 Hz against `dt = 0.05` ms.

# %%
data = nd.datasets.load("hcp")
n = data.n_nodes
net = nd.Network(
    dynamics=nd.JansenRit(v0=6.0, mu=jnp.asarray(0.22)),
    coupling=nd.DelayedSigmoidalJansenRit(G=jnp.asarray(1.0)),
    graph=nd.DelayGraph.from_lengths(data.weights, data.lengths, speed=4.0),
    noise=nd.AdditiveNoise(sigma=jnp.array([0.0, 0.0, 0.0, 0.0, 0.05, 0.0])),
)
print(f"{n} regions, delays up to {net.graph.max_delay:.1f} ms")

# %% [markdown]
# ## A lead field
#
# A lead field (gain) matrix $G$ `[sensors, regions]` says how much each region's source
# contributes to each sensor's potential; real ones come from a head model (boundary or
# finite elements on the subject's MRI) and TVB ships some, which
# `nd.datasets.read_projection_matrix` reads. **The embedded dataset has no region
# positions and no head model, so this tutorial builds a toy one, and its sensor maps are
# not anatomical:**
#
# - region positions: seeded random points on a sphere of radius 70 mm, on the left
#   ($x < 0$) or right ($x > 0$) side according to each region's label (`..._L`,
#   `..._R`): the labels travel with the data;
# - 32 electrodes spread evenly (a Fibonacci lattice) over the upper half of a 90 mm
#   sphere;
# - each region a current dipole pointing outwards (radially), the orientation of the
#   pyramidal cells in a gyrus crown, in an infinite homogeneous conductor of
#   conductivity $\sigma = 0.33$ S/m (no skull, no head boundary):
#
# $$ G_{kj} = \frac{\mathbf{n}_j \cdot (\mathbf{r}_k - \mathbf{r}_j)}
#               {4 \pi \sigma\, |\mathbf{r}_k - \mathbf{r}_j|^3}, $$
#
# with $\mathbf{r}_k$ the electrode, $\mathbf{r}_j$ and $\mathbf{n}_j$ the dipole's
# position and unit orientation (Nunez & Srinivasan 2006, ch. 6). The gain is per unit
# dipole moment; the signal's scale is arbitrary here (a column's $y_1 - y_2$, in mV,
# stands for its dipole moment).

# %%
rng = np.random.default_rng(0)
side = np.array([1.0 if label.endswith("_R") else -1.0 for label in data.labels])
u = rng.normal(size=(n, 3))
u[:, 0] = side * np.abs(u[:, 0])
u[:, 2] = np.abs(u[:, 2]) - 0.3 * np.abs(u[:, 2]).mean()  # mostly upper half
orientation = u / np.linalg.norm(u, axis=1, keepdims=True)
regions_mm = 70.0 * orientation

n_sensors = 32
k = np.arange(n_sensors) + 0.5
z = 1.0 - k / n_sensors  # upper hemisphere, evenly spaced in z
phi = np.pi * (1.0 + 5.0**0.5) * k  # golden-angle steps
sensors_mm = 90.0 * np.stack(
    [np.sqrt(1 - z**2) * np.cos(phi), np.sqrt(1 - z**2) * np.sin(phi), z], axis=1
)

d = (sensors_mm[:, None, :] - regions_mm[None, :, :]) / 1000.0  # m, [sensors, regions, 3]
gain = np.einsum("srx,rx->sr", d, orientation) / (4 * np.pi * 0.33 * np.linalg.norm(d, axis=2) ** 3)
print(f"gain {gain.shape} = [sensors, regions]")

# %% [markdown]
# ## Simulating EEG
#
# `nd.LeadField.jansen_rit(gain, period)` watches `y1` and `y2`, averages $y_1 - y_2$ over
# each 1 ms period (a 1 kHz recording) and multiplies by the gain; `reference="average"`
# re-references every sample to the mean over electrodes, as EEG is usually analysed.
# Inside the time loop it keeps one `[regions]` running sum, however many sensors. A
# `TemporalAverage` of the same two variables records the sources for comparison, and
# `warmup` drops the first second (the columns start at rest).

# %%
monitors = {
    "eeg": nd.LeadField.jansen_rit(gain, period=1.0, reference="average", warmup=WARMUP),
    "sources": nd.TemporalAverage(period=1.0, variables=("y1", "y2"), warmup=WARMUP),
}
sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=T1, dt=DT, monitors=monitors,
                  key=jax.random.key(0))
eeg = sol["eeg"]  # [time, 1, sensors]
sources = sol["sources"][:, 0] - sol["sources"][:, 1]  # [time, regions]: y1 - y2
print(f"EEG {eeg.shape}, sources {sources.shape}, {(T1 - WARMUP) / 1000:.0f} s at 1 kHz")
zero_sum = float(jnp.abs(eeg.sum(-1)).max() / jnp.abs(eeg).max())
print(f"average reference: |sum over electrodes| <= {zero_sum:.0e} x the largest |sample|")

# %% [markdown]
# ## Spectrum, alpha power and peak frequency
#
# `nd.welch(x, period)` estimates the power spectral density along the first axis of any
# monitor's output (Hann window, half-overlapping segments, mean removed, one-sided
# density: SciPy's defaults). `nd.band_power` integrates it over a band and
# `nd.peak_frequency` finds the peak, either exactly (argmax) or as a differentiable
# soft-argmax with a temperature on the log-power scale.

# %%
freqs, psd = nd.welch(eeg, 1.0, segment=SEGMENT)  # [freqs], [freqs, 1, sensors]
_, psd_sources = nd.welch(sources, 1.0, segment=SEGMENT)  # [freqs, regions]
mean_psd = psd[:, 0].mean(axis=1)
peak = float(nd.peak_frequency(freqs, mean_psd, band=(1.0, 40.0)))
soft_peak = float(nd.peak_frequency(freqs, mean_psd, band=(6.0, 14.0), temperature=0.1))
alpha = nd.band_power(freqs, psd, (8.0, 12.0))[0]  # [sensors]
relative = alpha / nd.band_power(freqs, psd, (1.0, 40.0))[0]
print(f"EEG peak frequency: {peak:.2f} Hz (soft-argmax in 6-14 Hz: {soft_peak:.2f} Hz)")
print(f"alpha (8-12 Hz) share of 1-40 Hz power: {float(relative.mean()):.0%} on average "
      f"(range {float(relative.min()):.0%}-{float(relative.max()):.0%} over electrodes)")
source_peaks = np.asarray(nd.peak_frequency(freqs, psd_sources, band=(1.0, 40.0)))
print(f"source peaks: {source_peaks.min():.1f}-{source_peaks.max():.1f} Hz over regions")

# %% [markdown]
# ## Figure
#
# The toy geometry (top view), the EEG of a few electrodes, the spectra, and the regions
# whose sources carry the most alpha power, named by their labels. The columns are
# identical and weakly coupled, so their alpha power differs by only a few percent and
# that ranking mostly reflects the noise and each region's input strength; regional
# parameters (e.g. a `[nodes]` vector `mu`) would make it informative.

# %%
if plt is not None:
    out.mkdir(parents=True, exist_ok=True)
    f = np.asarray(freqs)
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    ax = axes[0, 0]
    ax.scatter(regions_mm[:, 0], regions_mm[:, 1], c=np.where(side > 0, "C3", "C0"), s=14,
               label="regions (red: right, blue: left)")
    ax.scatter(sensors_mm[:, 0], sensors_mm[:, 1], marker="^", c="k", s=20, label="electrodes")
    ax.set(xlabel="x (mm, left-right)", ylabel="y (mm, back-front)", aspect="equal",
           title="toy geometry, top view")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    ax = axes[0, 1]
    t = np.asarray(sol.ts["eeg"]) / 1000.0
    shown = slice(0, 1500)
    for i, s in enumerate((0, 8, 16, 31)):
        trace = np.asarray(eeg[shown, 0, s])
        trace = trace - trace.mean()
        ax.plot(t[shown], trace / np.abs(trace).max() + 2.2 * i, lw=0.8)
    ax.set(xlabel="time (s)", yticks=[], title="EEG at 4 electrodes (each scaled)")
    ax = axes[1, 0]
    ax.axvspan(8.0, 12.0, color="0.9", label="alpha band (8-12 Hz)")
    ax.semilogy(f, np.asarray(mean_psd) / np.asarray(mean_psd).max(), "k",
                label="EEG, mean over electrodes")
    src = np.asarray(psd_sources).mean(axis=1)
    ax.semilogy(f, src / src.max(), "C1--", label="sources, mean over regions")
    ax.axvline(peak, color="C3", lw=0.8, label=f"EEG peak {peak:.1f} Hz")
    ax.set(xlim=(0, 45), ylim=(1e-4, 2), xlabel="frequency (Hz)",
           ylabel="PSD (normalised)", title="Welch spectrum")
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    alpha_src = np.asarray(nd.band_power(freqs, psd_sources, (8.0, 12.0)))
    top = np.argsort(alpha_src)[::-1][:12]
    ax.barh(np.arange(len(top))[::-1], alpha_src[top], color="C2")
    ax.set_yticks(np.arange(len(top))[::-1], [data.labels[i] for i in top], fontsize=8)
    ax.set(xlabel="alpha power of y1 - y2 (mV$^2$)", title="regions with most alpha power")
    fig.tight_layout()
    fig.savefig(out / "eeg_jansen_rit.png", dpi=110)
    plt.close(fig)
    print("figure saved to", out / "eeg_jansen_rit.png")

# %% [markdown]
# ## A differentiable spectral feature
#
# The soft peak frequency is a smooth function of the simulation, so `jax.grad` gives
# its derivative with respect to any parameter, here the mean input `mu` of every column
# (noise realisation fixed by the key). A central finite difference checks it: it needs
# a small step here (`h = 1e-6`; with `h = 1e-4` it was 1% off in our runs, with
# `1e-6` it agreed to 5 digits), as the noisy network's response is only locally
# smooth. Such a feature can enter a loss for `nd.fit`, e.g. to match an EEG's alpha
# peak.

# %%
T_GRAD = WARMUP + (1_000.0 if QUICK else 4_000.0)


def alpha_peak(mu):
    model = eqx.tree_at(lambda m: m.dynamics.mu, net, mu)
    s = nd.simulate(model, nd.Heun(), t0=0.0, t1=T_GRAD, dt=DT, key=jax.random.key(1),
                    monitors={"eeg": monitors["eeg"]})
    f, p = nd.welch(s["eeg"], 1.0, segment=1_000)
    return nd.peak_frequency(f, p[:, 0].mean(axis=1), band=(6.0, 14.0), temperature=0.1)


value, grad = eqx.filter_jit(jax.value_and_grad(alpha_peak))(jnp.asarray(0.22))
h = 1e-6
peak_fn = eqx.filter_jit(alpha_peak)
fd = (peak_fn(jnp.asarray(0.22 + h)) - peak_fn(jnp.asarray(0.22 - h))) / (2 * h)
print(f"soft alpha peak {float(value):.3f} Hz; d/d mu = {float(grad):.3f} Hz per 1/ms "
      f"(finite difference {float(fd):.3f})")

# %% [markdown]
# ## What next
#
# - With a real head model, load its gain with
#   `nd.datasets.read_projection_matrix(path, regions=n)` (columns in the connectome's
#   region order) and keep everything else.
# - `nd.LeadField(gain, period, variables=..., coefficients=...)` observes any weighted
#   combination of any model's state variables; MEG and SEEG differ only in the gain
#   (and no average reference).
# - **References**: Jansen & Rit (1995), *Electroencephalogram and visual evoked
#   potential generation in a mathematical model of coupled cortical columns*, Biol.
#   Cybern. 73:357-366; Welch (1967), IEEE Trans. Audio Electroacoust. 15(2):70-73;
#   Nunez & Srinivasan (2006), *Electric Fields of the Brain*, Oxford University Press.
