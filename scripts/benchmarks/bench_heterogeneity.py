"""Regional heterogeneity: netdyn's gradient fit side by side with CMA-ES.
Writes benchmarks/heterogeneity.md (and .json, .png).

The same loss, the same parameterisation and the same wall-clock budget on this machine
for both methods, at about 3, 10 and 80 parameters: the global coupling G of the
two-population Wong-Wang model with feedback inhibition control
(``nd.presets.rww_ei_fic``, G 0.49: its best homogeneous point) plus each region's
input gain (``nd.InputScaling``) along 2 maps (k = 3), along 9 maps (k = 10), or one
mean-free log-gain deviation per region (k = 81). The loss is ``nd.FcLoss`` (BOLD FC
of the embedded HCP data's runs 1-4, ``"1-r+huber"``, one fixed noise key for every
evaluation of both methods). Measured: the best loss reached against time (compilation
included), and the FC r on the test runs 5-7 of each method's best parameters, simulated
anew (longer, another noise key).

    python scripts/benchmarks/bench_heterogeneity.py            # ~65 min on 2 CPU cores
    python scripts/benchmarks/bench_heterogeneity.py --ks 81 --budget 1200
    python scripts/benchmarks/bench_heterogeneity.py --smoke --ks 3 81 --budget 40
    python scripts/benchmarks/bench_heterogeneity.py --ks 10 --budget 360 --merge
    python scripts/benchmarks/bench_heterogeneity.py --from-json benchmarks/heterogeneity.json
    taskset -c 0 python scripts/benchmarks/bench_heterogeneity.py --linear

``--linear`` measures only the report's "Analytic loss" section (``nd.LinearFcLoss``:
the analytic FC of the linearised model; the gradient fit until the loss stops falling,
CMA-ES on the same loss with batched populations, each end point simulated with 3 held-out
noise sets): about 25 min on one core; ``taskset -c 0`` (one core) is recommended on a
shared 2-core machine (see the section's machine notes). The other measurements in
heterogeneity.json are kept, and a later run without ``--linear`` keeps that section.

``--merge`` keeps the results of the other k in the existing heterogeneity.json (same
settings and budget required) and reports them all; each k's section says when it ran.

The default takes about 65 min on 2 CPU cores: 3 values of k x 2 methods x ``--budget``
(600 s), plus 7 held-out simulations (288 s x 4 realisations each, a few minutes).
``--smoke``: tiny durations and a 60 s budget, written to a temporary folder unless
``--out`` is given. Needs ``cma`` (pycma), a benchmark-only dependency: ``pip install cma``.
"""

import json
import math
import os
import time
from pathlib import Path

import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)

import netdyn as nd  # noqa: E402

G0 = 0.49  # rww_ei_fic's best homogeneous G on the embedded HCP data
LR_G, LR_GAIN = 0.002, 0.02  # Adam step sizes: G (absolute units), gain coefficients
CMA_SIGMA0, CMA_SCALE_G, CMA_SCALE_GAIN = 0.5, 0.01, 0.1  # CMA-ES's scaled coordinates
FAILED_LOSS = 10.0  # what CMA-ES is told for a candidate whose loss is NaN or that fails
RUN_ERRORS = (eqx.EquinoxRuntimeError, jax.errors.JaxRuntimeError)
FULL = {"duration": 43_200.0, "burn_in": 57_600.0, "realisations": 4,
        "heldout_duration": 288_000.0, "heldout_realisations": 4, "budget": 600.0}
QUICK = {"duration": 7_200.0, "burn_in": 7_200.0, "realisations": 1,
         "heldout_duration": 14_400.0, "heldout_realisations": 1, "budget": 60.0}


# ------------------------------------------------------------------ problem set-up


def gain_parameterisation(k: int, w, target):
    """The log-gains of ``nd.InputScaling`` for ``k`` fitted parameters (G and k - 1)."""
    if k == 81:
        return nd.RegionalDeviation(0.0, jnp.zeros(w.shape[0]))
    if k == 3:
        maps = np.stack([nd.maps.in_strength(w), nd.maps.fc_gradient(target)])
        names = ("in-strength", "fc-gradient")
    elif k == 10:
        gradients = [nd.maps.fc_gradient(target, component=j) for j in range(1, 9)]
        maps = np.stack([nd.maps.in_strength(w), *gradients])
        names = ("in-strength", *(f"fc-gradient-{j}" for j in range(1, 9)))
    else:
        raise ValueError(f"k must be 3, 10 or 81, got {k}")
    return nd.MapParameter(0.0, maps, relative=False, names=names)


def gain_leaf(net):
    """The fitted gain array of ``net``: map coefficients or regional deviations."""
    gain = net.graph.weights.log_gain
    return gain.coefficients if isinstance(gain, nd.MapParameter) else gain.deviations


def with_theta(net, theta):
    """``net`` at ``theta = {"G": scalar, "gain": [k - 1]}`` (and ``"w_p": [nodes]``, the
    regional recurrent-excitation deviations of the analytic section's k = 161)."""
    net = eqx.tree_at(lambda n: (n.coupling.G, gain_leaf(n)), net,
                      (theta["G"], theta["gain"]))
    if "w_p" in theta:
        net = eqx.tree_at(lambda n: n.dynamics.w_p.deviations, net, theta["w_p"])
    return net


def start_theta(k: int) -> dict:
    """The homogeneous start: G0, zero gains (and for k = 161 zero w_p deviations)."""
    # dtype given: a weakly typed G would recompile the step once its update is strong
    theta = {"G": jnp.asarray(G0, dtype=float), "gain": jnp.zeros(min(k, 81) - 1)}
    return {**theta, "w_p": jnp.zeros(80)} if k == 161 else theta


def problem(k: int, data, settings):
    """``(network, loss_fn, train runs, test runs)`` of the benchmark for ``k``."""
    w = np.asarray(data.weights, float) / np.max(data.weights)
    bold = np.asarray(data.bold, float)
    train, test = bold[:4], bold[4:]
    target = nd.runs_fc(train)  # the training runs only, maps included
    net = nd.presets.rww_ei_fic(w, data.lengths, G=G0, sigma=0.001)
    scaling = nd.InputScaling(w, gain_parameterisation(k, w, target))
    net = with_theta(eqx.tree_at(lambda n: n.graph.weights, net, scaling), start_theta(k))
    loss_fn = nd.FcLoss(target, nd.Heun(remat=nd.Uniform(720)),
                        nd.Bold(period=720.0, variables="S_e"), duration=settings["duration"],
                        dt=1.0, metric="1-r+huber", burn_in=settings["burn_in"],
                        realisations=settings["realisations"])
    return net, loss_fn, train, test


