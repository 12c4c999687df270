"""Regional heterogeneity: netdyn's gradient fit side by side with CMA-ES.
Writes benchmarks/heterogeneity.md (and .json, .png).

The same loss (``nd.FcLoss`` on the embedded HCP runs 1-4, ``"1-r+huber"``, one noise key
for every evaluation), parameterisation and wall-clock budget for both methods: the
coupling G of ``nd.presets.rww_ei_fic`` (G 0.49, its best homogeneous point) plus input
gains (``nd.InputScaling``) along 2 maps (k = 3), 9 maps (k = 10) or one mean-free
log-gain per region (k = 81). Measured: the best loss against time (compilation included)
and the FC r on the test runs 5-7 of each method's best parameters, simulated anew.
CMA-ES evaluates each generation as one batch (``jax.vmap``: candidates x realisations run
as one batch-last loop); each method stops at the budget or once its best loss stalls
(``--stall``, ``--stall-tol``, ``--stall-rounds``).

    python scripts/benchmarks/bench_heterogeneity.py --ks 10 81 --budget 1200  # <= ~90 min
    python scripts/benchmarks/bench_heterogeneity.py --smoke --ks 10 --budget 40
    python scripts/benchmarks/bench_heterogeneity.py --ks 10 --budget 360 --merge
    python scripts/benchmarks/bench_heterogeneity.py --from-json benchmarks/heterogeneity.json
    python scripts/benchmarks/bench_heterogeneity.py \
        --add-analytic benchmarks/heterogeneity_linear.json

``--merge`` keeps the other k's results (same settings and budget). ``--add-analytic``
measures nothing else: it scores the end points of the analytic fits
(``scripts/studies/bench_heterogeneity_linear.py``'s JSON) on this benchmark's simulated
loss and held-out runs, as a third row per k. The default: 3 k x 2 methods x ``--budget``
(600 s) plus 7 held-out simulations. Needs ``pip install cma``.
"""

import math
import re
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
FULL = {"duration": 43_200.0, "burn_in": 57_600.0, "realisations": 4, "balloon_step": 10.0,
        "heldout_duration": 288_000.0, "heldout_realisations": 4, "budget": 600.0,
        "stages": "save"}
QUICK = {"duration": 7_200.0, "burn_in": 7_200.0, "realisations": 1, "balloon_step": 10.0,
         "heldout_duration": 14_400.0, "heldout_realisations": 1, "budget": 60.0,
         "stages": "save"}
# A method stops once its best loss gains < tol in that long and in that many of its steps /
# generations: CMA-ES plateaus for 10-15 generations (~300 s at k = 10) and then moves on.
STALL, STALL_TOL, STALL_ROUNDS = 300.0, 1e-3, 30


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
    # The hemodynamics integrated every ``balloon_step`` ms (None: every step, as before)
    bold = nd.Bold(period=720.0, variables="S_e",
                   integration_step=settings.get("balloon_step"))
    # Results written before "stages" was a setting kept the default, "recompute"
    remat = nd.Uniform(720, stages=settings.get("stages", "recompute"))
    loss_fn = nd.FcLoss(target, nd.Heun(remat=remat), bold,
                        duration=settings["duration"],
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

    def __init__(self, budget: float, stall: tuple | None = None, round_size: int = 1):
        self.budget, self.start, self.stall = budget, time.perf_counter(), stall
        self.round_size = round_size  # evaluations per step / generation
        self.points, self.failed = [], 0
        self.best, self.best_theta, self.best_metrics = math.inf, None, {}

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def over(self) -> bool:
        return self.elapsed() > self.budget

    def stalled(self) -> bool:
        """The best loss gained less than ``stall = (tol, seconds, rounds)``'s ``tol`` in
        the last ``seconds`` and the last ``rounds`` steps / generations (``False`` without
        a stall rule, or before that long has passed)."""
        if self.stall is None or not self.points:
            return False
        tol, seconds, rounds = self.stall
        cut = len(self.points) - rounds * self.round_size
        before = [p["best"] for p in self.points[:max(cut, 0)]
                  if p["t"] <= self.elapsed() - seconds]
        return bool(before) and before[-1] - self.best < tol

    def done(self) -> bool:
        return self.over() or self.stalled()

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
                "best_theta": self.best_theta, "trace": self.points,
                # else: a non-finite loss or a failed run ended it (the caller may say more)
                "stopped": "stalled" if self.stalled() else "budget" if self.over() else
                "failed"}


