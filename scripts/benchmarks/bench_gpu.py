"""GPU benchmark: forward, gradient and batched throughput, netdyn beside tvboptim, in one run.

Three sections, float64 and float32, each under its share (``SHARES``) of ``--budget``
(420 s: the whole stays under 8 minutes on an H100, compilation and start-up included):

1. **Forward**, µs per step: ``bench_forward.py``'s reference network for 10 s under
   ``nd.NoRemat(unroll=u)``, u in 1, 4, 8, 16 (checked bit-identical to ``unroll=1``), and
   tvboptim 0.4's ``prepare`` / ``Heun``; calls interleaved, best of up to 5.
2. **Gradient** of ``bench_remat.py``'s reference loss (60 s, HRF BOLD in the loop): time
   and XLA's temporary memory under ``Uniform(1000)``, ``MultiLevel(16)``, ``NoRemat`` and
   tvboptim's default, ``block_size=1000`` and blocks + streaming BOLD; the forward of the
   same loss for ``NoRemat`` and tvboptim's default.
3. **Batched forward**, float32: ``bench_batch.py``'s programs (``vmap`` over G, one noise
   key) with a 1 s average, B in 256 ... 8192, in network-steps per second; a batch whose
   compiled memory exceeds the device's free memory, or the budget, is skipped with a note.

The shares follow the issue's H100 figures (10 s forward ~0.11 s; one round of the gradient
section ~28 s; a pass over B ~29 s for netdyn, ~16 s for tvboptim); every section stops
timing at its deadline after one call per case. Each dtype runs in a child process
(float32 with ``jax_enable_x64`` off) that saves its JSON after every case, so a child
stopped by its time limit still reports; compilation runs in a thread pool.

    python scripts/benchmarks/bench_gpu.py            # on the GPU machine, < 8 min
    python scripts/benchmarks/bench_gpu.py --smoke    # tiny sizes, any backend, < 1 min

Without tvboptim its side is skipped with a note (the connectome is then the embedded
``hcp``; the forward uses a random 84-node graph).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax  # no backend started on import: the parent keeps to the CPU (see __main__)
import jax.numpy as jnp
import numpy as np
from _common import DT, PERIOD, G
from bench_batch import programs

import netdyn as nd

FULL = {"forward_seconds": 10.0, "grad_seconds": 60.0, "unrolls": (1, 4, 8, 16),
        "batches": (256, 1024, 2048, 4096, 8192), "batch_seconds": 10.0, "budget": 420.0,
        "netdyn_grad": ("Uniform(1000)", "NoRemat", "MultiLevel(16)"),
        "tvboptim_grad": ("tvboptim", "tvboptim(1000,stream)", "tvboptim(1000)")}
# --smoke: every code path at tiny sizes, one configuration per kind of gradient.
SMOKE = {"forward_seconds": 0.3, "grad_seconds": 3.0, "unrolls": (1, 4),
         "batches": (2, 4), "batch_seconds": 0.3, "budget": 50.0,
         "netdyn_grad": ("Uniform(1000)", "NoRemat"),
         "tvboptim_grad": ("tvboptim", "tvboptim(1000,stream)")}
# Shares of --budget per section (the rest: process start-up, imports, the report).
SHARES = {"forward-float64": 0.10, "forward-float32": 0.10, "gradient-float64": 0.24,
          "gradient-float32": 0.16, "batched-float32": 0.28}


# ----------------------------------------------------------------------------- workloads


def netdyn_forward(w, lengths, seconds, remat=None):
    """``run(net, key)``: the forward of the reference network (1 s temporal average, or
    every step below 1 s) in the process's default float; ``(run, (net, key))``."""
    net = C.reference_network(w, lengths, jnp.zeros(()).dtype)  # float64 with x64
    monitor = nd.TemporalAverage(period=PERIOD) if seconds * 1000.0 >= PERIOD else nd.Raw()
    solver = nd.Heun() if remat is None else nd.Heun(remat=remat)

    def run(net, key, batch_last=False):
        return nd.simulate(net, solver, t0=0.0, t1=seconds * 1000.0, dt=DT,
                           monitors={"out": monitor}, key=key, batch_last=batch_last)["out"]

    return run, (net, jax.random.key(0))


