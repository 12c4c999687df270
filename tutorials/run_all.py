"""Run every tutorial, each in a fresh Python process, and report the time of each.

    python tutorials/run_all.py --quick            # what CI runs (a few minutes)
    python tutorials/run_all.py                    # the full versions (much longer)
    python tutorials/run_all.py --quick --only sweeps_and_scale --out /tmp/tutorials

Each tutorial runs cell by cell through ``tutorials/_record.py``, which records what each
cell prints and the figures it saves in ``OUT/NAME/`` (passed to the tutorial as
``$NETDYN_TUTORIAL_OUT``), ``OUT`` being ``--out`` (default ``tutorials/_output``, ignored
by git). ``mkdocs build`` shows them on the tutorial pages. Exits with status 1 if any
tutorial fails.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUTS = HERE / "_output"  # where docs/_hooks/tutorials.py looks for the outputs
# In reading order.
TUTORIALS = (
    "composing_models",
    "gradient_checkpointing",
    "fitting_rww",
    "heterogeneity",
    "sweeps_and_scale",
    "eeg_jansen_rit",
    "epileptor_seeg",
    "stimulation",
)


def main(argv=None) -> int:
    """Run the tutorials; return the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the short versions (CI)")
    parser.add_argument("--only", nargs="+", choices=TUTORIALS, default=None,
                        metavar="NAME", help=f"run only these ({', '.join(TUTORIALS)})")
    parser.add_argument("--out", default=str(OUTPUTS),
                        help="folder for the outputs and figures (default: tutorials/_output)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds allowed per tutorial (default: none)")
    args = parser.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if out.resolve() == OUTPUTS.resolve():
        (out / ".gitignore").write_text("# written by tutorials/run_all.py\n*\n")
    names = args.only or TUTORIALS
    mode = "quick" if args.quick else "full"
    print(f"running {len(names)} tutorial(s), {mode} mode; outputs in {out}", flush=True)

    results = []
    for name in names:
        folder = (out / name).resolve()
        env = dict(os.environ, NETDYN_TUTORIAL_OUT=str(folder), MPLBACKEND="Agg")
        command = [sys.executable, str(HERE / "_record.py"), str(HERE / f"{name}.py"),
                   str(folder)] + (["--quick"] if args.quick else [])
        print(f"\n=== {name} ===", flush=True)
        start = time.perf_counter()
        try:
            done = subprocess.run(command, env=env, cwd=HERE.parent, timeout=args.timeout)
            status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        except subprocess.TimeoutExpired:
            status = f"FAILED (over {args.timeout:g} s)"
        results.append((name, status, time.perf_counter() - start))

    total = sum(seconds for _, _, seconds in results)
    print(f"\n{'tutorial':26s} {'status':22s} {'seconds':>8s}")
    for name, status, seconds in results:
        print(f"{name:26s} {status:22s} {seconds:8.1f}")
    print(f"{'total':26s} {'':22s} {total:8.1f}")
    return 0 if all(status == "ok" for _, status, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