# ------------------------------------------------------------------ the two methods


def objective(theta, net, loss_fn, key):
    return loss_fn(with_theta(net, theta), key)


forward = eqx.filter_jit(objective)


class Trace:
    """Every evaluation of one method: elapsed seconds since its start (compilation
    included), loss, FC r and mean FC, the best-so-far loss and its parameters."""

    def __init__(self, budget: float):
        self.budget, self.start = budget, time.perf_counter()
        self.points, self.failed = [], 0
        self.best, self.best_theta, self.best_metrics = math.inf, None, {}

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def over(self) -> bool:
        return self.elapsed() > self.budget

    def add(self, loss, metrics, theta) -> float:
        """Record one evaluation; returns its loss (NaN where it failed)."""
        loss = float(loss) if loss is not None else math.nan
        point = {"t": self.elapsed(), "loss": loss}
        point.update({m: float(metrics[m]) for m in ("fc_r", "mean_fc") if m in metrics})
        if not math.isfinite(loss):
            self.failed += 1
        elif loss < self.best:
            self.best, self.best_metrics = loss, point
            self.best_theta = jax.tree.map(np.asarray, theta)
        point["best"] = self.best
        self.points.append(point)
        return loss

    def summary(self, method: str, unit: str) -> dict:
        t = self.points[-1]["t"] if self.points else 0.0
        return {"method": method, "unit": unit, "evaluations": len(self.points),
                "seconds": t, "overrun": max(0.0, t - self.budget),
                "first_call": self.points[0]["t"] if self.points else None,
                "failed": self.failed, "best_loss": self.best,
                "best_at": self.best_metrics.get("t"), "fit_r": self.best_metrics.get("fc_r"),
                "best_theta": self.best_theta, "trace": self.points}


def gradient_fit(net, loss_fn, key, k: int, budget: float) -> dict:
    """Adam (G at ``LR_G``, gains at ``LR_GAIN``) on the exact gradient, one compiled
    step, until the first step that ends past ``budget`` or a non-finite loss."""
    opt = optax.multi_transform({"G": optax.adam(LR_G), "gain": optax.adam(LR_GAIN)},
                                {"G": "G", "gain": "gain"})

    @eqx.filter_jit
    def step(theta, state, net, loss_fn, key):
        grad_fn = jax.value_and_grad(objective, has_aux=True)
        (loss, metrics), grads = grad_fn(theta, net, loss_fn, key)
        updates, state = opt.update(grads, state, theta)
        return loss, metrics, optax.apply_updates(theta, updates), state

    theta = start_theta(k)
    state = opt.init(theta)
    trace = Trace(budget)
    while True:
        try:
            loss, metrics, new, state = step(theta, state, net, loss_fn, key)
        except RUN_ERRORS as e:
            print(f"  gradient: step {len(trace.points)} failed ({type(e).__name__})")
            trace.add(None, {}, theta)
            break
        loss = trace.add(loss, metrics, theta)
        print(f"  gradient step {len(trace.points):3d}  {trace.points[-1]['t']:7.1f} s  "
              f"loss {loss:.4f}  best {trace.best:.4f}", flush=True)
        theta = new
        if not math.isfinite(loss) or trace.over():
            break
    return trace.summary("gradient (Adam)", "steps")


def cma_search(k: int, scales: dict, budget: float, evaluate, cma, level: float = -math.inf,
               batched: bool = False) -> dict:
    """CMA-ES (pycma, default population, seed 1) from ``start_theta(k)`` in scaled
    coordinates (each parameter its start + ``scales[name]`` x), until the first generation
    that ends past ``budget`` or reaches ``level``. ``evaluate(thetas, trace)`` adds each
    candidate's loss to ``trace`` and returns the losses; a NaN is told ``FAILED_LOSS``."""
    start = start_theta(k)
    ends = np.cumsum([np.size(v) for v in start.values()])

    def theta(x):
        parts = np.split(np.asarray(x, float), ends[:-1])
        return {name: jnp.asarray((np.asarray(v) + scales[name] * part).reshape(np.shape(v)),
                                  dtype=float)
                for (name, v), part in zip(start.items(), parts, strict=True)}

    es = cma.CMAEvolutionStrategy(np.zeros(ends[-1]), CMA_SIGMA0, {"seed": 1, "verbose": -9})
    trace, cpu = Trace(budget), time.process_time()
    while not trace.over() and trace.best > level:
        xs = es.ask()
        values = evaluate([theta(x) for x in xs], trace)
        es.tell(xs, [v if math.isfinite(v) else FAILED_LOSS for v in values])
        if not batched or es.countiter % 10 == 0:
            print(f"  CMA-ES k = {k} generation {es.countiter:4d}  {trace.elapsed():7.1f} s  "
                  f"best {trace.best:.4f}  sigma {es.sigma:.3f}", flush=True)
    out = trace.summary(f"CMA-ES (popsize {es.popsize}{', batched' * batched})",
                        "evaluations")
    out.update(popsize=es.popsize, generations=es.countiter,
               cpu_seconds=time.process_time() - cpu)
    return out


def cma_fit(net, loss_fn, key, k: int, budget: float, cma) -> dict:
    """CMA-ES on the simulated loss, one candidate at a time."""
    def one_by_one(thetas, trace):
        values = []
        for theta in thetas:
            try:
                values.append(trace.add(*forward(theta, net, loss_fn, key), theta))
            except RUN_ERRORS:
                values.append(trace.add(None, {}, theta))
        return values

    scales = {"G": CMA_SCALE_G, "gain": CMA_SCALE_GAIN}
    return cma_search(k, scales, budget, one_by_one, cma)


# ------------------------------------------------------------------ scoring


@eqx.filter_jit
def _signals(loss_fn, net, key):
    return loss_fn.signals(net, key)


def simulate(loss_fn, model, key):
    """``loss_fn``'s signals of ``model``, or ``{"error": ...}`` where they fail."""
    try:
        x = np.asarray(_signals(loss_fn, model, key))
    except RUN_ERRORS as e:
        return {"error": type(e).__name__}
    return x if np.all(np.isfinite(x)) else {"error": "non-finite signal"}


