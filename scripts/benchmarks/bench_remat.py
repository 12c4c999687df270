"""Remat benchmark of the reference workload: time and memory of d loss / d G per strategy.

The reference workload (``benchmarks/README.md``; without tvboptim, the embedded ``hcp``
data), with TVB's HRF-kernel BOLD (netdyn's ``nd.HrfBold(period=1000, interim=dt)``,
tvboptim's ``HRFBold``) so that both tools compute the same thing; labels ending in
``@balloon`` use ``nd.Bold(period=1000)`` instead and compare with ``None@balloon``.

    python scripts/benchmarks/bench_remat.py                      # 60 s, every strategy
    python scripts/benchmarks/bench_remat.py --compare tvboptim   # + tvboptim 0.4 in the same run
    python scripts/benchmarks/bench_remat.py --smoke              # 6 s, few strategies
    python scripts/benchmarks/bench_remat.py --hour               # the one-hour section
    python scripts/benchmarks/bench_remat.py --hour --remat "MultiLevel(16)" --seconds 120

Per configuration: the forward and gradient (``jax.value_and_grad``) time of compiled
calls, interleaved between configurations in random order, best of ``--repeats``; and, in
a fresh process each (``--one LABEL --json PATH``), XLA's temporary memory of the gradient,
the peak RSS (after compiling, after one forward and one gradient call), the loss and the
gradient. Writes ``benchmarks/remat.md``, ``.json`` and ``.png``.

``--hour``: the report's last section instead (the rest kept), d loss / d G through one
hour of model time (``--seconds``) under ``--remat`` (``Auto(64MB)``): the gradient
compiled, not run, under several strategies for XLA's temporary memory; then a fresh
process compiles and runs it once under ``--remat`` (and the forward, unless
``--no-forward``) for the wall times and its peak RSS.
"""

import argparse
import contextlib
import hashlib
import io
import math
import sys
import tempfile
import time
from pathlib import Path

import _common as C  # first: this checkout's netdyn
import _harness as H
import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _common import DT, PERIOD, G, load_data, maxrss_bytes, mb  # noqa: E402

import netdyn as nd  # noqa: E402

HOUR_MARKER = "<!-- one-hour run: written by scripts/benchmarks/bench_remat.py --hour -->"
HOUR_REMAT = "Auto(64MB)"
HOUR_COMPILE_ONLY = ["None", "Uniform(1000)", "Uniform(2000)", "Nested(1000,60000)",
                     "MultiLevel(16)", "MultiLevel(8)"]

# Block sizes around sqrt(60000) = 245. Sizes below the BOLD period (1000 steps) are
# balanced within a period (245 -> 200), sizes above it are rounded to whole periods; 150,
# 400 and 7000 do not divide their count (143 x 7, 334 x 3 steps, 7 x 9 periods): a shorter
# last block, see ``effective_blocks``.
FULL_CONFIGS = (
    ["None"]
    + [f"Uniform({k})" for k in (100, 150, 245, 400, 500, 1000, 1001, 2000, 7000)]
    + ["Nested(50,1200)", "Nested(100,4000)", "Nested(20,1000,10000)"]
    + ["MultiLevel(4)", "MultiLevel(8)", "MultiLevel(16)"]
    + ["Auto(10MB)", "Auto(2MB)", "Policy(coupling)"]
    + ["None@balloon", "Uniform(245)@balloon", "Uniform(1000)@balloon", "MultiLevel(16)@balloon"]
)
QUICK_CONFIGS = [
    "None", "Uniform(50)", "Uniform(77)", "Uniform(1001)", "Nested(20,1000)", "MultiLevel(8)",
    "Auto(2MB)", "Policy(coupling)", "None@balloon", "Uniform(77)@balloon",
]
# tvboptim: its default (no checkpointing), blocks of 1000 (the BOLD period: the smallest
# its streaming BOLD allows), its lowest-memory exact configuration (blocks + streaming
# BOLD reduction), the same with truncated backpropagation (a different gradient) and
# with its default 4 ms HRF sampling (a different BOLD). Grammar: ``_common.TVBOPTIM_LABEL``.
TVBO_CONFIGS = [
    "tvboptim", "tvboptim(1000)", "tvboptim(1000,stream)", "tvboptim(1000,stream,tbptt=1000)",
    "tvboptim(1000,stream,ds=4)",
]