def fit_step():
    """``(optimiser, step)`` of the gradient fit: Adam (G at ``LR_G``, gains at
    ``LR_GAIN``) and ``step(theta, state, net, loss_fn, key) -> (loss, metrics, theta,
    state)``, the exact gradient and the update compiled as one program."""
    opt = optax.multi_transform({"G": optax.adam(LR_G), "gain": optax.adam(LR_GAIN)},
                                {"G": "G", "gain": "gain"})

    @eqx.filter_jit
    def step(theta, state, net, loss_fn, key):
        grad_fn = jax.value_and_grad(objective, has_aux=True)
        (loss, metrics), grads = grad_fn(theta, net, loss_fn, key)
        updates, state = opt.update(grads, state, theta)
        return loss, metrics, optax.apply_updates(theta, updates), state

    return opt, step


def gradient_fit(net, loss_fn, key, k: int, budget: float, stall=None) -> dict:
    """Adam (G at ``LR_G``, gains at ``LR_GAIN``) on the exact gradient, one compiled
    step, until the first step that ends past ``budget``, the best loss stalls (``stall``:
    ``Trace``'s rule) or a non-finite loss."""
    opt, step = fit_step()
    theta = start_theta(k)
    state = opt.init(theta)
    trace = Trace(budget, stall)
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
        if not math.isfinite(loss) or trace.done():
            break
    return trace.summary("gradient (Adam)", "steps")


def cma_search(k: int, scales: dict, budget: float, evaluate, cma, level: float = -math.inf,
               batched: bool = False, stall=None) -> dict:
    """CMA-ES (pycma, default population, seed 1) from ``start_theta(k)`` in scaled
    coordinates (each parameter its start + ``scales[name]`` x), until the first generation
    that ends past ``budget``, reaches ``level``, stalls (``stall``: ``Trace``'s rule) or
    meets pycma's own stopping criteria. ``evaluate(thetas, trace)`` adds each candidate's
    loss to ``trace`` and returns the losses; a NaN is told ``FAILED_LOSS``."""
    start = start_theta(k)
    ends = np.cumsum([np.size(v) for v in start.values()])

    def theta(x):
        parts = np.split(np.asarray(x, float), ends[:-1])
        return {name: jnp.asarray((np.asarray(v) + scales[name] * part).reshape(np.shape(v)),
                                  dtype=float)
                for (name, v), part in zip(start.items(), parts, strict=True)}

    es = cma.CMAEvolutionStrategy(np.zeros(ends[-1]), CMA_SIGMA0, {"seed": 1, "verbose": -9})
    trace, cpu = Trace(budget, stall, es.popsize), time.process_time()
    while not trace.done() and trace.best > level and not es.stop():
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
    if trace.best <= level:
        out["stopped"] = "reached the level"
    elif es.stop():
        out["stopped"] = "pycma: " + ", ".join(es.stop())
    return out


batch_forward = eqx.filter_jit(jax.vmap(objective, in_axes=(0, None, None, None)))


