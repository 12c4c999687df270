"""Shared code of the benchmark scripts (and of ``scripts/studies/``): the reference
workload, tvboptim's counterpart, timing and report pieces. Importing it puts this checkout
first on ``sys.path``, so that a script measures the netdyn it sits in. The workload itself
is ``netdyn.presets``'s; its numbers are repeated here for the reports' text.
"""

import datetime
import os
import platform
import random
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks"  # where the reports go
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The reference workload, as nd.presets builds it (for the reports' text).
DT = 1.0  # ms
SPEED = 4.0  # mm/ms
G = 0.5
SIGMA = 0.00283
GAMMA = 0.641  # ReducedWongWang's (and TVB's) default
PERIOD = 1000.0  # ms: BOLD TR, temporal-average period
SKIP = 20  # BOLD samples dropped before the FC


# ------------------------------------------------------------------------ connectomes


def dk_average():
    """``(weights, lengths, fc)`` of tvboptim's 84-region ``dk_average`` (Desikan-Killiany
    group average), or ``None`` where tvboptim is not importable."""
    try:
        from tvboptim.data import load_functional_connectivity, load_structural_connectivity

        w, lengths, _ = load_structural_connectivity(name="dk_average")
        fc = load_functional_connectivity(name="dk_average")
    except ImportError:
        return None
    return np.asarray(w, float), np.asarray(lengths, float), np.asarray(fc, float)


def load_connectome():
    """``(weights, lengths, description)``: ``dk_average``, else a seeded random 84-node
    graph of the same size and longest tract (the forward benchmarks need no FC)."""
    data = dk_average()
    if data is not None:
        return data[0], data[1], "tvboptim's `dk_average`"
    rng = np.random.default_rng(0)
    n = 84
    w = rng.lognormal(0.0, 1.5, (n, n)) * (rng.random((n, n)) < 0.98)
    w = 0.5 * (w + w.T)
    np.fill_diagonal(w, 0.0)
    pos = rng.normal(0.0, 40.0, (n, 3))
    lengths = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    lengths *= 224.0 / lengths.max()  # dk_average's longest tract is ~224 mm
    return w, lengths, "a seeded random 84-node connectome (tvboptim not importable)"


def load_data():
    """``(weights, lengths, fc, description)``: ``dk_average`` with its empirical FC, else
    netdyn's embedded 80-region ``hcp``."""
    data = dk_average()
    if data is not None:
        return (*data, "tvboptim's 84-region `dk_average` connectome and empirical FC")
    import netdyn as nd

    hcp = nd.datasets.load("hcp")
    return (
        np.asarray(hcp.weights, float),
        np.asarray(hcp.lengths, float),
        np.asarray(hcp.fc, float),
        "**fallback**: tvboptim is not installed, so netdyn's embedded 80-region `hcp` "
        "connectome and FC (not the reference `dk_average`)",
    )


# ------------------------------------------------------------------------- networks


def reference_text(connectome: str, note: str = "") -> str:
    """The reference network in a report's words, on ``connectome`` (``note``: on it)."""
    return (f"Reduced Wong-Wang (w = 0.5, I_o = 0.32, gamma = {GAMMA}, initial S = 0.3) on "
            f"{connectome} (weights / max, delays = lengths / {SPEED:g} mm/ms{note}), delayed "
            f"linear coupling G = {G}, additive noise sigma = {SIGMA} on S, stochastic Heun, "
            f"dt = {DT:g} ms")


def reference_network(w, lengths, dtype=np.float64, **kwargs):
    """``nd.presets.reference_network(w, lengths)`` in ``dtype`` (``kwargs`` to
    ``nd.presets.rww``, e.g. ``interpolation``).

    The weights are divided by their maximum in float64 and the lengths cast before the
    preset divides them by the speed (4 mm/ms, a power of two), so the float32 network
    holds the float64 one's values rounded once."""
    import netdyn as nd

    return nd.presets.rww(np.asarray(w / w.max(), dtype), np.asarray(lengths, dtype), **kwargs)


def tvboptim_network(w, lengths, dtype=None, noise=True, buffer="roll"):
    """The reference network in tvboptim 0.4's ``experimental.network_dynamics``: the same
    equations and numbers, its (pre-sampled) noise stream, its ``roll`` history buffer
    (``buffer``: its ``buffer_strategy``, ``"roll"`` or ``"circular"``)."""
    import jax
    import jax.numpy as jnp
    from tvboptim.experimental.network_dynamics import Network
    from tvboptim.experimental.network_dynamics.coupling import DelayedLinearCoupling
    from tvboptim.experimental.network_dynamics.dynamics.tvb import ReducedWongWang
    from tvboptim.experimental.network_dynamics.graph import DenseDelayGraph
    from tvboptim.experimental.network_dynamics.noise import AdditiveNoise

    graph = DenseDelayGraph(
        weights=jnp.asarray(w / w.max(), dtype), delays=jnp.asarray(lengths / SPEED, dtype)
    )
    return Network(
        dynamics=ReducedWongWang(w=0.5, I_o=0.32, gamma=GAMMA, INITIAL_STATE=(0.3,)),
        coupling={
            "delayed": DelayedLinearCoupling(incoming_states="S", G=G, buffer_strategy=buffer)
        },
        graph=graph,
        noise=AdditiveNoise(sigma=SIGMA, apply_to="S", key=jax.random.key(0)) if noise else None,
    )


def make_remat(label: str):
    """The netdyn remat strategy named by ``label`` (``None`` or ``NoRemat``, ``Uniform(245)``,
    ``Nested(50,1200)``, ``MultiLevel(16)``, ``Auto(10MB)``, ``Policy(coupling)``)."""
    import netdyn as nd

    if label in ("None", "NoRemat"):
        return nd.NoRemat()
    m = re.fullmatch(r"(Uniform|Nested|MultiLevel|Auto|Policy)\((.*)\)", label)
    if m is None:
        raise ValueError(f"unknown configuration {label!r}")
    name, args = m.groups()
    if name == "Auto":
        return nd.Auto(max_bytes=int(float(args.removesuffix("MB")) * 1e6))
    if name == "Policy":
        return nd.Policy(tuple(args.split(",")))
    return getattr(nd, name)(*(int(a) for a in args.split(",")))


def skip_samples(seconds: float) -> int:
    """BOLD samples dropped before the FC of a ``seconds`` run: ``SKIP``, at most half."""
    return min(SKIP, round(seconds * 1000.0 / PERIOD) // 2)


def tvboptim_forward(w, lengths, seconds, dtype=None, noise=True):
    """The reference network's forward in tvboptim 0.4 (``prepare``, ``Heun``; a 1 s
    temporal average, or every step below 1 s): ``(run(config), (config,))``."""
    from tvboptim.experimental.network_dynamics import prepare
    from tvboptim.experimental.network_dynamics.solvers import Heun
    from tvboptim.observations.tvb_monitors.downsampling import TemporalAverage

    network = tvboptim_network(w, lengths, dtype, noise)
    solve_fn, config = prepare(network, Heun(), t0=0.0, t1=seconds * 1000.0, dt=DT)
    monitor = TemporalAverage(period=PERIOD) if seconds * 1000.0 >= PERIOD else None

    def run(config):
        sol = solve_fn(config)
        return (monitor(sol) if monitor is not None else sol).ys

    return run, (config,)


# tvboptim's gradient configurations: ``tvboptim`` (its default: one scan, every step's
# carry on the tape) or ``tvboptim(K[,stream][,tbptt=W][,ds=D])``: ``Heun(block_size=K)``,
# checkpointed blocks of K steps, whose noise is drawn per block (``fold_in(key, block)``:
# the loss depends on K); ``stream``: the BOLD accumulated block by block
# (``streaming_hrf_bold``, K a multiple of the BOLD period; the same BOLD as the post-hoc
# monitor with a ``SubSampling(dt)`` downsample, see ``tvboptim_exact``); ``tbptt=W``:
# ``Heun(grad_horizon=W)``, the carry's gradient cut every W steps (the loss unchanged, the
# gradient **not** d loss / d G); ``ds=D``: the HRF sampled every D ms (another BOLD).
TVBOPTIM_LABEL = re.compile(
    r"tvboptim(?:\((?P<block>\d+)(?P<stream>,stream)?(?:,tbptt=(?P<tbptt>\d+))?"
    r"(?:,ds=(?P<ds>[\d.]+))?\))?"
)


def tvboptim_config(label: str) -> dict:
    """``{"block", "stream", "tbptt", "ds"}`` of a tvboptim label (see ``TVBOPTIM_LABEL``)."""
    m = TVBOPTIM_LABEL.fullmatch(label)
    if m is None:
        raise ValueError(f"unknown tvboptim configuration {label!r}")
    return {
        "block": None if m["block"] is None else int(m["block"]),
        "stream": m["stream"] is not None,
        "tbptt": None if m["tbptt"] is None else int(m["tbptt"]),
        "ds": None if m["ds"] is None else float(m["ds"]),
    }


def tvboptim_exact(label: str) -> str | None:
    """The configuration whose loss and exact gradient ``label`` should reproduce (same
    noise stream, post-hoc BOLD, no truncation), or ``None`` where it is one itself."""
    cfg = tvboptim_config(label)
    if not (cfg["stream"] or cfg["tbptt"]):
        return None
    ds = cfg["ds"] or DT
    return f"tvboptim({cfg['block']},sub={ds:g})"


def tvboptim_loss(label, w, lengths, fc_target, seconds, *, skip, dtype=None):
    """``loss(G)`` of the reference workload in tvboptim 0.4 under ``label``
    (``TVBOPTIM_LABEL``, or ``tvboptim(K,sub=D)``: blocks of K, the post-hoc monitor with a
    ``SubSampling(D)`` downsample: the streaming rows' exact counterpart)."""
    import equinox as eqx
    import jax.numpy as jnp
    from tvboptim.experimental.network_dynamics import prepare
    from tvboptim.experimental.network_dynamics.solvers import Heun
    from tvboptim.observations.observation import compute_fc, rmse
    from tvboptim.observations.tvb_monitors.bold import HRFBold, streaming_hrf_bold
    from tvboptim.observations.tvb_monitors.downsampling import SubSampling

    sub = re.fullmatch(r"tvboptim\((\d+),sub=([\d.]+)\)", label)
    if sub:
        cfg = {"block": int(sub[1]), "stream": False, "tbptt": None, "ds": float(sub[2])}
    else:
        cfg = tvboptim_config(label)
    network = tvboptim_network(w, lengths, dtype)
    solver = Heun(block_size=cfg["block"], grad_horizon=cfg["tbptt"])
    t1 = seconds * 1000.0
    target = jnp.asarray(fc_target, dtype)
    if cfg["stream"]:
        monitor = HRFBold(period=PERIOD, downsample=SubSampling(period=cfg["ds"] or DT), voi=0)
        solve_fn, state = prepare(network, solver, t0=0.0, t1=t1, dt=DT,
                                  reduce=streaming_hrf_bold(monitor, DT))
        observe = None  # solve_fn returns the BOLD itself, [samples, 1, nodes]
    else:
        if sub or cfg["ds"]:
            monitor = HRFBold(period=PERIOD, downsample=SubSampling(period=cfg["ds"]), voi=0)
        else:  # the reference workload's monitor
            monitor = HRFBold(period=PERIOD, downsample_period=DT, voi=0)
        solve_fn, state = prepare(network, solver, t0=0.0, t1=t1, dt=DT)
        observe = monitor

    def loss(G):
        cfg_ = eqx.tree_at(lambda c: c.coupling.delayed.G, state, G)
        out = solve_fn(cfg_)
        bold = out if observe is None else observe(out)
        return rmse(compute_fc(bold, skip_t=skip), target)

    return loss


def have_tvboptim() -> bool:
    try:
        import tvboptim  # noqa: F401
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------- timing


def compile_timed(f, *args):
    """AOT-compile the jitted ``f`` for ``args``: ``(executable, trace + compile seconds)``."""
    t = time.perf_counter()
    compiled = f.lower(*args).compile()
    return compiled, time.perf_counter() - t


def timed(f, *args):
    """``(f(*args), seconds)``, the result ready (``jax.block_until_ready``)."""
    import jax

    t = time.perf_counter()
    out = jax.block_until_ready(f(*args))
    return out, time.perf_counter() - t


def interleaved(cases, repeats, *, group=None, warmup=False, log=False, deadline=None,
                outputs=None):
    """Seconds of every call of ``cases`` (``name -> (callable, args)``): ``repeats``
    rounds, each calling every case once in a new random order (a shared machine's slow
    spells spread over all cases); cases of one ``group(name)`` are called together.
    ``warmup``: one untimed call of each first. ``deadline`` (``time.perf_counter()``): no
    warm-up past it, no round that would end past it (one at least). ``outputs``: a dict
    given each case's last result."""
    import jax

    groups = {}
    for name in cases:
        groups.setdefault(name if group is None else group(name), []).append(name)
    if warmup and (deadline is None or time.perf_counter() < deadline):
        for f, args in cases.values():
            jax.block_until_ready(f(*args))
    times = {name: [] for name in cases}
    for r in range(repeats):
        start = time.perf_counter()
        for g in random.sample(list(groups), len(groups)):
            for name in groups[g]:
                f, args = cases[name]
                t = time.perf_counter()
                out = jax.block_until_ready(f(*args))
                times[name].append(time.perf_counter() - t)
                if outputs is not None:
                    outputs[name] = out
        if log:
            print(f"  round {r + 1}/{repeats} done ({time.strftime('%H:%M:%S')}, load "
                  f"{loadavg()})", flush=True)
        if deadline is not None and time.perf_counter() + (time.perf_counter() - start) > deadline:
            break
    return times


def per_step(times, n_steps):
    """``name -> (best, median)`` µs per step of ``interleaved``'s seconds."""
    return {
        name: (min(ts) / n_steps * 1e6, float(np.median(ts)) / n_steps * 1e6)
        for name, ts in times.items()
    }


def maxrss_bytes() -> int:
    """Peak resident memory of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def mb(x):
    return x / 1e6


# --------------------------------------------------------------------------- reports


LOADED = 2.5  # a 1-minute load average above this (on 2 CPUs; CPUs - 2 more on a larger
# machine): the report says the machine was loaded
_LOADS: list[float] = []  # 1-minute load averages seen by ``loadavg`` in this process


def loadavg() -> str:
    """The load averages (1, 5, 15 min) as text; the 1-minute one is remembered for
    ``machine_section``."""
    try:
        loads = os.getloadavg()
    except OSError:
        return "?"
    _LOADS.append(loads[0])
    return "{:.2f} {:.2f} {:.2f}".format(*loads)


def machine_info() -> dict[str, str]:
    """What a report says about the machine and the software versions."""
    import equinox
    import jax
    import jaxlib

    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import tvboptim

        tvbo = getattr(tvboptim, "__version__", "installed")
    except ImportError:
        tvbo = "not importable"
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cpu": f"{cpu}, {os.cpu_count()} logical CPUs",
        "platform": platform.platform(),
        "python": platform.python_version(),
        "jax": f"{jax.__version__} (jaxlib {jaxlib.__version__}), backend {jax.default_backend()}",
        "equinox": equinox.__version__,
        "tvboptim": tvbo,
        "load average at start": loadavg(),
    }


def peak_load() -> float | None:
    """The largest 1-minute load average ``loadavg`` has seen in this process."""
    return max(_LOADS, default=None)


def machine_section(info, end_load=None, peak=None) -> list[str]:
    """The ``## Machine`` lines of a report: ``info``, the load average at the end and
    ``peak`` (the largest 1-minute load of a run whose report is rewritten later)."""
    lines = ["", "## Machine", ""]
    lines += [f"- {k}: {v}" for k, v in info.items()]
    lines.append(f"- load average at end: {end_load or loadavg()}")
    seen = [*_LOADS, *([] if peak is None else [peak])]
    for text in (info.get("load average at start"), end_load):
        try:
            seen.append(float(str(text).split()[0]))
        except (ValueError, IndexError):
            pass
    cpus = recorded_cpus(info)
    if seen and max(seen) > LOADED + cpus - 2:
        lines.append(
            f"- **the machine was loaded** during this run (1-minute load average up to "
            f"{max(seen):.1f} on {cpus} CPUs, shared with other jobs): absolute times "
            "are inflated; compare the ratios measured within the run."
        )
    return lines


def recorded_cpus(info) -> int:
    """The logical CPUs of the machine that measured ``info`` (``machine_info``'s), not of
    the one rendering its report (``--from-json``); this machine's when not recorded."""
    found = re.search(r"(\d+) logical CPUs", str(info.get("cpu", "")))
    return int(found.group(1)) if found else os.cpu_count()


def kept_tail(path, marker: str) -> str:
    """The part of the report at ``path`` from ``marker`` on (kept when the script rewrites
    the rest; written by another run or script), or the bare marker."""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        if marker in text:
            return text[text.index(marker) :]
    return marker + "\n"


def command(script: str, *options: str) -> str:
    """How a report names the command that wrote it (``script`` in ``scripts/benchmarks/``,
    or ``FOLDER/script`` in ``scripts/FOLDER/``)."""
    path = f"scripts/{script}" if "/" in script else f"scripts/benchmarks/{script}"
    return " ".join(["python", path, *filter(None, options)])
