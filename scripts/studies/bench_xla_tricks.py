"""Each compiler trick of ``netdyn/_xla_tricks.py`` switched on and off, on this machine.

For every trick, the workloads where it acts are compiled twice: as netdyn ships (*on*)
and with the trick replaced by its plain formulation (*off*: the identity for
``materialise``, ``materialise_linear`` and ``keep_apart``, ``jnp.sum`` for
``row_sums`` and ``pairwise_sum``, ``jax.random.normal(fold_in(key, step))`` for
``fold_in_normal``). This script reaches into the private module on purpose: turning a
trick off is not something netdyn offers. The calls of all programs are interleaved in
random order, best and median of ``--repeats``; *off / on* is the ratio of the best
times (above 1: the trick saves time). *max |off - on|*: largest difference of the
outputs (0 for an identity or the same draw, rounding for a sum in another order).

Workloads (``--seconds`` of model time, dt = 1 ms, float64, noise on): the reference
network of ``bench_forward.py`` (Reduced Wong-Wang, delayed linear coupling, 84 nodes,
HrfBold in the loop) forward and its gradient with respect to G (``Uniform(1000)``);
the same connectome with ``nd.presets.hopf`` (delayed difference coupling: a sum over
edges that depends on both ends) forward and gradient; 400 nodes with 10 % of the edges
as a ``SparseGraph`` with instantaneous linear coupling (the gather over edges); and a
``vmap`` over 64 values of G of the Hopf network (the batch-last loop). ``divide`` is a
question of values, not speed, and is not timed here::

    python scripts/studies/bench_xla_tricks.py                 # 2 s, ~5 min on 2 cores
    python scripts/studies/bench_xla_tricks.py --smoke --seconds 1 --repeats 3
"""

from unittest import mock

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _common import DT, PERIOD  # noqa: E402

import netdyn as nd  # noqa: E402
from netdyn import _xla_tricks  # noqa: E402

HISTORY_MARKER = "<!-- history: kept when this file is regenerated -->"
BATCH = 64

PLAIN = {
    "fold_in_normal": lambda key, step, shape, dtype: jax.random.normal(
        jax.random.fold_in(key, step), shape, dtype
    ), "materialise": lambda x, token: x,
    "materialise_linear": lambda x: x,
    "row_sums": lambda x: jnp.sum(x, axis=-1),
    "pairwise_sum": lambda x, axis: jnp.sum(x, axis=axis),
    "keep_apart": lambda carry: carry,
}


def _bold(net, remat, seconds, batch_last=False):
    def bold(G):
        sol = nd.simulate(
            eqx.tree_at(lambda n: n.coupling.G, net, G), nd.Heun(remat=remat), t0=0.0,
            t1=seconds * 1000.0, dt=DT, key=jax.random.key(0),
            monitors={"bold": nd.HrfBold(period=PERIOD / 4, interim=DT,
                                         variables=net.dynamics.state_names[:1])},
            batch_last=batch_last,
        )
        return sol["bold"]

    return bold


def _forward(net, seconds, unroll=None):
    return jax.jit(_bold(net, nd.NoRemat(unroll=unroll), seconds)), (net.coupling.G,)


def _gradient(net, seconds):
    bold = _bold(net, nd.Uniform(1000), seconds)
    return jax.jit(jax.value_and_grad(lambda G: jnp.mean(bold(G) ** 2))), (net.coupling.G,)


def _sparse(seconds, n=400, density=0.1):
    rng = np.random.default_rng(1)
    w = rng.uniform(0.0, 1.0, (n, n)) * (rng.random((n, n)) < density)
    np.fill_diagonal(w, 0.0)
    net = nd.Network(nd.ReducedWongWang(), nd.Linear(G=0.5), nd.SparseGraph.from_dense(w / w.max()),
                     nd.AdditiveNoise(sigma=0.00283))

    def raw(G):
        sol = nd.simulate(eqx.tree_at(lambda n: n.coupling.G, net, G), nd.Heun(), t0=0.0,
                          t1=seconds * 1000.0, dt=DT, key=jax.random.key(0),
                          monitors={"avg": nd.TemporalAverage(period=PERIOD / 4)})
        return sol["avg"]

    return jax.jit(raw), (net.coupling.G,)


def _batched(net, seconds):
    bold = _bold(net, nd.NoRemat(), seconds, batch_last=True)  # the batch-last loop
    Gs = net.coupling.G * jnp.linspace(0.5, 1.5, BATCH)
    return jax.jit(jax.vmap(bold)), (Gs,)


