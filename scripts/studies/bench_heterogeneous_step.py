"""What one simulated step of the heterogeneous fit costs, with the burn-in paid once per fit
(``nd.Chained``) against the exact gradient through the full burn-in, and whether each
gradient agrees with finite differences along the fit's own steps. Writes
benchmarks/heterogeneous_step.md (and .json).

Issue 37. The problems of ``scripts/benchmarks/bench_heterogeneity.py`` (rww-ei-fic with
FIC on the embedded HCP data, G 0.49, input gains along 9 maps for k = 10 or one mean-free
log-gain per region for k = 81; ``nd.FcLoss`` of 4 realisations x 43.2 s after a 57.6 s
burn-in, ``"1-r+huber"`` against runs 1-4). In one process, interleaved, per k:

1. **Time**: today's loss (BOLD integrated every 1 ms step): forward, value and gradient
   (exact: through the burn-in from the initial state); the same loss with the
   hemodynamics integrated every ``--balloon-step`` ms (``nd.Bold(integration_step=...)``,
   as the presets now do), and ``nd.Chained(loss, burn_in=B)``'s forward, value and
   gradient from a chain's state (B = 14.4 s by default), best of ``--repeats`` rounds.
2. **Direction**: the fit's own first ``--steps`` Adam steps (the benchmark's step sizes)
   taken with each gradient; along each step's update ``u``, the gradient's directional
   derivative ``g . u`` against central differences of the same function (the same noise
   key, and for the chained loss the same chain state), ``(L(theta + h u) - L(theta - h u))
   / 2h`` at ``h = --fd-h`` (where the two differ by more than ``REFINE``, again at h / 3,
   h / 10 and h / 30: truncation error shrinks as h^2); and the chained and the exact
   directional derivatives side by side at the chained fit's points.

    python scripts/studies/bench_heterogeneous_step.py           # 15-40 min on 2 cores
    python scripts/studies/bench_heterogeneous_step.py --smoke   # tiny runs, minutes
"""

import time

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common  # noqa: F401 (first: this checkout's netdyn)
import _harness as H
import bench_heterogeneity as BH
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import netdyn as nd

jax.config.update("jax_enable_x64", True)


def _adam():
    """The benchmark's optimiser: Adam, its step on G and on the gains."""
    return optax.multi_transform({"G": optax.adam(BH.LR_G), "gain": optax.adam(BH.LR_GAIN)},
                                 {"G": "G", "gain": "gain"})


def _dot(g, u) -> float:
    return float(sum(jnp.vdot(g[n], u[n]) for n in ("G", "gain")))


def _shift(theta, u, h):
    return {n: theta[n] + h * u[n] for n in ("G", "gain")}


def _timed(f, *a):
    t = time.perf_counter()
    out = jax.block_until_ready(f(*a))
    return out, time.perf_counter() - t


def _functions(net, today, loss, chained):
    def value(loss):
        return lambda theta, key: loss(BH.with_theta(net, theta), key)[0]

    def chained_value(theta, key, carry):
        return chained.continue_from(BH.with_theta(net, theta), key, carry)[0]

    return {"today forward": jax.jit(value(today)),
            "today exact": jax.jit(jax.value_and_grad(value(today))),
            "forward": jax.jit(value(loss)),
            "exact": jax.jit(jax.value_and_grad(value(loss))),
            "chained forward": jax.jit(chained_value),
            "chained": jax.jit(jax.value_and_grad(chained_value)),
            "advance": eqx.filter_jit(lambda th, k, s: chained.continue_from(
                BH.with_theta(net, th), k, s)[2]),
            "start": eqx.filter_jit(chained.start)}


def _times(f, theta, carry, repeats: int) -> dict:
    key = jax.random.key(0)
    cases = {"today forward": (theta, key), "today exact": (theta, key),
             "forward": (theta, key), "exact": (theta, key),
             "chained forward": (theta, key, carry), "chained": (theta, key, carry)}
    compile_s = {n: _timed(f[n], *a)[1] for n, a in cases.items()}
    times = {n: [] for n in cases}
    for _ in range(repeats):
        for n, a in cases.items():
            times[n].append(_timed(f[n], *a)[1])
        print({n: round(t[-1], 1) for n, t in times.items()}, flush=True)
    return {"seconds": times, "first_call": compile_s}