def netdyn_loss(label, w, lengths, fc, seconds):
    """``loss(G)``: the reference loss (HRF BOLD in the loop, FC, RMSE) under ``label``."""
    dtype = jnp.zeros(()).dtype
    net = C.reference_network(w, lengths, dtype)
    target = jnp.asarray(fc, dtype)
    skip = C.skip_samples(seconds)
    solver = nd.Heun(remat=C.make_remat(label))
    monitor = nd.HrfBold(period=PERIOD, interim=DT)

    def loss(G):
        sol = nd.simulate(eqx.tree_at(lambda n: n.coupling.G, net, G), solver, t0=0.0,
                          t1=seconds * 1000.0, dt=DT, monitors={"bold": monitor},
                          key=jax.random.key(0))
        return nd.rmse(nd.fc(sol["bold"][skip:]), target)

    return loss


# --------------------------------------------------------------------------- the child


class Child:
    """One dtype's measurements; ``save`` rewrites the JSON after every case."""

    def __init__(self, args):
        self.args, self.dtype = args, args.part
        stats = memory_stats()
        usable = f", {stats['bytes_limit'] / 2**30:.1f} GiB usable" if stats else ""
        d = jax.devices()[0]
        device = f"{d.platform}: {getattr(d, 'device_kind', '?')}{usable} (jax {jax.__version__})"
        self.results = {"dtype": self.dtype, "forward": [], "gradient": [], "batched": [],
                        "notes": [], "device": device, "backend": jax.default_backend()}
        self.have_tvbo = C.have_tvboptim() and not args.no_tvboptim
        if not self.have_tvbo:
            self.note("tvboptim not importable (or --no-tvboptim): its side is skipped.")
        self.save()

    def note(self, text):
        print(f"[{self.dtype}] note: {text}", flush=True)
        self.results["notes"].append(text)
        self.save()

    def save(self):
        with open(self.args.json, "w") as f:
            json.dump(self.results, f, indent=1)


def memory_stats() -> dict:
    """The first device's ``memory_stats()`` with a ``bytes_limit``, else ``{}`` (not every
    backend reports its memory)."""
    try:
        stats = jax.devices()[0].memory_stats() or {}
    except Exception:  # noqa: BLE001
        return {}
    return stats if "bytes_limit" in stats else {}


def compile_all(child, section, lowerings):
    """Compile ``{name: lowered}`` in a thread pool: ``({name: executable or exception},
    {name: seconds}, wall seconds)``. XLA compiles outside the GIL."""

    def one(item):
        name, lowered = item
        t = time.perf_counter()
        try:
            return name, lowered.compile(), time.perf_counter() - t
        except Exception as e:  # noqa: BLE001 - reported per case
            return name, e, time.perf_counter() - t

    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        done = list(pool.map(one, lowerings.items()))
    wall = time.perf_counter() - t
    print(f"[{child.dtype}] {section}: {len(done)} programs compiled in {wall:.1f} s",
          flush=True)
    return {n: c for n, c, _ in done}, {n: s for n, _, s in done}, wall


def compile_cases(child, section, lowered, deadline):
    """Compile ``{name: (lowered, args)}`` (``compile_all``), each failure noted:
    ``({name: (executable, args)}, {name: compile seconds}, wall seconds)``."""
    compiled, compile_s, wall = compile_all(child, section,
                                            {k: v[0] for k, v in lowered.items()})
    cases = {}
    for name, exe in compiled.items():
        if isinstance(exe, Exception):
            label = name if isinstance(name, str) else f"{name[0]} ({name[1]})"
            child.note(f"{section} {label}: compile failed: {str(exe).splitlines()[0][:200]}")
        else:
            cases[name] = (exe, lowered[name][1])
    if time.perf_counter() > deadline:
        child.note(f"{section}: time budget spent compiling; one call per case, no warm-up.")
    return cases, compile_s, wall