def heldout(net, loss_fn, theta, train, test, settings) -> dict:
    """``theta`` simulated anew (``settings``' held-out duration and realisations, key
    99), scored against the test runs and the training runs (``nd.score_runs``)."""
    held = loss_fn.replace(duration=settings["heldout_duration"],
                           realisations=settings["heldout_realisations"])
    x = simulate(held, with_theta(net, jax.tree.map(jnp.asarray, theta)), jax.random.key(99))
    if isinstance(x, dict):
        return x
    return {"test": nd.score_runs(x, test, train=train), "train": nd.score_runs(x, train)}


def time_to(trace: list[dict], level: float) -> float | None:
    """The first elapsed time at which the best-so-far loss is ``<= level``."""
    return next((p["t"] for p in trace if p["best"] <= level), None)


def compare(result: dict) -> None:
    """Adds each method's time to CMA-ES's final best loss (and its fraction of CMA-ES's
    total seconds) to ``result``."""
    cma_run = result["cma"]
    for run in (result["gradient"], cma_run):
        level = cma_run["best_loss"]
        t = time_to(run["trace"], level) if math.isfinite(level) else None
        run["time_to_cma_best"] = t
        run["fraction_of_cma_time"] = None if t is None else t / cma_run["seconds"]


def run_k(k: int, data, settings, budget: float, cma) -> dict:
    net, loss_fn, train, test = problem(k, data, settings)
    key = jax.random.key(0)  # common random numbers: every evaluation of both methods
    print(f"k = {k}: gradient fit ({budget:g} s)", flush=True)
    result = {"k": k, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "gradient": gradient_fit(net, loss_fn, key, k, budget)}
    print(f"k = {k}: CMA-ES ({budget:g} s)", flush=True)
    result["cma"] = cma_fit(net, loss_fn, key, k, budget, cma)
    compare(result)
    for name in ("gradient", "cma"):
        run = result[name]
        print(f"k = {k}: held-out simulation of {name}'s best", flush=True)
        run["heldout"] = (heldout(net, loss_fn, run["best_theta"], train, test, settings)
                          if run["best_theta"] is not None else {"error": "no finite loss"})
    return result


def start_point(data, settings, results) -> dict:
    """The homogeneous start: its fit loss (the gradient fit's first evaluation) and its
    held-out scores."""
    net, loss_fn, train, test = problem(results[0]["k"], data, settings)
    first = results[0]["gradient"]["trace"][0]
    theta = jax.tree.map(np.asarray, start_theta(results[0]["k"]))
    return {"loss": first["loss"], "fit_r": first.get("fc_r"),
            "heldout": heldout(net, loss_fn, theta, train, test, settings),
            "ceiling": nd.noise_ceiling(train, test)}


# ------------------------------------------------------------------ report


def _scores(heldout: dict) -> str:
    if "error" in heldout:
        return f"{heldout['error']} | | "
    t, tr = heldout["test"], heldout["train"]
    return (f"{t['fc_r']:.3f} ({100 * t['fraction_of_ceiling']:.0f} %) | "
            f"{t['mean_fc']:.3f} ({t['empirical_mean_fc']:.3f}), sat. {t['saturation']:.2f} | "
            f"{tr['fc_r']:.3f}")


def _row(run: dict) -> str:
    t = run["time_to_cma_best"]
    reached = ("not reached" if t is None else
               f"{t:.0f} s ({100 * run['fraction_of_cma_time']:.0f} % of CMA-ES's)")
    failed = f", {run['failed']} failed" if run["failed"] else ""
    return (f"| {run['method']} | {run['evaluations']} {run['unit']}{failed} | "
            f"{run['seconds']:.0f} (+{run['overrun']:.0f}; 1st call {run['first_call']:.0f}) | "
            f"{H.num(run['best_loss'], '.4f')} | {H.num(run['fit_r'])} | "
            f"{_scores(run['heldout'])} | {reached} |")


TABLE_HEAD = ("| method | evaluations | seconds (past budget; first call) | best loss | "
              "fit r at best | test-run FC r (of ceiling) | mean FC (test runs'), saturation | "
              "train-run r | time to CMA-ES's best |\n|---|---|---|---|---|---|---|---|---|")


def k_section(r: dict, start: dict) -> list[str]:
    label = {3: "G + input gains along 2 maps (in-strength, FC gradient)",
             10: "G + input gains along 9 maps (in-strength, 8 FC gradients)",
             81: "G + 80 mean-free regional input log-gains"}[r["k"]]
    s = (f"| homogeneous start (G {G0}) | – | – | {H.num(start['loss'], '.4f')} | "
         f"{H.num(start['fit_r'])} | {_scores(start['heldout'])} | – |")
    when = f"Measured {r['date']}." if r.get("date") else ""
    return [f"### k = {r['k']}: {label}", "", when, "", TABLE_HEAD, s, _row(r["gradient"]),
            _row(r["cma"]), ""]


def setup_text(settings, budget) -> list[str]:
    s = settings
    return [
        "## Setup", "",
        f"Embedded HCP data (80 regions, TR 720 ms): fitted on the group FC of runs 1-4 "
        f"(`nd.runs_fc`), scored on runs 5-7. Model `nd.presets.rww_ei_fic(w / max(w), "
        f"lengths, G={G0}, sigma=0.001)`. Loss `nd.FcLoss(target, Heun(remat=Uniform(720)), "
        f"Bold(period=720, variables='S_e'), duration={s['duration']:g}, dt=1, "
        f"metric='1-r+huber', burn_in={s['burn_in']:g}, realisations={s['realisations']})` "
        "with the exact gradient (through the burn-in), float64, one noise key "
        "(`jax.random.key(0)`) for every evaluation of both methods (common random numbers).", "",
        "Parameters, all starting at the homogeneous model: G (the coupling's) and the "
        "log-gains of `nd.InputScaling` on the weights: along the z-scored in-strength and "
        "the training FC's principal gradient (`nd.maps.fc_gradient`) for k = 3; along the "
        "in-strength and the first 8 gradients of the training FC for k = 10 "
        "(`nd.maps.fc_gradient(target, component=1..8)`: diffusion-map components 2-9, "
        "top-10 % rows, cosine affinity, alpha 0.5, each z-scored; **a benchmark "
        "construction**, not a published map set); one mean-free deviation per region "
        "(`nd.RegionalDeviation`, 79 effective degrees of freedom) for k = 81.", "",
        f"Gradient fit: Adam, step {LR_G} on G and {LR_GAIN} on the gains (absolute units), "
        "`jax.value_and_grad` of the loss and the update compiled as one step. CMA-ES "
        f"(pycma, default population, seed 1) from x0 = 0, sigma0 = {CMA_SIGMA0}, in scaled "
        f"coordinates G = {G0} + {CMA_SCALE_G} x0, gains = {CMA_SCALE_GAIN} x1..; one "
        "compiled forward loss per candidate, one candidate at a time (not batched); a "
        f"candidate with a NaN loss or a runtime error is told {FAILED_LOSS:g} and counted "
        f"as failed. Each method gets {budget:g} s of wall-clock per k, compilation "
        "included, and stops at the first step / generation that ends past it.", "",
        f"Held-out: each method's best parameters simulated for {s['heldout_duration']:g} ms "
        f"x {s['heldout_realisations']} realisation(s) with another key (99), the same "
        "burn-in, scored with `nd.score_runs` on the test runs (FC r, its fraction of the "
        "noise ceiling `nd.noise_ceiling(runs 1-4, runs 5-7)`, mean FC, fraction of pairs "
        "above 0.9) and on the training runs. *Time to CMA-ES's best*: when the best-so-far "
        "loss first reaches CMA-ES's final best loss (for CMA-ES itself: when it found it), "
        "and the fraction of CMA-ES's total seconds.", ""]