# Where the gradient and central differences at h differ by more than this (relative),
# the differences are repeated at h / 3, h / 10 and h / 30: a correct gradient's gap then
# shrinks as h^2 (the truncation error of central differences), a wrong one's does not.
REFINE = 1e-3


def _central(one, theta, u, h: float, args) -> float:
    """``(L(theta + h u) - L(theta - h u)) / 2h`` of the scalar function ``one``."""
    up, down = (float(one(_shift(theta, u, s), *args)) for s in (h, -h))
    return (up - down) / (2 * h)


def _walk(f, theta, carry, steps: int, h: float, chained: bool) -> list[dict]:
    """The fit's first ``steps`` Adam steps with the exact or the chained gradient; at each,
    the directional derivative along its update against central differences."""
    opt = _adam()
    state = opt.init(theta)
    rows = []
    for i in range(steps):
        key = jax.random.key(100 + i)
        if chained:
            (v, g), _ = _timed(f["chained"], theta, key, carry)
            args = (key, carry)
            one = f["chained forward"]
        else:
            (v, g), _ = _timed(f["exact"], theta, key)
            args = (key,)
            one = f["forward"]
        u, state = opt.update(g, state, theta)
        fd = _central(one, theta, u, h, args)
        row = {"step": i, "loss": float(v), "G": float(theta["G"]), "g_dot_u": _dot(g, u),
               "fd": fd}
        if abs(row["g_dot_u"] - fd) > REFINE * abs(fd):  # truncation error, or a wrong gradient?
            row["fd_smaller"] = [[h / d, _central(one, theta, u, h / d, args)]
                                 for d in (3, 10, 30)]
        if chained:  # the exact gradient at the same point, with the same step's key
            (_, ge), _ = _timed(f["exact"], theta, key)
            row["exact_g_dot_u"] = _dot(ge, u)
            carry = f["advance"](theta, key, carry)
        rows.append(row)
        print(("chained" if chained else "exact"), row, flush=True)
        theta = optax.apply_updates(theta, u)
    return rows


def _one_k(k: int, data, args) -> dict:
    settings = {**BH.FULL, "duration": args.duration, "burn_in": args.burn_in,
                "realisations": args.realisations, "balloon_step": None}  # today's: every step
    net, today, _, _ = BH.problem(k, data, settings)
    loss = today.replace(monitor=nd.Bold(period=today.monitor.period, variables="S_e",
                                         integration_step=args.balloon_step))
    chained = nd.Chained(loss, burn_in=args.chain_burn_in * 1000.0)
    f = _functions(net, today, loss, chained)
    theta = BH.start_theta(k)
    carry = f["start"](BH.with_theta(net, theta), jax.random.key(7))
    out = _times(f, theta, carry, args.repeats)
    out["exact_walk"] = _walk(f, theta, carry, args.steps, args.fd_h, chained=False)
    out["chained_walk"] = _walk(f, theta, carry, args.steps, args.fd_h, chained=True)
    return out


def measure(args) -> dict:
    data = nd.datasets.load("hcp")
    return {"duration": args.duration, "burn_in": args.burn_in,
            "realisations": args.realisations, "chain_burn_in": args.chain_burn_in,
            "balloon_step": args.balloon_step,
            "fd_h": args.fd_h, "ks": {str(k): _one_k(k, data, args) for k in args.ks}}


CASES = {  # name: (what it is, its own forward)
    "today forward": ("forward, BOLD integrated every step (as before)", "today forward"),
    "today exact": ("value and gradient, exact, BOLD every step (today's step)",
                    "today forward"),
    "forward": ("forward, BOLD every {h:g} ms", "forward"),
    "exact": ("value and gradient, exact, BOLD every {h:g} ms", "forward"),
    "chained forward": ("chained forward, BOLD every {h:g} ms", "chained forward"),
    "chained": ("chained value and gradient, BOLD every {h:g} ms", "chained forward"),
}


def _time_rows(r: dict, m: dict) -> list[list[str]]:
    best = {n: min(t) for n, t in r["seconds"].items()}
    full = (m["burn_in"] + m["duration"]) / 1000
    chained = m["chain_burn_in"] + m["duration"] / 1000
    rows = []
    for n, (text, own) in CASES.items():
        sim = chained if n.startswith("chained") else full
        rows.append([text.format(h=m["balloon_step"]), f"{sim:g}", f"{best[n]:.1f}",
                     f"{best[n] / best[own]:.2f}", f"{best[n] / best['today exact']:.2f}"])
    return rows