def cma_fit(net, loss_fn, key, k: int, budget: float, cma, stall=None) -> dict:
    """CMA-ES on the simulated loss, each generation's candidates evaluated as one batch
    (``jax.vmap`` of the loss; one at a time where the batch raises a runtime error)."""
    def one_by_one(thetas, trace):
        values = []
        for theta in thetas:
            try:
                values.append(trace.add(*forward(theta, net, loss_fn, key), theta))
            except RUN_ERRORS:
                values.append(trace.add(None, {}, theta))
        return values

    def population(thetas, trace):
        try:
            losses, metrics = batch_forward(jax.tree.map(lambda *x: jnp.stack(x), *thetas),
                                            net, loss_fn, key)
        except RUN_ERRORS:
            return one_by_one(thetas, trace)
        return [trace.add(losses[i], jax.tree.map(lambda m, i=i: m[i], metrics), theta)
                for i, theta in enumerate(thetas)]

    layout = population_layout(net, loss_fn, key, k)
    scales = {"G": CMA_SCALE_G, "gain": CMA_SCALE_GAIN}
    out = cma_search(k, scales, budget, population, cma, batched=True, stall=stall)
    out["method"] = out["method"].replace(", batched)", f", batched: {layout})")
    return {**out, "layout": layout}


def population_layout(net, loss_fn, key, k: int) -> str:
    """How a generation of pycma's default population runs: ``"batch-last"`` when its
    traced program holds the batch-last loop's ring buffer (``[2 rows, nodes, k,
    candidates x realisations]``), else ``"plain vmap"``."""
    n = popsize(k)
    thetas = jax.tree.map(lambda x: jnp.stack([x] * n), start_theta(k))
    batch = jax.vmap(objective, in_axes=(0, None, None, None))
    jaxpr = eqx.filter_make_jaxpr(batch)(thetas, net, loss_fn, key)[0]
    batch_last = has_ring(jaxpr, loss_fn.target.shape[0], n * loss_fn.realisations)
    return "batch-last" if batch_last else "plain vmap"


def popsize(k: int) -> int:
    """pycma's default population for ``k`` parameters, ``4 + floor(3 ln k)``."""
    return 4 + math.floor(3 * math.log(k))


def has_ring(jaxpr, nodes: int, members: int) -> bool:
    """Whether the traced program holds the batch-last loop's ring buffer, ``[2 rows,
    nodes, k, members]``: the batch ran batch-last."""
    return re.search(rf"\[\d+,{nodes},\d+,{members}\]", str(jaxpr)) is not None


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
    """Adds the common target (the higher of the two methods' best losses: the lowest
    both reached) to ``result``, and each method's time to reach it."""
    bests = [result[m]["best_loss"] for m in ("gradient", "cma")]
    target = max(bests) if all(math.isfinite(b) for b in bests) else math.nan
    result["target"] = target
    for name in ("gradient", "cma"):
        run = result[name]
        run["time_to_target"] = time_to(run["trace"], target) if math.isfinite(target) else None


def run_k(k: int, data, settings, budget: float, cma, stall) -> dict:
    net, loss_fn, train, test = problem(k, data, settings)
    key = jax.random.key(0)  # common random numbers: every evaluation of both methods
    print(f"k = {k}: gradient fit ({budget:g} s)", flush=True)
    result = {"k": k, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "gradient": gradient_fit(net, loss_fn, key, k, budget, stall)}
    print(f"k = {k}: CMA-ES ({budget:g} s)", flush=True)
    result["cma"] = cma_fit(net, loss_fn, key, k, budget, cma, stall)
    compare(result)
    for name in ("gradient", "cma"):
        run = result[name]
        print(f"k = {k}: held-out simulation of {name}'s best", flush=True)
        run["heldout"] = (heldout(net, loss_fn, run["best_theta"], train, test, settings)
                          if run["best_theta"] is not None else {"error": "no finite loss"})
    return result