def _and(items) -> str:
    """``[3, 10, 81]`` as ``"3, 10 and 81"``."""
    words = [str(i) for i in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def report(m: dict) -> str:
    """The report: each k's section, the setup, the machine, the analytic section."""
    if "results" not in m:  # only the analytic section measured so far
        return "\n".join(render_linear(m["linear"], m["linear"]["command"])) + "\n"
    results, start, smoke = m["results"], m["start"], "--smoke" in m["options"]
    lines = [
        "# Regional heterogeneity: gradient fit against CMA-ES", "",
        f"Written by `{C.command('bench_heterogeneity.py', *m['options'])}`"
        + (" (**smoke run**: tiny durations, not a measurement)" if smoke else "")
        + ". The same loss, parameterisation and wall-clock budget for netdyn's gradient "
        f"fit and CMA-ES, at k = {_and([r['k'] for r in results])} fitted parameters: the best "
        "loss reached against time (`heterogeneity.png`, traces in `heterogeneity.json`) and "
        "the FC r of each method's best parameters on test runs neither saw.", "",
        f"Noise ceiling (runs 1-4 against runs 5-7): {start['ceiling']:.3f}.", "",
    ]
    for r in results:
        lines += k_section(r, start)
    lines += setup_text(m["settings"], m["budget"])
    lines += H.machine(m)
    if "linear" in m:
        lines += ["", *render_linear(m["linear"], m["linear"]["command"])]
    return "\n".join(lines) + "\n"


def figure(results, path: Path, ylabel: str = "best loss so far", **axes_set) -> None:
    """Best loss against time, per k (gradient and CMA-ES; ``axes_set``: e.g. a log scale).
    The k sections mark CMA-ES's final best loss."""
    plt = H.pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(results), figsize=(4.5 * len(results), 3.6), squeeze=False)
    for ax, r in zip(axes[0], results, strict=True):
        for name, colour in (("gradient", "C0"), ("cma", "C1")):
            if name not in r:
                continue
            pts = [p for p in r[name]["trace"] if p["best"] is not None
                   and math.isfinite(p["best"])]
            ax.step([p["t"] for p in pts], [p["best"] for p in pts], where="post",
                    color=colour, label=r[name]["method"])
        if not axes_set:
            ax.axhline(r["cma"]["best_loss"], color="C1", ls=":", lw=0.8)
        ax.set(title=f"k = {r['k']}", xlabel="seconds (compilation included)", ylabel=ylabel,
               **axes_set)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _earlier(path: Path, settings: dict, budget: float) -> dict:
    """The results in ``path`` of a run with the same settings and budget (``--merge``)."""
    if not path.is_file():
        raise SystemExit(f"--merge: no earlier results in {path}")
    earlier = H.loads(path.read_text())
    if earlier["settings"] != settings or earlier["budget"] != budget:
        raise SystemExit(f"--merge: {path} was written with other settings or another "
                         f"budget ({earlier['budget']:g} s); rerun every k instead")
    return earlier


# ------------------------------------------------------------------ analytic loss (--linear)
#
# The same problem with ``nd.LinearFcLoss`` (the FC of the model linearised at its stable
# fixed point: noise-free, exact gradients, no simulation) in place of ``nd.FcLoss``:
# netdyn's gradient fit (backtracking Adam, until the loss stops falling) and CMA-ES on
# that loss, each end point then simulated (the full delayed, noisy model) with several
# held-out noise sets and scored on the test runs. ``measure_linear`` measures,
# ``render_linear`` writes the report's "Analytic loss" section from the saved results.

LINEAR_MARKER = "## Analytic loss"
# Adam step sizes (absolute units): G, the w_p deviations, and the gains per k (map
# coefficients of z-scored maps move every region at once: a fifth of the regional step)
LINEAR_LR = {"G": 0.01, "w_p": 0.03, "gain": {10: 0.02, 81: 0.1, 161: 0.1}}
CMA_SCALE_WP = 0.03  # CMA-ES's scaled coordinate of the w_p deviations
LINEAR_FULL = {"ks": [10, 81, 161], "cma_ks": [10, 81], "chunk": 25, "tol": 0.01,
               "max_steps": 400, "cma_budget": 300.0, "cma_scale_gain": 0.5,
               "heldout_sets": 3, "heldout_duration": 288_000.0,
               "heldout_realisations": 4, "burn_in": 57_600.0, "fcd": [83, 3]}
LINEAR_QUICK = {"ks": [10, 81], "cma_ks": [10, 81], "chunk": 3, "tol": 0.01,
                "max_steps": 6, "cma_budget": 15.0, "cma_scale_gain": 0.5,
                "heldout_sets": 2, "heldout_duration": 28_800.0,
                "heldout_realisations": 1, "burn_in": 7_200.0, "fcd": [20, 3]}
BOLD = nd.Bold(period=720.0, variables="S_e")