# --------------------------------------------------------------------------- workload


def split_label(label):
    """``(strategy, monitor)``: ``"Uniform(245)@balloon"`` -> ``("Uniform(245)", "balloon")``."""
    strategy, _, monitor = label.partition("@")
    return strategy, monitor or "hrf"


def baseline(label):
    """The label of the no-checkpoint row ``label`` is compared with."""
    if label.startswith("tvboptim"):
        return "tvboptim"
    monitor = split_label(label)[1]
    return "None" if monitor == "hrf" else f"None@{monitor}"


def netdyn_workload(label, w, lengths, seconds, remat=None):
    """``(network, simulate's other arguments)`` of the reference workload under the
    strategy ``label`` (or ``remat``, when given), less the key."""
    strategy, monitor = split_label(label)
    workload = nd.presets.reference_simulation(
        w, lengths, duration=seconds * 1000.0,
        remat=C.make_remat(strategy) if remat is None else remat, bold=monitor
    )
    return workload.pop("network"), workload


def resolve_remat(label, data, seconds):
    """``(strategy, choice)``: the strategy the netdyn row ``label`` runs, and for an
    ``Auto(...)`` row what ``nd.choose_remat`` chose, once, on the loss's own run
    (``"Uniform(1000) (5.44 MB)"``: the time loop's own temporary memory), else ``None``;
    the row's compile times exclude the choice (``choose_s`` in the JSON)."""
    if label.startswith("tvboptim"):
        return None, None
    remat = C.make_remat(split_label(label)[0])
    if not isinstance(remat, nd.Auto):
        return remat, None
    net, workload = netdyn_workload(label, data[0], data[1], seconds)
    net = eqx.tree_at(lambda n: n.coupling.G, net, jnp.asarray(G))
    choice = nd.choose_remat(net, **workload, key=jax.random.key(0))
    return choice.strategy, f"{describe(choice.strategy)} ({mb(choice.temp_bytes):.2f} MB)"


def netdyn_bold(label, w, lengths, seconds, remat=None):
    """``bold(G)``: the BOLD samples of the reference workload with the strategy ``label``
    (or ``remat``, when given)."""
    net, workload = netdyn_workload(label, w, lengths, seconds, remat)

    def bold(G):
        sol = nd.simulate(
            eqx.tree_at(lambda n: n.coupling.G, net, G), **workload, key=jax.random.key(0)
        )
        return sol["bold"]

    return bold


def make_loss(label, data, seconds, remat=None):
    """``loss(G)`` of the row ``label``: tvboptim's under its configuration
    (``_common.tvboptim_loss``), or netdyn's with the strategy ``label`` (``remat`` when
    given, see ``resolve_remat``)."""
    w, lengths, fc_target, _ = data
    skip = C.skip_samples(seconds)
    if label.startswith("tvboptim"):
        return C.tvboptim_loss(label, w, lengths, fc_target, seconds, skip=skip)
    bold, target = netdyn_bold(label, w, lengths, seconds, remat), jnp.asarray(fc_target)

    def loss(G):
        return nd.rmse(nd.fc(bold(G)[skip:]), target)

    return loss


def effective_blocks(label, n_steps):
    """The blocks netdyn's schedule runs for ``label`` (``nd.checkpoint_blocks``), innermost
    first: ``ᵖ`` a size that does not divide its count, ``—`` a block as long as the run."""
    if label.startswith("tvboptim"):
        block = C.tvboptim_config(label)["block"]
        return "" if block is None else str(block)
    remat = C.make_remat(split_label(label)[0])
    if isinstance(remat, nd.Auto):  # its row names the strategy it chose
        return ""
    blocks = nd.checkpoint_blocks(remat, n_steps, round(PERIOD / DT))
    out = ["—"] if any(k >= n_steps for k in remat.block_sizes(n_steps)) else []
    out += [f"{size}{'ᵖ' if padded else ''}" for size, padded in blocks]
    return ",".join(out)


# ------------------------------------------------------------------- measurements


