"""Does the default fit find the band of good G whatever the connectome's scale?
Writes benchmarks/fit_scaled.md (and .json).

The default ``netdyn fit`` (no options, embedded HCP data: fitted on runs 1-4, scored on
runs 5-7) against the same command on the embedded connectome with its weights
multiplied by a factor (0.8, 1.06, 1.25 by default), read from files as a user's own
data would be (weights and lengths as CSV, the 7 BOLD runs as one ``.npy``). With
linear coupling, weights x s at coupling G/s is the same network: a start that finds the
band lands at G x s equal for every s, and the test-run scores agree within noise.

    python scripts/studies/bench_fit_scaled.py                  # about 15 min, 2 CPU cores
    python scripts/studies/bench_fit_scaled.py --append --scales 0.5 2   # add rows
    python scripts/studies/bench_fit_scaled.py --smoke --scales 1.06 --extra --steps 2
"""

import argparse
import tempfile
from pathlib import Path

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import numpy as np

import netdyn as nd


def _files(folder: Path, scale: float) -> list[str]:
    """The embedded data as a user's files, weights x ``scale``; the CLI's data options."""
    data = nd.datasets.load("hcp")
    np.savetxt(folder / "weights.csv", np.asarray(data.weights) * scale, delimiter=",")
    np.savetxt(folder / "lengths.csv", np.asarray(data.lengths), delimiter=",")
    np.save(folder / "bold.npy", np.asarray(data.bold))
    return ["--weights", str(folder / "weights.csv"), "--lengths",
            str(folder / "lengths.csv"), "--bold", str(folder / "bold.npy"), "--tr", "720"]


def _run(scale: float | None, extra: list[str], out: Path) -> dict:
    """One ``netdyn fit`` (the embedded dataset when ``scale`` is None); its report."""
    with tempfile.TemporaryDirectory() as tmp:
        data = [] if scale is None else _files(Path(tmp), scale)
        run = H.fit_here(["fit", *data, *extra, "--out", str(out), "--overwrite"])
    files = [f"<files, weights x {scale}>"] if data else []
    return {"scale": 1.0 if scale is None else scale, "embedded": scale is None, **run,
            "command": "netdyn " + " ".join(["fit", *files, *extra])}


def _row(r: dict) -> str:
    if r["report"] is None:
        return f"| {r['scale']:g} | exit {r['status']} | | | | | | | {r['seconds']:.0f} |"
    p, runs = r["report"], r["report"]["runs"]
    G = p["parameters"]["coupling.G"]
    t, h = runs["test"], p["heldout"]
    return (f"| {r['scale']:g}{' (embedded)' if r['embedded'] else ''} | {G:.4f} | "
            f"{G * r['scale']:.4f} | {h['fc_r']:.3f} / {h['mean_fc']:.3f} | "
            f"{t['fc_r']:.3f} | {100 * t['fraction_of_ceiling']:.0f} % | "
            f"{t['mean_fc']:.3f} ({t['empirical_mean_fc']:.3f}) | "
            f"{t.get('fcd_ks', float('nan')):.3f} | {r['seconds']:.0f} |")


def measure(args) -> dict:
    """Every scale's fit (``--append``: after the rows of the report's saved measurements)."""
    extra = [*args.extra, "--quiet"]
    old = H.out_path(args, "fit_scaled").with_suffix(".json")
    rows = H.loads(old.read_text())["rows"] if args.append and old.is_file() else []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in args.scales if rows else [None, *args.scales]:
            label = "embedded" if scale is None else f"x{scale:g}"
            rows.append(_run(scale, extra, Path(tmp) / label))
            print(_row(rows[-1]), flush=True)
    return {"extra": args.extra, "append": args.append, "rows": rows}


def render(m: dict) -> str:
    """The table of fits and each scale's gap to the embedded run."""
    rows = m["rows"]
    lines = [
        "# The default fit on a rescaled connectome", "",
        f"Written by `{C.command('studies/bench_fit_scaled.py', *m['extra'])}`"
        + (" (rows added with `--append --scales ...`)" if m["append"] else "") + ". "
        "Every row is the default `netdyn fit` (fitted on runs 1-4 of the embedded HCP BOLD, "
        "scored on runs 5-7, held-out noise), the first on the embedded dataset, the others "
        "on its connectome with the weights multiplied by the factor, read from CSV/`.npy` "
        "files. Weights x s at G / s is the same network, so `G x scale` should agree and "
        "the scores should agree within noise.", "",
        "| weights x | fitted G | G x scale | held-out (train FC): r / mean FC | "
        "test-run FC r | of ceiling | test mean FC (runs') | test FCD KS | s |",
        "|---|---|---|---|---|---|---|---|---|",
        *(_row(r) for r in sorted(rows, key=lambda r: (not r["embedded"], r["scale"]))), ""]
    base = next((r for r in rows if r["report"] is not None and r["embedded"]), None)
    if base is not None:
        b = base["report"]["runs"]["test"]["fc_r"]
        level = base["report"]["runs"]["train"]["empirical_mean_fc"]
        gaps = [(r["scale"], r["report"]["runs"]["test"]["fc_r"] - b,
                 r["report"]["heldout"]["mean_fc"] - level)
                for r in rows if r["report"] is not None and not r["embedded"]]
        lines += ["Against the embedded run: "
                  + "; ".join(f"x{s:g}: test FC r {d:+.3f}, held-out mean FC {g:+.3f} from "
                              "the training runs' level" for s, d, g in gaps) + ".", ""]
    return "\n".join(lines + H.machine(m)) + "\n"


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--scales", type=float, nargs="*", default=[0.8, 1.06, 1.25])
    p.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                   help="options passed to every netdyn fit (after the others)")
    p.add_argument("--append", action="store_true",
                   help="keep the rows of the last report (its .json), add these scales")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="fit_scaled", options=options)