def workloads(seconds):
    """``name -> (n_steps, build)``: the programs, built (traced and compiled) on demand."""
    w, lengths, source = C.load_connectome()
    rww = C.reference_network(w, lengths)
    hopf = nd.presets.hopf(w / w.max(), lengths)
    steps = round(seconds * 1000.0 / DT)
    period = round(PERIOD / 4 / DT)  # the monitors' period, in steps
    short = max(1, steps // 4 // period) * period  # each batch member's steps
    return source, {
        "reference forward": (steps, lambda: _forward(rww, seconds)),
        "reference gradient": (steps, lambda: _gradient(rww, seconds)),
        "reference forward, unroll=2": (steps, lambda: _forward(rww, seconds, unroll=2)),
        "Hopf forward": (steps, lambda: _forward(hopf, seconds)),
        "Hopf gradient": (steps, lambda: _gradient(hopf, seconds)),
        "sparse 400 nodes, instantaneous": (steps, lambda: _sparse(seconds)),
        f"Hopf vmap B = {BATCH}": (BATCH * short, lambda: _batched(hopf, short * DT / 1000.0)),
    }


TRICKS = {
    "fold_in_normal": ["reference forward", "reference gradient"],
    "materialise": ["reference forward", "reference gradient", "sparse 400 nodes, instantaneous",
                    f"Hopf vmap B = {BATCH}"],
    "materialise_linear": ["reference gradient", "Hopf gradient"],
    "row_sums": ["reference forward", "reference gradient", "Hopf forward", "Hopf gradient"],
    "pairwise_sum": [f"Hopf vmap B = {BATCH}"],
    "keep_apart": ["reference forward, unroll=2"],
}


def compile_case(build, trick=None):
    # ``simulate`` is jitted: without clearing JAX's caches, a second build would reuse
    # the first one's trace, whatever is patched.
    jax.clear_caches()
    if trick is None:
        f, args = build()
        return f.lower(*args).compile(), args
    with mock.patch.object(_xla_tricks, trick, PLAIN[trick]):
        f, args = build()
        return f.lower(*args).compile(), args


def _max_diff(a, b):
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)), initial=0.0))
               for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


def measure(args) -> dict:
    """Every workload compiled with each of its tricks on and off, timed interleaved."""
    source, loads = workloads(args.seconds)
    cases, steps = {}, {}
    for name, (n_steps, build) in loads.items():
        cases[(name, None)] = compile_case(build)
        steps[(name, None)] = n_steps
        for trick, where in TRICKS.items():
            if name in where:
                cases[(name, trick)] = compile_case(build, trick)
                steps[(name, trick)] = n_steps
        print(f"compiled {name}", flush=True)
    outputs = {k: f(*a) for k, (f, a) in cases.items()}
    keyed = {f"{k[0]} | {k[1]}": v for k, v in cases.items()}
    times = C.interleaved(keyed, args.repeats, warmup=False, log=True)
    result = {k: C.per_step({s: times[s]}, steps[k])[s]
              for k, s in zip(cases, keyed, strict=True)}

    rows = []
    for trick, where in TRICKS.items():
        for name in where:
            on, off = result[(name, None)], result[(name, trick)]
            diff = _max_diff(outputs[(name, None)], outputs[(name, trick)])
            rows.append((trick, name, on, off, off[0] / on[0], diff))
            print(f"{trick} on {name}: on {on[0]:.2f} off {off[0]:.2f} µs/step "
                  f"(off / on {off[0] / on[0]:.2f}), max |off - on| {diff:.1e}", flush=True)
    bold_1 = np.asarray(outputs[("reference forward", None)])
    same_unroll = {
        label: bool(np.array_equal(bold_1, np.asarray(outputs[("reference forward, unroll=2", t)])))
        for label, t in (("on", None), ("off", "keep_apart"))
    }
    return {"source": source, "seconds": args.seconds, "repeats": args.repeats, "rows": rows,
            "same_unroll": same_unroll,
            # the figures first measured for each trick, below the marker: kept
            "history": C.kept_tail(H.out_path(args, "xla_tricks"), HISTORY_MARKER)}


def render(m: dict) -> str:
    """The table of tricks on and off, then the history kept below the marker."""
    seconds, same_unroll = m["seconds"], m["same_unroll"]
    out = ["# Compiler tricks, each switched off", ""]
    out.append(
        "Generated by `"
        + C.command("studies/bench_xla_tricks.py", seconds != 2.0 and f"--seconds {seconds:g}")
        + f"`. The tricks are the functions of `netdyn/_xla_tricks.py`; *off*: the trick "
        "replaced by its plain formulation (the identity, `jnp.sum`, or `jax.random`'s own "
        "draw). Workloads: "
        f"{m['source']}, {seconds:g} s of model time at dt = {DT:g} ms in float64 with noise "
        "(see the script's docstring); the batched workload runs a quarter of it per member. "
        f"µs per step (per member-step for the batch), best and median of {m['repeats']} "
        "calls interleaved in random order between all programs; *off / on*: ratio of the "
        "best times; *max abs diff*: largest difference between the outputs of the two."
    )
    out += H.machine(m)
    out += ["", "## Results", "", *H.table(
        ("trick", "workload", "on µs/step (best)", "median", "off µs/step (best)", "median",
         "off / on", "max abs diff"),
        [(f"`{trick}`", name, f"{on[0]:.2f}", f"{on[1]:.2f}", f"{off[0]:.2f}", f"{off[1]:.2f}",
          f"{ratio:.2f}", f"{diff:.1e}") for trick, name, on, off, ratio, diff in m["rows"]])]
    out += [
        "", "BOLD of the reference forward at `unroll=2` bit-identical to `unroll=1`: "
        f"{'yes' if same_unroll['on'] else 'no'} with `keep_apart`, "
        f"{'yes' if same_unroll['off'] else 'no'} without.",
    ]
    return "\n".join([*out, "", m["history"]]).rstrip("\n") + "\n"


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--seconds", type=float, default=2.0, help="model time (s)")
    p.add_argument("--repeats", type=int, default=7)


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="xla_tricks", options=options)