def forward_section(child, data, deadline):
    args = child.args
    w, lengths = data["connectome"]
    n_steps = round(args.forward_seconds * 1000.0 / DT)
    lowered = {}
    for u in args.unrolls:
        run, a = netdyn_forward(w, lengths, args.forward_seconds, nd.NoRemat(unroll=u))
        lowered[f"netdyn unroll={u}"] = (jax.jit(run).lower(*a), a)
    if child.have_tvbo:
        run, a = C.tvboptim_forward(w, lengths, args.forward_seconds)
        lowered["tvboptim"] = (jax.jit(run).lower(*a), a)
    cases, compile_s, wall = compile_cases(child, "forward", lowered, deadline)
    outputs = {}
    times = C.interleaved(cases, args.repeats, warmup=True, deadline=deadline,
                          outputs=outputs)
    ref = np.asarray(outputs["netdyn unroll=1"]) if "netdyn unroll=1" in outputs else None
    for name, ts in times.items():
        tv = name == "tvboptim"
        child.results["forward"].append({
            "tool": "tvboptim" if tv else "netdyn",
            "unroll": None if tv else int(name.split("=")[1]),
            "us_best": min(ts) / n_steps * 1e6,
            "us_median": float(np.median(ts)) / n_steps * 1e6, "calls": len(ts),
            "compile_s": compile_s[name], "identical": None if tv or ref is None
            else bool(np.array_equal(np.asarray(outputs[name]), ref)),
        })
        print(f"[{child.dtype}] forward {name}: {min(ts) / n_steps * 1e6:.2f} µs/step",
              flush=True)
    child.results.update(forward_steps=n_steps, forward_compile_wall_s=wall)
    child.save()


