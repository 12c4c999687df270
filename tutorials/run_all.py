"""Run every tutorial, each in a fresh Python process, and report the time of each.

    python tutorials/run_all.py --quick            # what CI runs (a few minutes)
    python tutorials/run_all.py                    # the full versions (much longer)
    python tutorials/run_all.py --quick --only sweeps_and_scale --out tutorials/_output

Figures go to ``--out`` (default: a fresh temporary folder), passed to the tutorials as
``$NETDYN_TUTORIAL_OUT``. Exits with status 1 if any tutorial fails.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# In reading order.
TUTORIALS = (
    "composing_models",
    "gradient_checkpointing",
    "fitting_rww",
    "sweeps_and_scale",
)


def main(argv=None) -> int:
    """Run the tutorials; return the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the short versions (CI)")
    parser.add_argument("--only", nargs="+", choices=TUTORIALS, default=None,
                        metavar="NAME", help=f"run only these ({', '.join(TUTORIALS)})")
    parser.add_argument("--out", default=None, help="folder for the figures")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds allowed per tutorial (default: none)")
    args = parser.parse_args(argv)

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="netdyn-tutorials-"))
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, NETDYN_TUTORIAL_OUT=str(out.resolve()), MPLBACKEND="Agg")
    names = args.only or TUTORIALS
    mode = "quick" if args.quick else "full"
    print(f"running {len(names)} tutorial(s), {mode} mode; figures in {out}", flush=True)

    results = []
    for name in names:
        command = [sys.executable, str(HERE / f"{name}.py")] + (["--quick"] if args.quick else [])
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