def linear_problem(k: int, data, s):
    """``(network, analytic loss, simulated held-out loss, train, test)`` for ``k``
    (161: k = 81's network with ``w_p`` a ``nd.RegionalDeviation`` too)."""
    sim = {"duration": s["heldout_duration"], "burn_in": s["burn_in"],
           "realisations": s["heldout_realisations"]}
    net, heldout_loss, train, test = problem(81 if k == 161 else k, data, sim)
    if k == 161:
        wp = nd.RegionalDeviation(net.dynamics.w_p, jnp.zeros(net.graph.weights.weights.shape[0]))
        net = eqx.tree_at(lambda n: n.dynamics.w_p, net, wp)
    loss = nd.LinearFcLoss(nd.runs_fc(train), BOLD, metric="1-r+huber")
    return net, loss, heldout_loss, train, test


def theta_where(k: int):
    """``nd.fit``'s ``where`` for ``k``, and the step-size label of each leaf."""
    if k == 161:
        return (lambda n: (n.coupling.G, gain_leaf(n), n.dynamics.w_p.deviations),
                ["G", "gain", "w_p"])
    return lambda n: (n.coupling.G, gain_leaf(n)), ["G", "gain"]


def theta_of(net, k: int) -> dict:
    where, labels = theta_where(k)
    return {name: np.asarray(v) for name, v in zip(labels, where(net), strict=True)}


def analytic_scores(net, theta, train, test) -> dict:
    """What the analytic FC of ``theta`` says: its r with the test and training runs' FC,
    its mean, the spectral abscissa."""
    iu = np.triu_indices(len(train[0][0]), 1)
    try:
        result = nd.linear_fc(nd.resolve_parameters(with_theta(net, jax.tree.map(
            jnp.asarray, theta))), BOLD)
        fc = np.asarray(result.fc)
    except RUN_ERRORS as e:
        return {"error": type(e).__name__}
    return {"test_r": float(np.corrcoef(fc[iu], nd.runs_fc(test)[iu])[0, 1]),
            "train_r": float(np.corrcoef(fc[iu], nd.runs_fc(train)[iu])[0, 1]),
            "mean_fc": float(fc[iu].mean()), "abscissa": float(result.abscissa),
            "fixed_point_S_e": np.asarray(result.fixed_point)[0]}


def linear_gradient_fit(net, loss, k: int, s: dict, folder: Path) -> dict:
    """``nd.fit`` with ``nd.backtrack`` (Adam, ``LINEAR_LR``) in chunks of ``s["chunk"]``
    steps (resumed from a checkpoint: one compilation), until the best loss fell by less
    than ``s["tol"]`` (relative) over the last chunk, or ``s["max_steps"]``."""
    where, labels = theta_where(k)
    lr = {**LINEAR_LR, "gain": LINEAR_LR["gain"][k]}
    opt = nd.backtrack(optax.multi_transform(
        {name: optax.adam(lr[name]) for name in labels}, labels))
    checkpoint = folder / f"linear_fit_{k}.ckpt"
    checkpoint.unlink(missing_ok=True)
    key, steps = jax.random.key(0), 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        steps += s["chunk"]
        fitted, h = nd.fit(net, loss, opt, where=where, steps=steps, key=key, keep="best",
                           checkpoint=nd.Checkpoint(checkpoint, every=s["chunk"], resume=True))
        best = np.minimum.accumulate(np.where(np.isfinite(h.loss), h.loss, np.inf))
        before = best[-s["chunk"] - 1] if steps > s["chunk"] else best[0]
        print(f"  gradient k = {k}: {steps} steps, {time.perf_counter() - start:6.1f} s, "
              f"best loss {best[-1]:.4f} (load {os.getloadavg()[0]:.1f})", flush=True)
        flat = steps > s["chunk"] and before - best[-1] < s["tol"] * best[-1]
        if flat or steps >= s["max_steps"]:
            break
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    checkpoint.unlink(missing_ok=True)
    bs = h.best_step()
    t = np.cumsum(h.wall_time)
    trace = [{"t": float(ti), "loss": float(li), "best": float(bi)}
             for ti, li, bi in zip(t, h.loss, best, strict=True)]
    return {"method": "gradient (backtracking Adam)", "unit": "steps", "evaluations": steps,
            "seconds": seconds, "cpu_seconds": cpu, "first_call": float(h.wall_time[0]),
            "median_step": float(np.median(h.wall_time[1:])), "best_loss": float(h.loss[bs]),
            "fit_r": float(h.metrics["fc_r"][bs]), "abscissa": float(h.metrics["abscissa"][bs]),
            "rejected": int(np.sum(np.diff(best) == 0)), "best_theta": theta_of(fitted, k),
            "trace": trace, "history": h, "fitted": fitted}


def gradient_check(net, loss, k: int, history, fitted) -> dict:
    """``nd.check_gradient`` at the start along the fit's first step, and at the end
    point along its last accepted step (unit directions, step 1e-3)."""
    where, labels = theta_where(k)
    names = list(history.params)
    out = {}
    rows = np.flatnonzero(np.diff(history.loss) < 0)  # steps that lowered the loss
    for label, model, (a, b) in (("start", net, (0, 1)),
                                 ("end", fitted, (rows[-1], rows[-1] + 1) if len(rows) else
                                  (0, 1))):
        d = [np.asarray(history.params[n][b] - history.params[n][a]) for n in names]
        norm = math.sqrt(sum(float(np.sum(v * v)) for v in d))
        c = nd.check_gradient(loss, model, where, direction=tuple(v / norm for v in d),
                              step=1e-3, key=jax.random.key(0))
        out[label] = {"gradient": c.gradient, "fd": c.finite_difference,
                      "fd_half": c.finite_difference_half,
                      "relative_error": c.relative_error, "agree": bool(c.agree)}
        print(f"  gradient check k = {k} ({label}): {c.gradient:.6g} against "
              f"{c.finite_difference_half:.6g} ({'agree' if c.agree else 'DISAGREE'})",
              flush=True)
    return out


@eqx.filter_jit
def _population(thetas, net, loss):
    """The analytic loss of every candidate, in one ``vmap``."""
    return jax.vmap(lambda th: loss(with_theta(net, th))[0])(thetas)