def gradient_section(child, data, deadline):
    args = child.args
    w, lengths, fc = data["loss_data"]
    seconds = args.grad_seconds
    G0 = jnp.asarray(G)
    losses = {label: netdyn_loss(label, w, lengths, fc, seconds) for label in args.netdyn_grad}
    if child.have_tvbo:
        for label in args.tvboptim_grad:
            losses[label] = C.tvboptim_loss(label, w, lengths, fc, seconds,
                                            skip=C.skip_samples(seconds))
    lowered = {(label, "grad"): (jax.jit(jax.value_and_grad(loss)).lower(G0), (G0,))
               for label, loss in losses.items()}
    for label in ("NoRemat", "tvboptim"):
        if label in losses:
            lowered[(label, "fwd")] = (jax.jit(losses[label]).lower(G0), (G0,))
    cases, compile_s, wall = compile_cases(child, "gradient", lowered, deadline)
    outputs = {}
    times = C.interleaved(cases, args.repeats, warmup=True, deadline=deadline,
                          outputs=outputs)
    fwd = {label: min(times[(label, "fwd")]) for label in ("NoRemat", "tvboptim")
           if (label, "fwd") in times}
    for label in losses:
        if (label, "grad") not in times:
            continue
        value, g = outputs[(label, "grad")]
        ts = times[(label, "grad")]
        tool = "tvboptim" if label.startswith("tvboptim") else "netdyn"
        temp_mb = cases[(label, "grad")][0].memory_analysis().temp_size_in_bytes / 1e6
        child.results["gradient"].append({
            "label": label, "tool": tool, "grad_s": min(ts),
            "grad_median_s": sorted(ts)[len(ts) // 2], "calls": len(ts),
            "fwd_s": fwd.get("tvboptim" if tool == "tvboptim" else "NoRemat"),
            "temp_mb": temp_mb, "compile_s": compile_s[(label, "grad")], "loss": float(value),
            "grad": float(g)})
        print(f"[{child.dtype}] gradient {label}: {min(ts):.3f} s, {temp_mb:.2f} MB", flush=True)
    child.results.update(grad_seconds=seconds, gradient_compile_wall_s=wall)
    child.save()


def batched_section(child, data, deadline):
    w, lengths = data["connectome"]
    seconds = child.args.batch_seconds
    n_steps = round(seconds * 1000.0 / DT)
    period = PERIOD if seconds * 1000.0 >= PERIOD else DT  # below 1 s: every step
    fns = programs(w, lengths, seconds, jnp.zeros(()).dtype, period)
    fns = {"netdyn": fns.pop("netdyn, shared graph"), **fns}  # netdyn first at every B
    if not child.have_tvbo:
        fns.pop("tvboptim", None)
    compiled, compile_s, wall = compile_all(child, "batched", {
        (tool, B): jax.jit(fn).lower(jnp.linspace(0.3, 0.7, B))
        for tool, fn in fns.items() for B in child.args.batches})
    child.results.update(batch_steps=n_steps, batch_compile_wall_s=wall)
    # netdyn at every B first (the order of fns), the others with what is left
    rate = dict.fromkeys(fns, 4e6)  # network-steps/s, a pessimistic first guess
    for (tool, B), exe in compiled.items():
        row = {"tool": tool, "B": B, "compile_s": compile_s[(tool, B)]}
        child.results["batched"].append(row)
        if isinstance(exe, Exception):
            row["note"] = f"compile failed: {str(exe).splitlines()[0][:200]}"
        else:
            mem = exe.memory_analysis()
            row.update(temp_mb=mem.temp_size_in_bytes / 1e6, out_mb=mem.output_size_in_bytes / 1e6)
            need = mem.temp_size_in_bytes + mem.output_size_in_bytes
            stats = memory_stats()
            free = stats["bytes_limit"] - stats.get("bytes_in_use", 0) if stats else None
            estimate = B * n_steps / rate[tool]
            if free is not None and need > 0.9 * free:
                row["note"] = f"skipped: needs {need / 1e9:.1f} GB, {free / 1e9:.1f} GB free"
            elif time.perf_counter() + estimate > deadline:
                row["note"] = f"skipped: time budget (estimated {estimate:.0f} s per call)"
        if "note" in row:
            child.save()
            continue
        Gs = jnp.linspace(0.3, 0.7, B)
        ts = []
        for _ in range(3):  # the first call included: one call may be all there is time for
            t = time.perf_counter()
            jax.block_until_ready(exe(Gs))
            ts.append(time.perf_counter() - t)
            if time.perf_counter() + ts[-1] > deadline or (ts[-1] > 1.0 and len(ts) == 2):
                break  # calls over a second: best of two
        best = min(ts)
        rate[tool] = B * n_steps / best
        row.update({"s_per_call": best, "calls": len(ts), "rate": rate[tool]})
        print(f"[{child.dtype}] batched {tool} B={B}: {rate[tool] / 1e6:.2f} M "
              f"network-steps/s ({best:.2f} s, temp {row['temp_mb']:.0f} MB)", flush=True)
        child.save()


def run_child(args):
    jax.config.update("jax_enable_x64", args.part == "float64")
    child = Child(args)
    w, lengths, _ = C.load_connectome()
    lw, ll, fc, _desc = C.load_data()
    data = {"connectome": (w, lengths), "loss_data": (lw, ll, fc)}
    start = time.perf_counter()
    sections = [("forward", forward_section), ("gradient", gradient_section)]
    if args.part == "float32":
        sections.append(("batched", batched_section))
    for name, section in sections:
        t = time.perf_counter()
        try:
            section(child, data, t + SHARES[f"{name}-{args.part}"] * args.budget)
        except Exception as e:  # noqa: BLE001 - one section failing must not lose the others
            child.note(f"{name}: failed: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
        child.results[f"{name}_wall_s"] = time.perf_counter() - t
        child.save()
    child.results["wall_s"] = time.perf_counter() - start
    child.save()


# -------------------------------------------------------------------------- the parent


def run_parts(args):
    """Run the float64 and float32 children (this command's options, sizes settled); their
    results."""
    settled = [f"--{k.replace('_', '-')}={getattr(args, k)!r}"
               for k in ("budget", "forward_seconds", "grad_seconds", "batch_seconds")]
    listed = [x for k in ("unrolls", "batches", "netdyn_grad", "tvboptim_grad")
              for x in (f"--{k.replace('_', '-')}", *map(str, getattr(args, k)))]
    parts = {}
    for part in ("float64", "float32"):
        # A safety net only: the sections keep to their shares of the budget themselves.
        limit = args.budget * sum(v for k, v in SHARES.items() if k.endswith(part)) + 45
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{part}.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--part", part, "--json", path,
                   "--repeats", str(args.repeats), *settled, *listed,
                   *(["--no-tvboptim"] if args.no_tvboptim else [])]
            t = time.perf_counter()
            try:
                rc = subprocess.run(cmd, timeout=limit).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            result = {}
            if os.path.exists(path):
                with open(path) as f:
                    result = json.load(f)
            if rc != 0:
                result.setdefault("notes", []).append(
                    f"the {part} process ended with {rc} after "
                    f"{time.perf_counter() - t:.0f} s: its results are partial.")
            result["process_s"] = time.perf_counter() - t
            parts[part] = result
    return parts


def render(m: dict) -> str:
    """The report of both children's results."""
    parts, args = m["parts"], argparse.Namespace(**m["settings"])
    f64, f32 = parts.get("float64", {}), parts.get("float32", {})
    device = f64.get("device") or f32.get("device")
    backend = f64.get("backend") or f32.get("backend")
    lines = [
        "# GPU benchmark: forward, gradient and batched throughput against tvboptim", "",
        f"Generated by `{C.command('bench_gpu.py', args.smoke and '--smoke')}` in "
        f"{m['elapsed']:.0f} s on **{device}**. The reference network: "
        f"{C.reference_text(m['sources'][0])} (forward and batched sections; the gradient on "
        f"{m['sources'][1]}); netdyn and tvboptim 0.4 in one process per dtype (float32 with "
        "`jax_enable_x64` off). Compiled calls, best of those the time budget allowed."]
    if backend != "gpu":
        lines += ["", f"**Not a GPU** (backend `{backend}`): these figures are not the H100's."
                  + (" Smoke run: tiny sizes, only to check that the script runs."
                     if args.smoke else "")]
    lines += H.machine(m)

    steps = next((p.get("forward_steps") for p in parts.values() if p.get("forward_steps")),
                 None)
    rows = [(part, r["tool"], r["unroll"] or "—", f"{r['us_best']:.2f}", f"{r['us_median']:.2f}",
             r["calls"], f"{tv['us_best'] / r['us_best']:.2f}x" if tv else "—",
             "" if r["identical"] is None else ("yes" if r["identical"] else "**NO**"),
             f"{r['compile_s']:.1f}")
            for part, rs, tv in per_part(parts, "forward", "tool") for r in rs]
    lines += [
        "", "## Single-simulation forward", "",
        f"{args.forward_seconds:g} s of model time ({steps} steps), "
        + ("1 s temporal average, " if args.forward_seconds >= 1 else "every step recorded, ")
        + "netdyn under `nd.NoRemat(unroll=u)`, tvboptim's `prepare(network, Heun())`. "
        "*speed-up*: tvboptim's time / netdyn's. *= unroll 1*: the samples are bit-identical "
        "to `unroll=1`'s. *compile*: in a thread pool with the section's other programs.", "",
        *H.table(("dtype", "tool", "unroll", "µs/step (best)", "median", "calls",
                  "speed-up vs tvboptim", "= unroll 1", "compile s"), rows)]

    rows = [(part, r["label"], f"{r['grad_s']:.3f}", f"{r['grad_median_s']:.3f}", r["calls"],
             f"{r['grad_s'] / r['fwd_s']:.2f}" if r.get("fwd_s") else "—",
             f"{r['grad_s'] / tv['grad_s']:.2f}x" if tv else "—", f"{r['temp_mb']:.2f}",
             f"{r['loss']:.8f}", f"{r['grad']:.6e}")
            for part, rs, tv in per_part(parts, "gradient", "label") for r in rs]
    lines += [
        "", "## Gradient", "",
        f"The reference loss: {args.grad_seconds:g} s, TVB's HRF-kernel BOLD at TR = "
        f"{PERIOD:g} ms (netdyn: `nd.HrfBold(period={PERIOD:g}, interim={DT:g})` in the loop;"
        " tvboptim: `HRFBold` after the solve, or block by block with its streaming "
        "reduction), FC after the first samples, RMSE against the empirical FC, "
        "`jax.value_and_grad` with respect to G. *temp MB*: XLA's compiled temporary memory "
        "of the gradient (`memory_analysis()`). *grad / fwd*: against the forward of the "
        "same loss (netdyn `NoRemat`, tvboptim default). tvboptim's block sizes draw its "
        "noise per block, so each configuration has its own loss; "
        "`tvboptim(1000,stream)` computes the same loss and gradient as blocks of 1000 with "
        "the BOLD after the solve (checked in `remat.md`).", "",
        *H.table(("dtype", "configuration", "gradient s (best)", "median", "calls",
                  "grad / fwd", "vs tvboptim default", "temp MB", "loss", "dloss/dG"), rows)]

    lines += [
        "", "## Batched forward throughput (float32)", "",
        f"`jax.jit(jax.vmap(forward))` over B values of G, {args.batch_seconds:g} s of model "
        f"time ({f32.get('batch_steps')} steps) per simulation, the same noise in every "
        "simulation (one key, as `nd.sweep`), the forward of the first section (netdyn's "
        "default `unroll` for the backend). *network-steps/s*: B x steps / wall time of one "
        "call (best of up to 3, the first included). *temp / output MB*: XLA's compiled "
        "memory.", "",
        *H.table(("tool", "B", "s per call", "M network-steps/s", "calls", "temp MB",
                  "output MB", "note"), [
            (r["tool"], r["B"], *((f"{r['s_per_call']:.3f}", f"{r['rate'] / 1e6:.2f}",
                                   r["calls"]) if "rate" in r else ("—",) * 3),
             f"{r.get('temp_mb', math.nan):.0f}", f"{r.get('out_mb', math.nan):.1f}",
             r.get("note", "")) for r in f32.get("batched", [])])]

    walls = [f"{part} process {p.get('process_s', math.nan):.0f} s (forward "
             f"{p.get('forward_wall_s', math.nan):.0f} s, gradient "
             f"{p.get('gradient_wall_s', math.nan):.0f} s"
             + (f", batched {p.get('batched_wall_s', math.nan):.0f} s" if part == "float32"
                else "") + ")"
             for part, p in parts.items()]
    notes = [f"- {part}: {n}" for part, p in parts.items() for n in p.get("notes", [])]
    lines += [
        "", "## What was measured", "", f"- Time budget {args.budget:g} s; "
        + "; ".join(walls) + ".", *(notes or ["- Every case ran."]),
        "- Not measured by this script: the test suite on the GPU (`pytest -n 8`), "
        "`nd.sweep` / `fit_multistart` across processes, the CPU figures "
        "(`forward.md`, `remat.md`), and `Policy(names, offload=True)` (host offloading "
        "was removed in commit 5105bec: nothing to compile or measure)."]
    return "\n".join(lines).rstrip("\n") + "\n"


def per_part(parts, section, key):
    """``(dtype, rows, tvboptim's default row or None)`` of ``section`` per dtype."""
    for part in ("float64", "float32"):
        rs = parts.get(part, {}).get(section, [])
        yield part, rs, next((r for r in rs if r[key] == "tvboptim"), None)


def options(p) -> None:
    """This benchmark's own flags (and the children's)."""
    add = p.add_argument
    add("--budget", type=float, default=None,
        help="seconds for all sections (default 420; smoke 50)")
    add("--repeats", type=int, default=5, help="timed rounds at most")
    add("--forward-seconds", type=float, default=None, help="default 10")
    add("--grad-seconds", type=float, default=None, help="default 60")
    add("--batch-seconds", type=float, default=None, help="default 10")
    add("--unrolls", type=int, nargs="+", default=None)
    add("--batches", type=int, nargs="+", default=None)
    add("--netdyn-grad", nargs="+", default=None,
        help=f"netdyn's gradient strategies (default {' '.join(FULL['netdyn_grad'])}; "
        "NoRemat is the forward's reference)")
    add("--tvboptim-grad", nargs="+", default=None,
        help=f"tvboptim's gradient configurations (default "
        f"{' '.join(FULL['tvboptim_grad'])}; _common.TVBOPTIM_LABEL)")
    add("--no-tvboptim", action="store_true", help="netdyn only")
    add("--part", choices=["float64", "float32"], help=argparse.SUPPRESS)
    add("--json", help=argparse.SUPPRESS)


def settle(args) -> None:
    """The sizes not given: the defaults, or ``SMOKE``'s."""
    for k, v in (SMOKE if args.smoke else FULL).items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if 1 not in args.unrolls:
        raise SystemExit("--unrolls must include 1 (the reference of the bit-identity check)")


def measure(args) -> dict:
    """Both children's results; the machine as this (CPU-only) parent sees it."""
    settle(args)
    info = C.machine_info()
    info.pop("jax", None)  # the parent's CPU backend: the device line says what ran
    t = time.perf_counter()
    parts = run_parts(args)
    return {"parts": parts, "elapsed": time.perf_counter() - t, "machine": info,
            "sources": (C.load_connectome()[2], C.load_data()[3]),
            "settings": {k: getattr(args, k) for k in (
                "smoke", "budget", "forward_seconds", "grad_seconds", "batch_seconds")}}


if __name__ == "__main__":
    if "--part" in sys.argv:  # a child: measures one dtype on the accelerator
        p = argparse.ArgumentParser()
        p.add_argument("--smoke", action="store_true")
        options(p)
        run_child(p.parse_args())  # every size given by the parent
    else:
        jax.config.update("jax_platforms", "cpu")  # keep the accelerator for the children
        H.main(measure, render, doc=__doc__, name="gpu", options=options)
