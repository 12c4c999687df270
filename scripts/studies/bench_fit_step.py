"""One step of the heterogeneous simulated fit on the default backend (a GPU where there is
one): compile time, and the step's time next to its loss's forward. Writes
benchmarks/fit_step.md (and .json).

Issue 37 (the GPU table: a fit step). The step of ``bench_heterogeneity.py``'s gradient
fit: rww-ei-fic with FIC on the embedded HCP data, G and one mean-free input log-gain per
region (k = 81), ``nd.FcLoss`` of 4 x 43.2 s after a 57.6 s burn-in (its gradient exact),
``Uniform(720, stages='save')``, float64; ``jax.value_and_grad`` and Adam's update compiled
as one program, as the benchmark's fit runs it. Timed best of ``--repeats`` after a warm-up
call; the forward (the loss alone) timed alike, the two interleaved.

    python scripts/studies/bench_fit_step.py            # on the GPU machine, ~2 min
    python scripts/studies/bench_fit_step.py --smoke    # short runs, any backend
"""

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import bench_heterogeneity as BH
import jax

import netdyn as nd

jax.config.update("jax_enable_x64", True)


def measure(args) -> dict:
    settings = {**(BH.QUICK if args.smoke else BH.FULL)}
    net, loss_fn, _, _ = BH.problem(args.k, nd.datasets.load("hcp"), settings)
    key, theta = jax.random.key(0), BH.start_theta(args.k)
    opt, step = BH.fit_step()  # the benchmark's own step
    state = opt.init(theta)
    facts = {"backend": jax.default_backend(), "device": str(jax.devices()[0]),
             "k": args.k}
    cases = {"forward": (BH.forward, (theta, net, loss_fn, key)),
             "step": (step, (theta, state, net, loss_fn, key))}
    for name, (fn, fargs) in cases.items():
        facts[f"first_call_{name}"] = C.timed(fn, *fargs)[1]  # compiles, then runs once
    for name, times in C.interleaved(cases, args.repeats).items():
        facts[f"seconds_{name}"] = min(times)
        print(f"{name}: first call {facts[f'first_call_{name}']:.1f} s, best "
              f"{min(times):.2f} s", flush=True)
    return {"settings": settings, "repeats": args.repeats, "smoke": args.smoke,
            "facts": facts}


def render(m: dict) -> str:
    s, f = m["settings"], m["facts"]
    cmd = C.command("studies/bench_fit_step.py", m["smoke"] and "--smoke",
                    m["repeats"] != 3 and f"--repeats {m['repeats']}",
                    f["k"] != 81 and f"--k {f['k']}")
    ratio = f["seconds_step"] / f["seconds_forward"]
    return "\n".join([
        f"# One step of the heterogeneous simulated fit on {f['backend'].upper()}", "",
        f"Written by `{cmd}`" + (" (**smoke run**: short runs, not a measurement)"
                                 if m["smoke"] else "") + " (issue 37). The gradient fit's "
        "step of `bench_heterogeneity.py`: rww-ei-fic with FIC on the embedded HCP data, G "
        f"and k - 1 input log-gains (k = {f['k']}); `nd.FcLoss` of {s['realisations']} x "
        f"{s['duration'] / 1000:g} s after a {s['burn_in'] / 1000:g} s burn-in (its gradient "
        "exact), `Uniform(720, stages='save')`, float64; `jax.value_and_grad` and Adam's "
        "update compiled as one program. Best of "
        f"{m['repeats']} calls after a first call (compilation included in that one).", "",
        "| backend | device | forward s | step s | step in forwards | first call: forward s "
        "| first call: step s |",
        "|---|---|---|---|---|---|---|",
        f"| {f['backend']} | {f['device']} | {f['seconds_forward']:.2f} | "
        f"{f['seconds_step']:.2f} | {ratio:.2f} | {f['first_call_forward']:.1f} | "
        f"{f['first_call_step']:.1f} |", "",
        *H.machine(m)]) + "\n"


def options(p) -> None:
    p.add_argument("--repeats", type=int, default=3, help="timed calls (default 3)")
    p.add_argument("--k", type=int, default=81, choices=[10, 81])


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="fit_step", options=options)
