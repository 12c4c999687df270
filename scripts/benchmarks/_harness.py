"""The benchmark scripts' driver: shared flags, strict JSON, Markdown tables, fresh processes.

A script is a ``measure(args) -> dict`` (JSON-able measurements) and a ``render(m) -> str``
(the report); ``main`` parses the shared flags (``--out``, ``--from-json``, ``--smoke``:
``parser``), measures or reads the measurements back, saves them beside the report with
the machine, the load averages and the options (``argv``) added, and writes the report.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _common as C

# Non-finite floats are written as these strings (JSON has no NaN) and read back as floats.
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def plain(x, null: bool = False):
    """``x`` with numpy arrays and scalars as lists and Python numbers, tuples as lists and
    non-finite floats as ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"`` (``null``: ``None``)."""
    import numpy as np

    if isinstance(x, dict):
        return {str(k): plain(v, null) for k, v in x.items()}
    if isinstance(x, np.ndarray | np.generic):
        return plain(x.tolist(), null)
    if isinstance(x, list | tuple):
        return [plain(v, null) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None if null else "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def dumps(x) -> str:
    """Strict JSON of ``x`` (``plain``): never Python's bare ``NaN``."""
    return json.dumps(plain(x), indent=1, allow_nan=False)


def _restore(x):
    if isinstance(x, dict):
        return {k: _restore(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_restore(v) for v in x]
    if isinstance(x, str) and x in _NONFINITE:
        return _NONFINITE[x]
    return x


def loads(text: str):
    """What ``dumps`` wrote (and older files' bare ``NaN``), non-finite floats restored."""
    return _restore(json.loads(text))


def num(x, spec: str = ".3f", missing: str = "–") -> str:
    """``x`` formatted with ``spec``, or ``missing`` where it is ``None`` or not finite."""
    return missing if x is None or not math.isfinite(x) else format(x, spec)


def pm(pair, digits: int = 3, missing: str = "–") -> str:
    """``(mean, sd)`` as ``"mean ± sd"`` with ``digits`` decimals, or ``missing`` for ``None``."""
    return missing if pair is None else f"{pair[0]:.{digits}f} ± {pair[1]:.{digits}f}"


def table(head, rows) -> list[str]:
    """A Markdown table's lines: the header cells ``head``, then one line per row of cells."""
    return [f"| {' | '.join(map(str, head))} |", "|" + "---|" * len(head),
            *(f"| {' | '.join(map(str, r))} |" for r in rows)]


def pyplot():
    """``matplotlib.pyplot`` drawing to files, or ``None`` (said) where it is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure (pip install 'netdyn[plot]')")
        return None
    return plt


# ------------------------------------------------------------------------- fresh processes


def _env() -> dict:
    """This process's environment with this checkout and the scripts' folder importable."""
    path = [str(C.ROOT), str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, path))}


def run_script(script: str, argv: list[str], timeout: float | None = None) -> dict:
    """Run ``python script ARGV --json FILE`` in a fresh process: the JSON it wrote (with
    ``peak_rss``, its peak resident memory in bytes, where it gave none), or ``{"error":
    ...}`` with the tail of its output."""
    import resource

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        try:
            proc = subprocess.run([sys.executable, script, *argv, "--json", str(path)],
                                  capture_output=True, text=True, env=_env(), timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:g} s"}
        if proc.returncode != 0 or not path.is_file():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            return {"error": f"exit {proc.returncode}: " + " / ".join(tail)}
        out = loads(path.read_text())
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if isinstance(out, dict) and peak > before:  # the largest child so far: this one's
        out.setdefault("peak_rss", peak * 1024)
    return out


def run_cli(argv: list[str]) -> tuple[float, list[tuple[float, str]]]:
    """Run ``netdyn ARGV`` in a fresh process (this checkout's netdyn): its wall clock from
    start to exit and each line it printed with the second it appeared (echoed here)."""
    code = "import sys; from netdyn.cli import main; sys.argv[0] = 'netdyn'; sys.exit(main())"
    print("$ netdyn " + " ".join(argv), flush=True)
    lines, t0 = [], time.perf_counter()
    with subprocess.Popen([sys.executable, "-c", code, *argv], env=_env(), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:
        for line in proc.stdout:  # universal newlines: a progress bar's \r ends a line too
            lines.append((time.perf_counter() - t0, line.rstrip()))
            print("  " + line.rstrip(), flush=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"netdyn {' '.join(argv)} exited with {proc.returncode}")
    return wall, lines


def without_temporary_paths(text: str) -> str:
    """``text`` with the paths into the temporary folder (the command's files and results
    there) as ``<temporary>``: saved measurements name no machine's paths."""
    import re

    return re.sub(re.escape(tempfile.gettempdir()) + r"/[^\s\"',]*", "<temporary>", text)


def fit_here(argv: list[str]) -> dict:
    """``netdyn ARGV`` in this process, its output captured: its exit status, wall seconds,
    last 4 printed lines and, when it succeeded, its ``params.json`` (``--out``'s)."""
    import contextlib
    import io

    import netdyn as nd

    printed, start = io.StringIO(), time.perf_counter()
    with contextlib.redirect_stdout(printed):
        status = nd.cli.main(argv)
    seconds = time.perf_counter() - start
    report = None
    if status == 0:
        report = (Path(argv[argv.index("--out") + 1]) / "params.json").read_text()
        report = loads(without_temporary_paths(report))
    lines = without_temporary_paths(printed.getvalue()).strip().splitlines()
    return {"status": status, "seconds": seconds, "report": report, "summary": lines[-4:]}


# ------------------------------------------------------------------------------ the driver


def parser(doc: str, name: str) -> argparse.ArgumentParser:
    """The shared flags of a script whose report is ``benchmarks/NAME.md``."""
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0], allow_abbrev=False)
    p.add_argument("--out", type=Path, default=None,
                   help=f"the report, its measurements beside it as .json (default "
                   f"benchmarks/{name}.md; --smoke: a temporary folder)")
    p.add_argument("--from-json", type=Path, default=None, metavar="PATH",
                   help="render the report from saved measurements (X.json into X.md unless "
                   "--out is given), measuring nothing")
    p.add_argument("--smoke", action="store_true", help="a fast run of every code path")
    return p


def out_path(args, name: str) -> Path:
    """Where the report goes: ``--out``, beside the measurements of ``--from-json``, a
    temporary folder for ``--smoke``, else ``benchmarks/NAME.md``."""
    if args.out is not None:
        return args.out
    if args.from_json is not None:
        return args.from_json.with_suffix(".md")
    if args.smoke:
        return Path(tempfile.mkdtemp(prefix=f"bench_{name}_")) / f"{name}.md"
    return C.RESULTS / f"{name}.md"


def main(measure: Callable, render: Callable, *, doc: str, name: str | Callable,
         options: Callable | None = None, figure: Callable | None = None,
         argv: list[str] | None = None) -> None:
    """Parse the shared flags (and ``options(parser)``'s), measure or read back, write the
    report ``render(measurements)``, ``figure(measurements, report path)`` when given and,
    when measured, the ``.json`` beside it. ``name``: the report's, or a function of the
    parsed arguments giving it."""
    p = parser(doc, name if isinstance(name, str) else "NAME")
    if options is not None:
        options(p)
    args = p.parse_args(argv)
    # resolved once: measure's own out_path(args, ...) then names the same (temporary) file
    out = args.out = out_path(args, name if isinstance(name, str) else name(args))
    if args.from_json is not None:
        m = loads(args.from_json.read_text())
    else:
        info = C.machine_info()
        m = measure(args)
        # setdefault: a measure that adds a section to earlier measurements keeps theirs
        for key, value in (("machine", info), ("end_load", C.loadavg()),
                           ("max_load", C.peak_load()),
                           ("argv", without_out(sys.argv[1:] if argv is None else argv))):
            m.setdefault(key, value)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(dumps(m) + "\n")
    out.write_text(render(m), encoding="utf-8")
    if figure is not None:
        figure(m, out)
    print(f"wrote {out}" + ("" if args.from_json else " (and .json)"))


def shown_argv(m: dict) -> list[str]:
    """The options a report names as its command's: those it ran with, less ``--out``."""
    return without_out(m.get("argv", []))


def without_out(argv: list[str]) -> list[str]:
    """``argv`` less ``--out`` and its value: where the files went (a machine's path, never
    saved), not what was measured."""
    out = []
    for i, a in enumerate(argv):
        if a != "--out" and not a.startswith("--out=") and (i == 0 or argv[i - 1] != "--out"):
            out.append(a)
    return out


def machine(m: dict) -> list[str]:
    """The ``## Machine`` lines of measurements saved by ``main``."""
    return C.machine_section(m["machine"], m.get("end_load") or "not recorded in the JSON",
                             m.get("max_load"))