def _walk_rows(rows: list[dict], chained: bool) -> list[list[str]]:
    out = []
    for r in rows:
        rel = abs(r["g_dot_u"] - r["fd"]) / max(abs(r["fd"]), 1e-300)
        smaller = "; ".join(
            f"h = {h:.1e}: {fd:.6g} ({abs(r['g_dot_u'] - fd) / abs(fd):.1e})"
            for h, fd in r.get("fd_smaller", [])) or "–"
        line = [str(r["step"]), f"{r['G']:.5f}", f"{r['loss']:.4f}", f"{r['g_dot_u']:.6g}",
                f"{r['fd']:.6g}", f"{rel:.1e}", smaller]
        if chained:
            same = np.sign(r["exact_g_dot_u"]) == np.sign(r["g_dot_u"])
            line += [f"{r['exact_g_dot_u']:.6g}", "yes" if same else "**no**"]
        out.append(line)
    return out


def render(m: dict) -> str:
    lines = ["# One heterogeneous fit step: the burn-in paid once (`nd.Chained`)", "",
             "Written by `python scripts/studies/bench_heterogeneous_step.py` (issue 37). "
             "The problems of [`heterogeneity.md`](heterogeneity.md): rww-ei-fic with FIC on "
             "the embedded HCP data, G 0.49, input gains along 9 maps (k = 10) or one "
             "mean-free log-gain per region (k = 81); `nd.FcLoss` of "
             f"{m['realisations']} realisations x {m['duration'] / 1000:g} s after a "
             f"{m['burn_in'] / 1000:g} s burn-in, `1-r+huber` against runs 1-4, float64. "
             f"Chained: `nd.Chained(loss, burn_in={m['chain_burn_in'] * 1000:g})`, each step's "
             "runs continuing the previous step's end states. Times: best of the rounds, the "
             "cases interleaved in one process.", ""]
    for k, r in m["ks"].items():
        lines += [f"## k = {k}", "", "### Time of one evaluation", ""]
        head = ["case", "simulated per realisation (s)", "best s", "in its own forwards",
                "of today's step"]
        lines += [*H.table(head, _time_rows(r, m)), ""]
        lines += ["### The gradient along the fit's own steps", "",
                  f"BOLD every {m['balloon_step']:g} ms. "
                  f"Adam's first steps (the benchmark's step sizes). `g . u`: the gradient "
                  f"along the step's update `u`; FD: central differences of the same function "
                  f"(same noise key; chained: same chain state) at h = {m['fd_h']:g} of the "
                  "update.", "", "Exact gradient:", ""]
        head = ["step", "G", "loss", "g . u", "FD", "relative difference",
                f"FD at smaller h (relative difference; where over {REFINE:g})"]
        lines += [*H.table(head, _walk_rows(r["exact_walk"], False)), "", "Chained:", ""]
        lines += [*H.table(head + ["exact g . u (same point, key)", "same sign"],
                           _walk_rows(r["chained_walk"], True)), ""]
    lines += ["## Reading", "", m.get("reading", "(not written yet)"), "", *H.machine(m), ""]
    return "\n".join(lines)


def options(p) -> None:
    p.add_argument("--ks", type=int, nargs="+", default=[10, 81], choices=[3, 10, 81])
    p.add_argument("--duration", type=float, default=43_200.0, help="measured ms per run")
    p.add_argument("--burn-in", type=float, default=57_600.0, help="the loss's burn-in (ms)")
    p.add_argument("--realisations", type=int, default=4)
    p.add_argument("--chain-burn-in", type=float, default=14.4,
                   help="the chained steps' burn-in (s)")
    p.add_argument("--balloon-step", type=float, default=10.0,
                   help="the hemodynamics' integration step of the new cases (ms)")
    p.add_argument("--steps", type=int, default=2, help="Adam steps walked per gradient")
    p.add_argument("--fd-h", type=float, default=1e-3,
                   help="central differences' step, as a fraction of the update")
    p.add_argument("--repeats", type=int, default=2, help="timing rounds")


def _smoke(argv):
    return argv + ["--duration", "7200", "--burn-in", "7200", "--realisations", "2",
                   "--chain-burn-in", "1.44", "--steps", "1", "--repeats", "1"]


if __name__ == "__main__":
    import sys

    if "--smoke" in sys.argv:
        sys.argv = _smoke(sys.argv)
    H.main(measure, render, doc=__doc__, name="heterogeneous_step", options=options)