def fresh_setup(label, seconds, forward=True):
    """A fresh process's data, loss and compiled gradient (and forward), and what this
    took: ``(data, remat, loss, {"grad": ..., "fwd": ... or None}, figures, memory)``."""
    data = load_data()
    figures = {"rss_setup": maxrss_bytes()}
    t = time.perf_counter()
    remat, figures["auto_choice"] = resolve_remat(label, data, seconds)
    figures["choose_s"] = time.perf_counter() - t
    loss = make_loss(label, data, seconds, remat)
    G0 = jnp.asarray(G)
    with contextlib.redirect_stdout(io.StringIO()):
        fwd, compile_fwd = C.compile_timed(jax.jit(loss), G0) if forward else (None, None)
        grad, figures["compile_grad_s"] = C.compile_timed(jax.jit(jax.value_and_grad(loss)), G0)
    if forward:
        figures["compile_fwd_s"] = compile_fwd
    mem = grad.memory_analysis()
    figures.update(temp_bytes=int(mem.temp_size_in_bytes), rss_compiled=maxrss_bytes())
    return data, remat, loss, {"grad": grad, "fwd": fwd}, figures, mem


def measure_one(label, seconds, path):
    """Fresh-process figures of one configuration, written as JSON to ``path``."""
    data, remat, _, exe, figures, _ = fresh_setup(label, seconds)
    G0 = jnp.asarray(G)
    value_fwd, time_fwd = C.timed(exe["fwd"], G0)
    (value, g), time_grad = C.timed(exe["grad"], G0)
    exact = {}
    exact_label = C.tvboptim_exact(label) if label.startswith("tvboptim") else None
    if exact_label is not None:
        # The exact counterpart (same noise stream, post-hoc BOLD, no truncation): does this
        # configuration compute the same loss and d loss / d G?
        with contextlib.redirect_stdout(io.StringIO()):
            ref = jax.jit(jax.value_and_grad(make_loss(exact_label, data, seconds)))
            ref_value, ref_g = jax.block_until_ready(ref(G0))
        exact = {"exact_label": exact_label, "exact_loss": float(ref_value),
                 "exact_grad": float(ref_g)}
    bold_sha1 = None
    if not label.startswith("tvboptim"):
        # The simulated BOLD itself, to check that every strategy's trajectory is
        # bit-identical (the loss can differ in the last bits: XLA compiles the FC and
        # RMSE after the loop differently in each whole program).
        bold = jax.jit(netdyn_bold(label, data[0], data[1], seconds, remat))(G0)
        bold_sha1 = hashlib.sha1(np.asarray(bold).tobytes()).hexdigest()
    path.write_text(H.dumps({
        "label": label, "seconds": seconds, **figures,
        "fwd_temp_bytes": int(exe["fwd"].memory_analysis().temp_size_in_bytes),
        "rss_peak": maxrss_bytes(), "first_fwd_s": time_fwd, "first_grad_s": time_grad,
        "loss": float(value), "loss_fwd": float(value_fwd), "grad": float(g),
        "bold_sha1": bold_sha1, **exact}))


def describe(strategy) -> str:
    """A strategy's constructor call (equinox's repr hides default fields)."""
    if isinstance(strategy, nd.Uniform):
        return f"Uniform({strategy.block})"
    if isinstance(strategy, nd.Nested):
        return f"Nested({','.join(map(str, strategy.blocks))})"
    if isinstance(strategy, nd.MultiLevel):
        return f"MultiLevel({strategy.branch})"
    return type(strategy).__name__ + "()"


def fresh_process(label, seconds, cache):
    """``measure_one(label)`` in a fresh process: its JSON result (or an error)."""
    res = H.run_script(__file__, ["--one", label, "--seconds", repr(seconds), "--cache", cache])
    if "error" in res:
        print(f"  {label}: the fresh process failed: {res['error']}", flush=True)
    return {"label": label, **res} if "error" in res else res


def interleaved_times(labels, data, seconds, repeats):
    """Forward and gradient seconds per configuration, interleaved (``C.interleaved``)."""
    G0 = jnp.asarray(G)
    cases = {}
    for label in labels:
        loss = make_loss(label, data, seconds, resolve_remat(label, data, seconds)[0])
        with contextlib.redirect_stdout(io.StringIO()):
            cases[label, "fwd"] = (jax.jit(loss).lower(G0).compile(), (G0,))
            cases[label, "grad"] = (jax.jit(jax.value_and_grad(loss)).lower(G0).compile(), (G0,))
        print(f"  compiled {label}", flush=True)
    # A configuration's forward and gradient run back to back, configurations in random order.
    times = C.interleaved(cases, repeats, group=lambda name: name[0], log=True)
    return {label: {"fwd": times[label, "fwd"], "grad": times[label, "grad"]} for label in labels}