def linear_cma(net, loss, k: int, s: dict, level: float, cma) -> dict:
    """CMA-ES on the analytic loss, each generation evaluated in one ``vmap`` (one
    candidate at a time where the batch raises), until it reaches ``level`` or
    ``s["cma_budget"]`` seconds."""
    def batch(thetas, trace):
        try:
            values = np.asarray(_population(jax.tree.map(lambda *v: jnp.stack(v), *thetas),
                                            net, loss))
        except RUN_ERRORS:
            values = []
            for th in thetas:
                try:
                    values.append(float(forward(th, net, loss, None)[0]))
                except RUN_ERRORS:
                    values.append(math.nan)
        return [trace.add(v, {}, th) for th, v in zip(thetas, values, strict=True)]

    scales = {"G": CMA_SCALE_G, "gain": s["cma_scale_gain"], "w_p": CMA_SCALE_WP}
    return cma_search(k, scales, s["cma_budget"], batch, cma, level, batched=True)


LEFT = 0.05  # a run left the fixed point: some region's mean S_e this far from S_e*


def heldout_sets(net, heldout_loss, theta, train, test, s: dict, fixed_se=None) -> dict:
    """``theta`` simulated with ``s["heldout_sets"]`` noise sets (keys 10000, 10001, ...),
    each scored on the test runs and the training runs: per set, and mean and sd. With
    ``fixed_se`` (the analytic FC's fixed point, S_e per region): the same runs' S_e
    (averaged over each TR) too, and how many runs left that fixed point (a region's mean
    S_e more than ``LEFT`` from it) and the largest departure."""
    states = heldout_loss.replace(monitor=nd.TemporalAverage(period=720.0, variables="S_e"))
    model = with_theta(net, jax.tree.map(jnp.asarray, theta))
    window, step = s["fcd"]
    sets = []
    for i in range(s["heldout_sets"]):
        t = time.perf_counter()
        key = jax.random.key(10_000 + i)
        x = simulate(heldout_loss, model, key)
        if isinstance(x, dict):
            return x
        sets.append({"test": nd.score_runs(x, test, train=train, fcd_window=window, fcd_step=step),
                     "train": nd.score_runs(x, train), "seconds": time.perf_counter() - t})
        if fixed_se is not None:
            departure = np.max(np.abs(np.asarray(_signals(states, model, key)).mean(axis=1)
                                      - np.asarray(fixed_se)), axis=-1)  # per run
            sets[-1]["departure"] = departure.tolist()
    summary = {}
    for side in ("test", "train"):
        for m in ("fc_r", "fraction_of_ceiling", "mean_fc", "saturation", "fcd_ks"):
            values = [st[side][m] for st in sets if m in st[side]]
            if values:
                summary[f"{side}_{m}"] = [float(np.mean(values)), float(np.std(values))]
    summary["empirical_mean_fc"] = sets[0]["test"]["empirical_mean_fc"]
    if fixed_se is not None:
        departures = np.concatenate([st["departure"] for st in sets])
        summary["left_fixed_point"] = [int(np.sum(departures > LEFT)), int(departures.size)]
        summary["max_departure"] = float(np.max(departures))
    return {"sets": sets, "summary": summary}


def measure_linear(data, s: dict, cma, folder: Path) -> dict:
    """Every fit of the analytic section, its gradient check (k = 81), CMA-ES and the
    held-out simulations."""
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "load_at_start": C.loadavg(), "settings": s, "lr": LINEAR_LR, "results": []}
    net0, _, heldout_loss, train, test = linear_problem(81, data, s)
    theta0 = jax.tree.map(np.asarray, start_theta(81))
    out["ceiling"] = nd.noise_ceiling(train, test)
    print("held-out simulation of the homogeneous start", flush=True)
    analytic = analytic_scores(net0, theta0, train, test)
    out["start"] = {"analytic": analytic,
                    "heldout": heldout_sets(net0, heldout_loss, theta0, train, test, s,
                                            analytic.get("fixed_point_S_e"))}
    for k in s["ks"]:
        net, loss, heldout_loss, train, test = linear_problem(k, data, s)
        print(f"k = {k}: gradient fit (load {C.loadavg()})", flush=True)
        r = {"k": k, "load_before": C.loadavg()}
        grad = linear_gradient_fit(net, loss, k, s, folder)
        r["load_after_fit"] = C.loadavg()
        history, fitted = grad.pop("history"), grad.pop("fitted")
        if k == 81:
            r["gradient_check"] = gradient_check(net, loss, k, history, fitted)
        r["gradient"] = grad
        if k in s["cma_ks"]:
            print(f"k = {k}: CMA-ES (load {C.loadavg()})", flush=True)
            r["cma"] = linear_cma(net, loss, k, s, grad["best_loss"], cma)
            r["load_after_cma"] = C.loadavg()
            level = r["cma"]["best_loss"]
            for run in (grad, r["cma"]):
                run["time_to_gradient_loss"] = time_to(run["trace"], grad["best_loss"])
                run["best_at_gradient_time"] = min(
                    (p["best"] for p in run["trace"] if p["t"] <= grad["seconds"]),
                    default=None)
                run["time_to_cma_loss"] = time_to(run["trace"], level)
        for name, run in ((n, r[n]) for n in ("gradient", "cma") if n in r):
            print(f"k = {k}: held-out simulations of {name}'s end point", flush=True)
            run["analytic"] = analytic_scores(net, run["best_theta"], train, test)
            run["heldout"] = heldout_sets(net, heldout_loss, run["best_theta"], train,
                                          test, s, run["analytic"].get("fixed_point_S_e"))
            run["load_after_heldout"] = C.loadavg()
        out["results"].append(r)
    out["load_at_end"] = C.loadavg()
    return out


def _heldout_row(name: str, analytic: dict, held: dict) -> str:
    if "error" in analytic:
        a = f"{analytic['error']} | –"
    else:
        a = f"{analytic['test_r']:.3f} | {analytic['mean_fc']:.3f}"
    if "error" in held:
        return f"| {name} | {held['error']} | | | | | | | {a} |"
    s = held["summary"]
    left = ("–" if "left_fixed_point" not in s else
            f"{s['left_fixed_point'][0]} of {s['left_fixed_point'][1]} "
            f"({s['max_departure']:.3f})")
    se = analytic.get("fixed_point_S_e")
    a += "" if se is None else f" | {np.min(se):.3f}-{np.max(se):.3f}"
    cells = [H.pm(s.get(key), 2 if key == "test_fraction_of_ceiling" else 3) for key in (
        "test_fc_r", "test_fraction_of_ceiling", "test_mean_fc", "test_saturation",
        "test_fcd_ks", "train_fc_r")]
    return f"| {name} | {' | '.join(cells)} | {left} | {a} |"