def add_analytic(m: dict, path: Path, data) -> None:
    """Adds to each k of ``m`` the end point of the analytic gradient fit saved in ``path``
    (``bench_heterogeneity_linear.py``'s JSON, same problem and parameterisation): its loss
    on this benchmark's simulated loss (the same key), its held-out scores, and its fit's
    time."""
    lin = H.loads(path.read_text())
    fits = {r["k"]: r["gradient"] for r in lin["results"] if "gradient" in r}
    settings = m["settings"]
    for r in m["results"]:
        fit = fits.get(r["k"])
        if fit is None or fit.get("best_theta") is None:
            continue
        net, loss_fn, train, test = problem(r["k"], data, settings)
        theta = {name: jnp.asarray(v, dtype=float) for name, v in fit["best_theta"].items()}
        print(f"k = {r['k']}: the analytic fit's end point on the simulated loss", flush=True)
        loss, metrics = forward(theta, net, loss_fn, jax.random.key(0))
        loss, target = float(loss), r.get("target", math.nan)
        r["analytic"] = {
            "method": "analytic fit (`nd.LinearFcLoss`, gradient), its end point",
            "unit": "steps", "evaluations": fit["evaluations"], "seconds": fit["seconds"],
            "overrun": 0.0, "first_call": fit["first_call"], "failed": 0,
            "stopped": "its tolerance", "best_loss": loss, "fit_r": float(metrics["fc_r"]),
            "time_to_target": (fit["seconds"] if math.isfinite(target) and loss <= target
                               else None),
            "heldout": heldout(net, loss_fn, theta, train, test, settings)}
    m["analytic_added"] = {"from": path.name,
                           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "measured": lin.get("date")}


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


def _method(run: dict) -> str:
    """``run``'s method; a population written before its layout was recorded ran the plain
    ``vmap``."""
    return run["method"].replace(", batched)", ", batched: plain vmap)")


def _row(run: dict) -> str:
    t = run.get("time_to_target")
    run = {**run, "method": _method(run)}
    reached = "not reached" if t is None else f"{t:.0f} s"
    failed = f", {run['failed']} failed" if run["failed"] else ""
    return (f"| {run['method']} | {run['evaluations']} {run['unit']}{failed} | "
            f"{run['seconds']:.0f} (+{run['overrun']:.0f}; 1st call {run['first_call']:.0f}) | "
            f"{run.get('stopped', 'budget')} | "
            f"{H.num(run['best_loss'], '.4f')} | {H.num(run['fit_r'])} | "
            f"{_scores(run['heldout'])} | {reached} |")


TABLE_HEAD = ("| method | evaluations | seconds (past budget; first call) | stopped | best loss | "
              "fit r at best | test-run FC r (of ceiling) | mean FC (test runs'), saturation | "
              "train-run r | time to the common target |\n"
              "|---|---|---|---|---|---|---|---|---|---|")


def verdict(r: dict) -> str:
    """Which of the two methods won at this k, by how much, and whether they converged."""
    runs = [r["gradient"], r["cma"]]
    if not all(math.isfinite(x["best_loss"]) for x in runs):
        return ""
    win, lose = sorted(runs, key=lambda x: x["best_loss"])

    def name(run):  # the method without its details: "CMA-ES", "gradient"
        return run["method"].split(" (")[0]

    t = win.get("time_to_target")
    reached = ("" if t is None else f"; it reached the other's best in {t:.0f} s "
               f"({100 * t / lose['seconds']:.0f} % of the other's time)")
    tests = [x["heldout"].get("test", {}).get("fc_r") for x in (win, lose)]
    held = ("" if None in tests else f" Held out, test-run FC r {tests[0]:.3f} against "
            f"{tests[1]:.3f}.")
    stalled = [name(x) for x in runs if x.get("stopped") == "stalled"]
    converged = (" Neither stalled within the budget: both were still improving." if not
                 stalled else f" Stalled (converged by the rule): {', '.join(stalled)}.")
    return (f"**{name(win)}** reached the lower loss: {win['best_loss']:.4f} against "
            f"{lose['best_loss']:.4f} ({100 * (1 - win['best_loss'] / lose['best_loss']):.0f} % "
            f"lower){reached}.{held}{converged}")