# ---------------------------------------------------------------------------- report


def build_rows(labels, times, memory, n_steps):
    """One row per configuration: its blocks, best and median times, fresh-process figures."""
    rows = []
    for label in labels:
        row = {"label": label, "blocks": effective_blocks(label, n_steps)}
        for kind in ("fwd", "grad"):
            ts = times.get(label, {}).get(kind)
            row[kind] = min(ts) if ts else math.nan
            row[f"{kind}_median"] = float(np.median(ts)) if ts else math.nan
        rows.append({**row, **memory.get(label, {})})
    return rows


def rel_grad(r, by):
    """|Δgrad/grad| of row ``r`` against its no-checkpoint baseline, or its exact tvboptim
    counterpart; NaN for tvboptim's other block sizes (another noise realisation)."""
    if "error" in r:
        return math.nan
    if r["label"].startswith("tvboptim"):
        if "exact_grad" in r:
            return abs(r["grad_value"] - r["exact_grad"]) / abs(r["exact_grad"])
        return 0.0 if r["label"] == "tvboptim" else math.nan
    base = by.get(baseline(r["label"]))
    if base is None or "error" in base:
        return math.nan
    return abs(r["grad_value"] - base["grad_value"]) / abs(base["grad_value"])


def results_table(rows):
    """The main table's lines: one row per configuration."""
    by = {r["label"]: r for r in rows}
    cells = []
    for r in rows:
        if "error" in r:
            cells.append([r["label"], *[""] * 6, f"error: {r['error']}", *[""] * 6])
            continue
        base = by.get(baseline(r["label"]), {})
        label = r["label"] + (f" → {r['auto_choice'].split(' (')[0]}"
                              if r.get("auto_choice") else "")
        cells.append([
            label, r["blocks"], f"{r['fwd']:.3f}", f"{r['grad']:.3f}",
            f"{r['grad'] / r['fwd']:.2f}", f"{r['fwd'] / base.get('fwd', math.nan):.2f}",
            f"{r['grad'] / base.get('grad', math.nan):.2f}", f"{mb(r['temp_bytes']):.2f}",
            f"{mb(r['rss_peak']):.0f}", f"{mb(r['rss_compiled']):.0f}", f"{r['loss']:.16f}",
            f"{r['grad_value']:.16e}", H.num(rel_grad(r, by), ".1e", "—"),
            (r.get("bold_sha1") or "—")[:10]])
    return H.table(("configuration", "blocks", "forward s", "gradient s", "grad / fwd",
                    "fwd vs None", "grad vs None", "temp MB", "peak RSS MB", "compile RSS MB",
                    "loss", "dloss/dG", "\\|Δgrad/grad\\|", "BOLD sha1"), cells)


def counterpart_table(rows):
    """tvboptim's rows with an exact counterpart: their loss and gradient against it."""
    rows = [r for r in rows if "exact_label" in r]
    if not rows:
        return []
    return H.table(("configuration", "counterpart", "loss", "counterpart loss", "\\|Δloss\\|",
                    "dloss/dG", "counterpart dloss/dG", "\\|Δgrad/grad\\|"), [
        (r["label"], r["exact_label"], f"{r['loss']:.16f}", f"{r['exact_loss']:.16f}",
         f"{abs(r['loss'] - r['exact_loss']):.1e}", f"{r['grad_value']:.16e}",
         f"{r['exact_grad']:.16e}",
         f"{abs(r['grad_value'] - r['exact_grad']) / abs(r['exact_grad']):.1e}") for r in rows])