def _fit_row(k: int, run: dict) -> list:
    t_grad = run.get("time_to_gradient_loss")
    reach = "–" if "time_to_gradient_loss" not in run else (
        "not reached" if t_grad is None else f"{t_grad:.1f} s")
    cpu = H.num(run.get("cpu_seconds"), ".0f")
    return [k, run["method"], f"{run['evaluations']} {run['unit']}",
            f"{run['seconds']:.1f} ({cpu}; {H.num(run.get('first_call'), '.1f')})",
            f"{run['best_loss']:.4f}", H.num(run.get("best_at_gradient_time"), ".4f"), reach,
            H.num(run["analytic"].get("train_r")), H.num(run["analytic"].get("test_r"))]


def render_linear(lin: dict, command: str) -> list[str]:
    """The "Analytic loss" section of the report, from ``measure_linear``'s results."""
    s = lin["settings"]
    ref = _fit_heterogeneous_reference()
    runs = [(r, name) for r in lin["results"] for name in ("gradient", "cma") if name in r]
    lines = [
        f"{LINEAR_MARKER}: `nd.LinearFcLoss`, fitted without simulation, scored with it", "",
        f"Written by `{command}`; measured {lin['date']}. The same model, split and "
        "parameterisations as above, fitted to the analytic FC of the model linearised at "
        "its stable fixed point (`nd.LinearFcLoss`: Lyapunov equation, linearised Balloon "
        "BOLD, delays ignored, noise-free, exact gradients) instead of simulated BOLD; each "
        "end point then simulated (the nonlinear, delayed model with noise sigma 0.001, as "
        f"above) with {s['heldout_sets']} held-out noise sets of "
        f"{s['heldout_realisations']} x {s['heldout_duration'] / 1000:g} s after a "
        f"{s['burn_in'] / 1000:g} s burn-in, and scored on the test runs 5-7 (mean ± sd "
        f"over the sets). Noise ceiling {lin['ceiling']:.3f}.", "",
        "### Fits", "",
        *H.table(("k", "method", "steps / evaluations", "wall s (CPU s; 1st call)",
                  "final loss", "best loss by the gradient fit's wall time",
                  "time to the gradient fit's final loss", "fit r (analytic, runs 1-4)",
                  "analytic FC r on runs 5-7"), [_fit_row(r["k"], r[n]) for r, n in runs]),
        "", "Load average (1, 5, 15 min) before / after each fit: " + "; ".join(
            f"k = {r['k']}: {r['load_before']} / {r['load_after_fit']}"
            + (f", after CMA-ES {r['load_after_cma']}" if "load_after_cma" in r else "")
            for r in lin["results"]) + ".", ""]
    for r in lin["results"]:
        g = r["gradient"]
        lines.append(f"- k = {r['k']}: the gradient fit's median step {g['median_step']:.3f} s "
                     f"(first call, compilation included, {g['first_call']:.1f} s); "
                     f"{g['rejected']} steps taken back by `nd.backtrack`; spectral abscissa "
                     f"at the end {g['abscissa']:.2e} per ms.")
        if "cma" in r:
            c = r["cma"]
            lines.append(f"- k = {r['k']}: CMA-ES {c['generations']} generations of "
                         f"{c['popsize']}, {c['failed']} failed candidates.")
        for where, c in r.get("gradient_check", {}).items():
            lines.append(
                f"- k = {r['k']}, `nd.check_gradient` at the {where} point along the "
                f"fit's {'first' if where == 'start' else 'last accepted'} step: "
                f"gradient {c['gradient']:.6g}, central differences {c['fd']:.6g} (h "
                f"1e-3) and {c['fd_half']:.6g} (h 5e-4), relative error "
                f"{c['relative_error']:.1e}.")
    lines += ["", "### Held out: the end points simulated", "",
              "| model | test FC r | of ceiling | test mean FC (runs' "
              f"{lin['start']['heldout']['summary']['empirical_mean_fc']:.3f}) | saturation | "
              "test FCD KS | train FC r | runs that left the fixed point (largest "
              "departure) | analytic FC r on runs 5-7 | analytic mean FC | fixed point's "
              "S_e* |", "|---|---|---|---|---|---|---|---|---|---|---|",
              _heldout_row("homogeneous start (G 0.49)", lin["start"]["analytic"],
                           lin["start"]["heldout"]),
              *(_heldout_row(f"k = {r['k']}, {'gradient' if n == 'gradient' else 'CMA-ES'}",
                             r[n]["analytic"], r[n]["heldout"]) for r, n in runs)]
    if ref is not None:
        lines += ["", "For comparison, the input gains fitted on simulated BOLD "
                  "(`benchmarks/fit_heterogeneous.md`, 5 noise sets, its fitted sigma): test "
                  f"FC r {H.pm(ref['test_fc_r'])}, mean FC {H.pm(ref['test_mean_fc'])}, FCD KS "
                  f"{H.pm(ref['test_fcd_ks'])}."]
    lines += [
        "", "### Setup (analytic loss)", "",
        "`nd.LinearFcLoss(runs_fc(runs 1-4), nd.Bold(period=720, variables='S_e'), "
        "metric='1-r+huber')` (level width 0.05, stability barrier beyond a spectral "
        "abscissa of -5e-4 per ms, weight 10). k = 10 and 81 as above; k = 161 adds one "
        "mean-free deviation of the "
        "recurrent excitation `w_p` per region (`nd.RegionalDeviation(1.4, ...)`; the FIC "
        "keeps every region at 3 Hz).", "",
        f"Gradient fit: `nd.fit` with `nd.backtrack(optax.multi_transform(Adam))`, steps "
        f"{LINEAR_LR['G']} on G, {LINEAR_LR['gain'][10]} on the map coefficients (k = 10), "
        f"{LINEAR_LR['gain'][81]} on the regional gains, {LINEAR_LR['w_p']} on the w_p "
        f"deviations, `keep='best'`; run in chunks of {s['chunk']} steps (resumed from a "
        "checkpoint, one compilation) until the best loss fell by less than "
        f"{100 * s['tol']:g} % over the last chunk (at most {s['max_steps']} steps). The "
        "step sizes were chosen from 200-300-step runs: regional gains at 0.05, 0.1 and "
        "0.2 (G at a tenth) reach the same loss by 100 steps (0.05 a little later); map "
        "coefficients at 0.01, 0.02 and 0.05 the same loss by 150 steps, 0.1 has its first "
        "steps taken back.", "",
        f"CMA-ES: pycma, default population, seed 1, sigma0 {CMA_SIGMA0}, from the "
        f"homogeneous start in scaled coordinates (G = 0.49 + {CMA_SCALE_G} x, gains "
        f"{s['cma_scale_gain']} x, w_p {CMA_SCALE_WP} x); each generation's candidates "
        "evaluated in one `jax.vmap` of the analytic loss (one at a time where the batch "
        f"raises); a NaN loss is told {FAILED_LOSS:g}. It stops at the gradient fit's final "
        f"loss or after {s['cma_budget']:g} s. The gains' scale was chosen from 120 s runs "
        "at k = 81 with 0.1, 0.5 and 1.0 (best losses 0.113, 0.099, 0.125; at k = 10, 0.1 "
        "and 0.5 reach the same). Times are wall-clock from the method's start, "
        "compilation included; CPU seconds are this process's.", "",
        f"Held out: keys 10000-{10_000 + s['heldout_sets'] - 1}, `nd.score_runs` on the "
        f"test runs (FC r, fraction of the ceiling, mean FC, saturation: pairs above 0.9, "
        f"FCD KS: {s['fcd'][0]}-TR windows, {s['fcd'][1]}-TR steps) and on the training "
        "runs. *Analytic FC r on runs 5-7*: `nd.linear_fc` of the end point against the "
        "test runs' FC (what the fit believes). *Runs that left the fixed point*: the same "
        "runs (same keys) with S_e averaged over each TR (`nd.TemporalAverage`): those in "
        f"which some region's mean S_e over the run lies more than {LEFT} from the fixed "
        "point S_e* that the analytic FC linearises at, and the largest such departure. "
        "*Fixed point's S_e**: its range over regions (the FIC's balanced state holds every "
        "region at 0.161, 3 Hz).", "", "### Machine (analytic loss)", "",
        f"- CPUs the process could use: {lin.get('cpus', '?')} (`taskset`: on this shared "
        "machine, with the 1-minute load above 2, the analytic loss's value and gradient "
        "took 0.10 s (median, 40 calls; at most 0.13 s) on one pinned core against 0.18-0.25 "
        "s median with stalls of about 4 s in one call of ten on both cores; a held-out "
        "simulation 5.1 s against 7.9 s)",
        f"- load average (1, 5, 15 min) at start: {lin['load_at_start']}, at end: "
        f"{lin['load_at_end']} (2 CPUs shared with other jobs)"]
    return lines