def k_section(r: dict, start: dict) -> list[str]:
    label = {3: "G + input gains along 2 maps (in-strength, FC gradient)",
             10: "G + input gains along 9 maps (in-strength, 8 FC gradients)",
             81: "G + 80 mean-free regional input log-gains"}[r["k"]]
    s = (f"| homogeneous start (G {G0}) | – | – | – | {H.num(start['loss'], '.4f')} | "
         f"{H.num(start['fit_r'])} | {_scores(start['heldout'])} | – |")
    when = f"Measured {r['date']}." if r.get("date") else ""
    target = (f"Common target: loss {H.num(r['target'], '.4f')} (the higher of the two best "
              "losses: the lowest both reached)." if "target" in r else "")
    rows = [_row(r[name]) for name in ("gradient", "cma", "analytic") if name in r]
    # "reading": what the figures alone do not say, written into the JSON after the run
    reading = [f"**Reading.** {r['reading']}", ""] if r.get("reading") else []
    return [f"### k = {r['k']}: {label}", "", when, target, "", TABLE_HEAD, s, *rows, "",
            verdict(r), "", *reading]


def setup_text(settings, budget) -> list[str]:
    s = settings
    step = s.get("balloon_step")
    stages = s.get("stages", "recompute")
    remat = "Uniform(720)" if stages == "recompute" else f"Uniform(720, stages='{stages}')"
    bold = ("Bold(period=720, variables='S_e'" + ("" if step is None else
            f", integration_step={step:g}") + ")")
    tol, seconds, *rounds = s.get("stall", [None, 0])
    window = f"{seconds:g} s" + (f" and its last {rounds[0]} steps / generations"
                                 if rounds and rounds[0] else "")
    stops = ("at the first step / generation that ends past it" if not seconds else
             f"at the first step / generation that ends past it, or once its best loss has "
             f"gained less than {tol:g} in the last {window} (*stalled*), or (CMA-ES) at "
             "pycma's own stopping criteria")
    return [
        "## Setup", "",
        f"Embedded HCP data (80 regions, TR 720 ms): fitted on the group FC of runs 1-4 "
        f"(`nd.runs_fc`), scored on runs 5-7. Model `nd.presets.rww_ei_fic(w / max(w), "
        f"lengths, G={G0}, sigma=0.001)`. Loss `nd.FcLoss(target, Heun(remat={remat}), "
        f"{bold}, duration={s['duration']:g}, dt=1, "
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
        f"coordinates G = {G0} + {CMA_SCALE_G} x0, gains = {CMA_SCALE_GAIN} x1..; each "
        "generation's candidates evaluated as one batch (`jax.vmap` of the compiled loss: "
        "the candidates x realisations run as one batched simulation: the batch-last loop "
        "or the plain `vmap`, as each CMA-ES row says; `population.md` measures what the "
        "layout costs a generation); a "
        f"candidate with a NaN loss or a runtime error is told {FAILED_LOSS:g} and counted "
        f"as failed. Each method gets {budget:g} s of wall-clock per k, compilation "
        f"included, and stops {stops}.", "",
        f"Held-out: each method's best parameters simulated for {s['heldout_duration']:g} ms "
        f"x {s['heldout_realisations']} realisation(s) with another key (99), the same "
        "burn-in, scored with `nd.score_runs` on the test runs (FC r, its fraction of the "
        "noise ceiling `nd.noise_ceiling(runs 1-4, runs 5-7)`, mean FC, fraction of pairs "
        "above 0.9) and on the training runs. *Time to the common target*: when the "
        "best-so-far loss first reaches the higher of the two methods' best losses (the "
        "lowest loss both reached), compilation included.", ""]