def render_main(m) -> list[str]:
    """The report's lines before the one-hour section."""
    a, rows, seconds = m["args"], m["rows"], m["seconds"]
    n_steps = round(seconds * 1000.0 / DT)
    out = ["# Remat benchmark: gradient of the reference workload", ""]
    out.append(
        "Generated by `"
        + C.command(
            "bench_remat.py", a["quick"] and "--smoke",
            not a["quick"] and seconds != 60.0 and f"--seconds {seconds:g}",
            a["repeats"] != (2 if a["quick"] else 3) and f"--repeats {a['repeats']}",
            a["compare"] and "--compare tvboptim",
        )
        + f"`. {C.reference_text(m['data'])}, {seconds:g} s ({n_steps} steps), BOLD at TR = "
        f"{PERIOD:g} ms computed inside the loop, FC of the BOLD after skipping "
        f"{C.skip_samples(seconds)} samples, loss = RMSE against the empirical FC, "
        "`jax.value_and_grad` with respect to G; float64. BOLD model: TVB's "
        "hemodynamic-response-kernel BOLD (tvboptim's "
        f"`HRFBold(period={PERIOD:g}, downsample_period={DT:g})`; netdyn's "
        f"`nd.HrfBold(period={PERIOD:g}, interim={DT:g})`, accumulated online); rows marked "
        f"`@balloon` use netdyn's Balloon-Windkessel `nd.Bold(period={PERIOD:g})` instead "
        "(one RK4 step of the hemodynamic ODE per simulation step)."
    )
    out += H.machine(m)
    out += [
        "", "## Results", "",
        f"- *forward s*, *gradient s*: best of {a['repeats']} compiled calls of `jax.jit(loss)` "
        "and `jax.jit(jax.value_and_grad(loss))`, interleaved between all configurations in "
        "random order, in one process (the first call of each included).",
        "- *vs None*: ratio to the no-checkpoint row of the same tool and BOLD model (`None`, "
        "`None@balloon`, `tvboptim`).",
        "- *temp MB*: XLA's compiled temporary memory of the gradient "
        "(`memory_analysis().temp_size_in_bytes`).",
        "- *peak RSS MB*: `ru_maxrss` of a fresh process per configuration (imports, data, "
        "compiling the forward and the gradient, one call of each); *compile RSS MB*: the "
        "same before the calls.",
        "- *blocks*: the block sizes the schedule realises (`nd.checkpoint_blocks`), innermost "
        "first; ᵖ: the size does not divide its count (one shorter last block). For "
        "tvboptim: its `Heun(block_size=K)`.",
        "- *loss*, *dloss/dG*: `value_and_grad` at G = 0.5 in the fresh process.",
        "- *|Δgrad/grad|*: against the row's no-checkpoint baseline; for tvboptim's rows with "
        "an exact counterpart, against that counterpart (next table); — where there is none "
        "(tvboptim's other block sizes draw another noise realisation).",
        "- *BOLD sha1*: first 10 hex digits of the sha1 of the simulated BOLD samples "
        "(netdyn's rows).",
        "- `Auto(x) → S`: the strategy `nd.choose_remat` picked for that budget; the row runs "
        "S. tvboptim labels: `tvboptim(K)` blocks of K steps (noise then drawn per block, "
        "another realisation), `stream` its streaming BOLD reduction, `tbptt=W` "
        "`Heun(grad_horizon=W)` (truncated backpropagation: not dloss/dG), `ds=D` the HRF "
        "sampled every D ms (another BOLD).", "",
    ]
    out += results_table(rows)
    counterparts = counterpart_table(rows)
    if counterparts:
        out += [
            "", "tvboptim's rows against their exact counterpart `tvboptim(K,sub=D)`: the same "
            "blocks and noise stream, `HRFBold` with a `SubSampling(D)` downsample applied "
            "after the solve, no truncation.", "", *counterparts,
        ]
    return [*out, "", "![remat benchmark](remat.png)"]


def uniform_k(r):
    return int(split_label(r["label"])[0][len("Uniform(") : -1])