def _fit_heterogeneous_reference() -> dict | None:
    path = C.RESULTS / "fit_heterogeneous.json"
    try:
        return json.loads(path.read_text())["fits"]["input gains"]["scores"]["summary"]
    except (OSError, KeyError, ValueError):
        return None


def measure_linear_section(args, cma, saved: dict) -> dict:
    """``--linear``: the analytic section measured, the other measurements kept."""
    s = LINEAR_QUICK if args.smoke else LINEAR_FULL
    out = H.out_path(args, "heterogeneity")
    lin = measure_linear(nd.datasets.load("hcp"), s, cma, out.parent)
    cpus = sorted(os.sched_getaffinity(0))
    pinned = f"taskset -c {','.join(map(str, cpus))} " if len(cpus) < os.cpu_count() else ""
    lin["cpus"] = f"{len(cpus)} of {os.cpu_count()}"
    lin["command"] = pinned + C.command("bench_heterogeneity.py", "--linear",
                                        "--smoke" if args.smoke else "")
    lin["machine"] = C.machine_info()
    return {**saved, "linear": H.plain(lin, null=True)}


def measure(args) -> dict:
    """Both methods at each k and the held-out scores (``--merge``: with the other k's
    saved results); or, with ``--linear``, the analytic section."""
    try:
        import cma
    except ImportError:
        raise SystemExit("bench_heterogeneity needs CMA-ES: pip install cma") from None
    path = H.out_path(args, "heterogeneity").with_suffix(".json")
    saved = H.loads(path.read_text()) if path.is_file() else {}
    if args.linear:
        return measure_linear_section(args, cma, saved)
    settings = QUICK if args.smoke else FULL
    budget = settings["budget"] if args.budget is None else args.budget
    data = nd.datasets.load("hcp")
    earlier = _earlier(path, settings, budget) if args.merge else None
    results = [run_k(k, data, settings, budget, cma) for k in args.ks]
    if earlier is not None:
        old = [r for r in earlier["results"] if r["k"] not in args.ks]
        for r in old:
            r.setdefault("date", earlier["machine"].get("date", "an earlier run"))
        results = sorted(results + old, key=lambda r: r["k"])
        start = earlier["start"]
    else:
        print("held-out simulation of the homogeneous start", flush=True)
        start = start_point(data, settings, results)
    options = [f"--ks {' '.join(map(str, args.ks))}" if args.ks != [3, 10, 81] else "",
               f"--budget {args.budget:g}" if args.budget is not None else "",
               "--smoke" if args.smoke else "", "--merge" if args.merge else ""]
    return H.plain({"settings": settings, "budget": budget, "options": options, "start": start,
                    "results": results, **({"linear": saved["linear"]} if "linear" in saved
                                           else {})}, null=True)


def figures(m: dict, out: Path) -> None:
    """heterogeneity.png (the k sections) and heterogeneity_linear.png (the analytic one)."""
    if "results" in m:
        figure(m["results"], out.with_suffix(".png"))
    if "linear" in m:
        figure(m["linear"]["results"], out.with_name(out.stem + "_linear.png"),
               "best analytic loss so far", yscale="log")


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--ks", type=int, nargs="+", default=[3, 10, 81], choices=[3, 10, 81])
    p.add_argument("--budget", type=float, default=None,
                   help="seconds per method and k (default 600; 60 with --smoke)")
    p.add_argument("--merge", action="store_true",
                   help="keep the other k's results in the existing heterogeneity.json")
    p.add_argument("--linear", action="store_true",
                   help="only the analytic-loss section (nd.LinearFcLoss): its fits, CMA-ES "
                   "and held-out simulations; the other measurements are kept")


if __name__ == "__main__":
    H.main(measure, report, doc=__doc__, name="heterogeneity", options=options,
           figure=figures)