def _and(items) -> str:
    """``[3, 10, 81]`` as ``"3, 10 and 81"``."""
    words = [str(i) for i in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def report(m: dict) -> str:
    """The report: each k's section, the setup, the machine."""
    results, start, smoke = m["results"], m["start"], "--smoke" in m["options"]
    lines = [
        "# Regional heterogeneity: gradient fit against CMA-ES", "",
        f"Written by `{C.command('bench_heterogeneity.py', *m['options'])}`"
        + (" (**smoke run**: tiny durations, not a measurement)" if smoke else "")
        + ". The same loss, parameterisation and wall-clock budget for netdyn's gradient "
        f"fit and CMA-ES, at k = {_and([r['k'] for r in results])} fitted parameters: the best "
        "loss reached against time (`heterogeneity.png`, traces in `heterogeneity.json`) and "
        "the FC r of each method's best parameters on test runs neither saw. The same "
        "problem on the analytic loss: [`heterogeneity_linear.md`](heterogeneity_linear.md).",
        "",
        f"Noise ceiling (runs 1-4 against runs 5-7): {start['ceiling']:.3f}.", "",
    ]
    added = m.get("analytic_added")
    if added:
        lines += [f"The *analytic fit* rows (added {added['date']} by `--add-analytic "
                  f"benchmarks/{added['from']}`): the end point of the gradient fit on the "
                  "analytic FC (`nd.LinearFcLoss`, no simulation; "
                  "[`heterogeneity_linear.md`](heterogeneity_linear.md), measured "
                  f"{added['measured']}), scored on this benchmark's simulated loss (the same "
                  "key) and held out as the other rows; its seconds are the analytic fit's, "
                  "its time to the common target that whole fit's where its end point "
                  "reaches it.", ""]
    for r in results:
        lines += k_section(r, start)
    lines += setup_text(m["settings"], m["budget"])
    lines += H.machine(m)
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
                    color=colour, label=_method(r[name]))
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


def measure(args) -> dict:
    """Both methods at each k and the held-out scores (``--merge``: with the other k's
    saved results)."""
    try:
        import cma
    except ImportError:
        raise SystemExit("bench_heterogeneity needs CMA-ES: pip install cma") from None
    path = H.out_path(args, "heterogeneity").with_suffix(".json")
    settings = QUICK if args.smoke else FULL
    budget = settings["budget"] if args.budget is None else args.budget
    data = nd.datasets.load("hcp")
    if args.add_analytic is not None:
        m = H.loads(path.read_text())
        add_analytic(m, args.add_analytic, data)
        return m
    rule = [args.stall_tol, args.stall, args.stall_rounds]
    earlier = _earlier(path, {**settings, "stall": rule}, budget) if args.merge else None
    settings = {**settings, "stall": rule}
    stall = tuple(rule) if args.stall > 0 else None
    results = [run_k(k, data, settings, budget, cma, stall) for k in args.ks]
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
               f"--stall {args.stall:g}" if args.stall != STALL else "",
               f"--stall-tol {args.stall_tol:g}" if args.stall_tol != STALL_TOL else "",
               f"--stall-rounds {args.stall_rounds}" if args.stall_rounds != STALL_ROUNDS
               else "",
               "--smoke" if args.smoke else "", "--merge" if args.merge else ""]
    return H.plain({"settings": settings, "budget": budget, "options": options, "start": start,
                    "results": results}, null=True)


def figures(m: dict, out: Path) -> None:
    """heterogeneity.png: the best loss against time, per k."""
    figure(m["results"], out.with_suffix(".png"))


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--ks", type=int, nargs="+", default=[3, 10, 81], choices=[3, 10, 81])
    p.add_argument("--budget", type=float, default=None,
                   help="seconds per method and k (default 600; 60 with --smoke)")
    p.add_argument("--stall", type=float, default=STALL,
                   help="a method stops once its best loss has gained less than --stall-tol "
                        f"in this many seconds (default {STALL:g}; 0: run to the budget)")
    p.add_argument("--stall-tol", type=float, default=STALL_TOL,
                   help=f"see --stall (default {STALL_TOL:g})")
    p.add_argument("--stall-rounds", type=int, default=STALL_ROUNDS,
                   help="a stall also needs the loss flat for this many steps / generations "
                        f"(default {STALL_ROUNDS}; 0: seconds alone)")
    p.add_argument("--add-analytic", type=Path, default=None, metavar="JSON",
                   help="measure nothing new but the end points of the analytic fits in JSON "
                        "(bench_heterogeneity_linear.py's), added to heterogeneity.json")
    p.add_argument("--merge", action="store_true",
                   help="keep the other k's results in the existing heterogeneity.json")


if __name__ == "__main__":
    H.main(measure, report, doc=__doc__, name="heterogeneity", options=options,
           figure=figures)