def plot(m, out):
    """``remat.png`` beside the report: time and memory per strategy."""
    plt = H.pyplot()
    if plt is None or "rows" not in m:
        return
    rows, n_steps = m["rows"], round(m["seconds"] * 1000.0 / DT)
    path = out.with_suffix(".png")
    ok = [r for r in rows if "error" not in r]
    by = {r["label"]: r for r in ok}
    uni = sorted((r for r in ok if r["label"].startswith("Uniform(")
                  and split_label(r["label"])[1] == "hrf"), key=uniform_k)
    fig, axes = plt.subplots(1, 3, figsize=(18, 5.5))
    if uni and "None" in by:
        base = by["None"]
        ks = [uniform_k(r) for r in uni]
        ax = axes[0]
        ax.plot(ks, [r["grad"] / base["grad"] for r in uni], "o-", label="gradient / None's")
        ax.plot(ks, [r["grad"] / r["fwd"] for r in uni], "s-", label="gradient / own forward")
        ax.set(xscale="log", xlabel="Uniform(K): K (steps)", ylabel="ratio",
               title="Uniform(K): gradient time")
        ax.legend(fontsize=8)
        ax = axes[1]
        ax.plot(ks, [mb(r["temp_bytes"]) for r in uni], "o-", label="XLA temp")
        ax.plot(ks, [mb(r["rss_peak"]) for r in uni], "s-", label="peak RSS (fresh process)")
        ax.axhline(mb(base["temp_bytes"]), color="k", ls=":", lw=1, label="None temp")
        ax.axhline(mb(base["rss_peak"]), color="k", ls="-.", lw=1, label="None peak RSS")
        ax.set(xscale="log", yscale="log", xlabel="Uniform(K): K (steps)", ylabel="MB",
               title="Uniform(K): gradient memory")
        ax.legend(fontsize=8)
    ax = axes[2]
    for r in ok:
        kind = "tvboptim" if r["label"].startswith("tvboptim") else split_label(r["label"])[1]
        marker, color = {"tvboptim": ("^", "C3"), "balloon": ("s", "C2")}.get(kind, ("o", "C0"))
        ax.scatter(r["grad"], mb(r["temp_bytes"]), marker=marker, color=color, zorder=3)
        ax.annotate(r["label"], (r["grad"], mb(r["temp_bytes"])), textcoords="offset points",
                    xytext=(4, 3), fontsize=6)
    ax.set(xscale="log", yscale="log", xlabel="gradient time (s)", ylabel="XLA temp memory (MB)",
           title="All rows (circles: netdyn, squares: @balloon, triangles: tvboptim)")
    fig.suptitle(f"Remat strategies, reference workload ({n_steps} steps)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


# -------------------------------------------------------------------- one hour (--hour)


def run_hour(label, seconds, forward, path):
    """The fresh process of ``--hour``: compile, run, write JSON to ``path``."""
    t_start = time.perf_counter()
    _, _, loss, exe, figures, mem = fresh_setup(label, seconds, forward=False)
    G0 = jnp.asarray(G)
    (value, g), grad_s = C.timed(exe["grad"], G0)
    result = {"label": label, "seconds": seconds, "n_steps": round(seconds * 1000.0 / DT),
              **figures, "grad_s": grad_s, "argument_bytes": int(mem.argument_size_in_bytes),
              "output_bytes": int(mem.output_size_in_bytes), "rss_after_grad": maxrss_bytes(),
              "loss": float(value), "grad": float(g)}
    if forward:
        fwd, result["compile_fwd_s"] = C.compile_timed(jax.jit(loss), G0)
        loss_fwd, result["fwd_s"] = C.timed(fwd, G0)
        result["loss_fwd"] = float(loss_fwd)
    result["rss_peak"] = maxrss_bytes()
    result["process_s"] = time.perf_counter() - t_start
    path.write_text(H.dumps(result))


def compiled_temp(label, data, seconds):
    """XLA's temporary memory of the gradient under ``label`` (compiled, not run), seconds."""
    loss = make_loss(label, data, seconds)
    with contextlib.redirect_stdout(io.StringIO()):
        compiled, t = C.compile_timed(jax.jit(jax.value_and_grad(loss)), jnp.asarray(G))
    return int(compiled.memory_analysis().temp_size_in_bytes), t


def measure_hour(args) -> dict:
    """The one-hour section's measurements (``--hour``)."""
    seconds = args.seconds or 3600.0
    machine = C.machine_info()
    info = {"date": machine["date"], "cpu": machine["cpu"], "start_load": C.loadavg()}
    data = load_data()
    print(f"{seconds:g} s, {args.remat}; load {info['start_load']}", flush=True)
    t = time.perf_counter()
    res = H.run_script(__file__, ["--hour-one", args.remat, "--seconds", repr(seconds),
                                  *(["--no-forward"] if args.no_forward else [])])
    if "error" in res:
        raise SystemExit(f"the fresh process failed: {res['error']}")
    res["subprocess_wall_s"] = time.perf_counter() - t
    temps = {}
    for label in HOUR_COMPILE_ONLY if args.compile_only is None else args.compile_only:
        temps[label] = compiled_temp(label, data, seconds)
        print(f"  {label}: temp {mb(temps[label][0]):,.2f} MB "
              f"(compiled in {temps[label][1]:.1f} s)", flush=True)
    info["end_load"] = C.loadavg()
    return {"info": info, "seconds": seconds, "remat": args.remat, "data": data[3],
            "result": res, "compile_only": temps}


def duration(seconds):
    """``"1 hour"``, ``"2 hours"`` or ``"120 s"``."""
    hours = round(seconds / 3600)
    return f"{seconds:g} s" if seconds % 3600 else f"{hours} hour" + "s" * (hours != 1)


def render_hour(h) -> list[str]:
    """The one-hour section's lines."""
    info, res, seconds = h["info"], h["result"], h["seconds"]
    n = res["n_steps"]
    label = res["label"] + (f" → {res['auto_choice']}" if res.get("auto_choice") else "")
    return [
        HOUR_MARKER, "", f"## {duration(seconds)} of simulated time ({n:,} steps)", "",
        "Generated by `"
        + C.command("bench_remat.py", "--hour", seconds != 3600 and f"--seconds {seconds:g}",
                    h["remat"] != HOUR_REMAT and f"--remat {h['remat']}")
        + f"` on {info['date']} ({info['cpu']}; load average {info['start_load']} at start, "
        f"{info['end_load']} at end). The reference workload of the table above ({h['data']}, "
        f"HRF-kernel BOLD at TR = {PERIOD:g} ms, FC after {C.skip_samples(seconds)} "
        f"samples, RMSE, d/dG) for {seconds:g} s of model time. One fresh process "
        "compiles `jax.jit(jax.value_and_grad(loss))`, runs it once"
        + (", then compiles and runs the forward once" if "fwd_s" in res else "")
        + "; wall times of single calls (not best-of), on a shared machine.", "",
        *H.table(("strategy", "gradient s", "forward s", "grad / fwd", "µs per step (gradient)",
                  "compile s", "temp MB", "peak RSS MB", "RSS after compile MB", "loss",
                  "dloss/dG"), [(
            label, f"{res['grad_s']:.1f}",
            *((f"{res['fwd_s']:.1f}", f"{res['grad_s'] / res['fwd_s']:.2f}") if "fwd_s" in res
              else ("—", "—")),
            f"{res['grad_s'] / n * 1e6:.1f}", f"{res['compile_grad_s']:.1f}",
            f"{mb(res['temp_bytes']):.2f}", f"{mb(res['rss_peak']):.0f}",
            f"{mb(res['rss_compiled']):.0f}", f"{res['loss']:.16f}", f"{res['grad']:.16e}")]), "",
        f"Gradient: {res['grad_s'] / 60:.1f} min, peak RSS {mb(res['rss_peak']):.0f} MB "
        f"(of which {mb(res['rss_setup']):.0f} MB after importing JAX, netdyn and the data)"
        + (", forward loss equal to the gradient call's, bit for bit."
           if res.get("loss_fwd") == res["loss"] else ".")
        + (f" {res['auto_choice']}: the strategy `Auto` chose, with the time loop's own "
           "temporary memory." if res.get("auto_choice") else ""), "",
        f"Compiled temporary memory of the same gradient over {seconds:g} s under other "
        "strategies (compiled in the parent process, not run):", "",
        *H.table(("strategy", "blocks", "temp MB", "compile s"), [
            (lab, effective_blocks(lab, n), f"{mb(temp):,.2f}", f"{t:.1f}")
            for lab, (temp, t) in h["compile_only"].items()])]


# ------------------------------------------------------------------------------ main


def measure(args) -> dict:
    """Every configuration's fresh process and interleaved times; or, with ``--hour``, the
    one-hour section (the other measurements kept from the saved ``.json``)."""
    saved = H.out_path(args, "remat").with_suffix(".json")
    old = H.loads(saved.read_text()) if saved.is_file() else {}
    if args.hour:
        return {**old, "hour": measure_hour(args)}
    seconds = args.seconds or (6.0 if args.smoke else 60.0)
    repeats = args.repeats or (2 if args.smoke else 3)
    if args.cache is None:  # the folder lives as long as own_cache: until measure returns
        own_cache = tempfile.TemporaryDirectory(prefix="netdyn_bench_remat_")
        args.cache = own_cache.name
    if args.cache:
        # The fresh processes compile each configuration first; the timing process then
        # reads the executables back instead of compiling them again.
        use_cache(args.cache)
    data = load_data()
    n_steps = round(seconds * 1000.0 / DT)
    labels = list(args.configs or (QUICK_CONFIGS if args.smoke else FULL_CONFIGS))
    if args.compare == "tvboptim":
        labels += TVBO_CONFIGS
    print(f"{len(labels)} configurations, {n_steps} steps; load {C.loadavg()}")
    memory = {}
    print("fresh process per configuration (memory, loss, gradient):", flush=True)
    for label in labels:
        res = fresh_process(label, seconds, args.cache)
        if "error" not in res:
            res["grad_value"] = res.pop("grad")
            print(f"  {label}: temp {mb(res['temp_bytes']):.2f} MB, peak RSS "
                  f"{mb(res['rss_peak']):.0f} MB, loss {res['loss']:.10f}, grad "
                  f"{res['grad_value']:.12e}"
                  + (f" [{res['auto_choice']}]" if res["auto_choice"] else ""), flush=True)
        memory[label] = res
    timed = [label for label in labels if "error" not in memory[label]]
    print("interleaved timing:", flush=True)
    times = interleaved_times(timed, data, seconds, repeats)
    return {"seconds": seconds, "data": data[3], "rows": build_rows(labels, times, memory, n_steps),
            "args": {"quick": args.smoke, "repeats": repeats, "compare": args.compare},
            **({"hour": old["hour"]} if "hour" in old else {})}


def render(m) -> str:
    """The report: the strategies' tables, then the one-hour section."""
    lines = render_main(m) if "rows" in m else []
    if "hour" in m:
        lines += ["", *render_hour(m["hour"])] if lines else render_hour(m["hour"])
    return "\n".join(lines) + "\n"


def use_cache(folder: str) -> None:
    """JAX's persistent compilation cache in ``folder``, every program kept."""
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--seconds", type=float, default=None,
                   help="model time (s); 60 (--smoke: 6; --hour: 3600)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed calls per config; 3 (--smoke: 2)")
    p.add_argument("--compare", choices=["tvboptim"], default=None)
    p.add_argument("--configs", nargs="+", default=None, help="override the list")
    p.add_argument("--cache", default=None,
                   help="JAX persistent compilation cache shared by the fresh processes "
                   "(default: a new temporary directory per run, so that every fresh process "
                   "compiles; '' disables)")
    p.add_argument("--hour", action="store_true",
                   help="measure the one-hour section only (the rest kept from the .json)")
    p.add_argument("--remat", default=HOUR_REMAT, help=f"--hour's strategy ({HOUR_REMAT})")
    p.add_argument("--no-forward", action="store_true", help="--hour: skip the forward call")
    p.add_argument("--compile-only", nargs="*", default=None,
                   help=f"--hour: strategies compiled for their memory ({HOUR_COMPILE_ONLY})")


def child(argv) -> None:
    """A fresh process of ``fresh_process`` (``--one``) or ``measure_hour`` (``--hour-one``)."""
    p = argparse.ArgumentParser()
    p.add_argument("--one")
    p.add_argument("--hour-one")
    p.add_argument("--seconds", type=float)
    p.add_argument("--cache", default="")
    p.add_argument("--no-forward", action="store_true")
    p.add_argument("--json", type=Path)
    a = p.parse_args(argv)
    if a.cache:
        use_cache(a.cache)
    if a.one is not None:
        measure_one(a.one, a.seconds, a.json)
    else:
        run_hour(a.hour_one, a.seconds, not a.no_forward, a.json)


if __name__ == "__main__":
    if {"--one", "--hour-one"} & set(sys.argv):
        child(sys.argv[1:])
    else:
        H.main(measure, render, doc=__doc__, name="remat", options=options, figure=plot)
