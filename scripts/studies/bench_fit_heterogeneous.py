"""Does regional heterogeneity generalise? Writes benchmarks/fit_heterogeneous.md (and .json).

Two ``netdyn fit`` runs of the two-population Wong-Wang model with feedback inhibition
control on the embedded HCP data (fitted on runs 1-4), homogeneous (``--fit G,sigma``)
and with one input gain per region (``--fit G,sigma,input-gain --steps 20 --lr 0.04``);
then each fitted model is rebuilt from its ``params.json`` with the public API and
simulated with several held-out noise sets (4 x 288 s each, keys the fits never used),
and scored against the test runs 5-7 and the training runs 1-4: mean and standard
deviation over the noise sets of FC r, mean FC and FCD KS, beside the noise ceiling.

    python scripts/studies/bench_fit_heterogeneous.py            # about 40 min, 2 cores
    python scripts/studies/bench_fit_heterogeneous.py --work DIR  # reuse fits in DIR
    python scripts/studies/bench_fit_heterogeneous.py --smoke    # tiny runs, minutes
"""

import tempfile
from pathlib import Path

import _benchmarks  # noqa: F401 (first: scripts/benchmarks/ importable)
import _common as C  # first: this checkout's netdyn
import _harness as H
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import netdyn as nd

jax.config.update("jax_enable_x64", True)

FITS = {
    "homogeneous": ["--fit", "G,sigma"],
    "input gains": ["--fit", "G,sigma,input-gain", "--steps", "20", "--lr", "0.04"],
}
QUICK = ["--duration", "7200", "--burn-in", "7200", "--realisations", "1", "--G", "0.49",
         "--steps", "2", "--heldout-duration", "7200", "--heldout-realisations", "1",
         "--no-gradient-check"]


def _fit(name: str, folder: Path, quick: bool) -> dict:
    """Run one fit, or read the one already in ``folder``; its report, command and wall
    time (``None`` when read)."""
    argv = ["fit", "--model", "rww-ei-fic", *FITS[name], *(QUICK if quick else []),
            "--out", str(folder), "--overwrite", "--quiet"]
    if (folder / "params.json").is_file():
        print(f"{name}: reusing the fit in {folder}", flush=True)
        run = {"report": H.loads((folder / "params.json").read_text()), "seconds": None}
    else:
        run = H.fit_here(argv)
        if run["status"] != 0:
            raise SystemExit(f"netdyn {' '.join(argv)} exited with status {run['status']}")
    return {"report": run["report"], "command": "netdyn " + " ".join(argv[:-4]),
            "seconds": run["seconds"]}


def _network(report: dict, weights: np.ndarray, lengths: np.ndarray) -> nd.Network:
    """The fitted model, rebuilt from ``params.json`` with the public API."""
    p = report["parameters"]
    net = nd.presets.rww_ei_fic(weights, lengths, G=p["coupling.G"], sigma=p["noise.sigma"])
    gains = p.get("graph.weights.log_gain.deviations")
    if gains is not None:
        net = eqx.tree_at(lambda n: n.graph.weights, net, nd.InputScaling(
            weights, nd.RegionalDeviation(0.0, jnp.asarray(gains))))
    return net


def _scores(net, heldout: nd.FcLoss, data, keys: int, fcd: tuple[int, int]) -> dict:
    """Test- and training-run scores of ``keys`` held-out noise sets (``nd.heldout_scores``):
    per set, and their mean and standard deviation (``ddof=1``)."""
    train, test = list(data.bold[:4]), list(data.bold[4:])
    result = nd.heldout_scores(heldout, net, key=jax.random.key(10_000), sets=keys, test=test,
                               train=train, fcd_window=fcd[0], fcd_step=fcd[1])
    summary = {f"{side}_{metric}": (result.mean[side][metric], result.sd[side][metric])
               for side in ("test", "train")
               for metric in ("fc_r", "mean_fc", "fcd_ks", "fraction_of_ceiling")
               if metric in result.mean[side]}
    return {"sets": [{"test": s["test"], "train": s["train"]} for s in result.sets],
            "summary": summary}


def _row(name: str, fit: dict, scores: dict) -> str:
    s = scores["summary"]

    def cell(key, digits=3):
        return H.pm(s.get(key), digits, "-")

    # A reused fit: the search for the start and the fit, as its params.json says.
    seconds = (f"{fit['seconds']:.0f}" if fit["seconds"] is not None else
               f"{fit['report']['seconds']:.0f} (scan + fit)")
    return (f"| {name} | {cell('test_fc_r')} | {cell('test_fraction_of_ceiling', 2)} | "
            f"{cell('test_mean_fc')} | {cell('test_fcd_ks')} | {cell('train_fc_r')} | "
            f"{cell('train_mean_fc')} | {seconds} |")


def measure(args) -> dict:
    """Both fits (or the ones in ``--work``), each scored with the held-out noise sets."""
    data = nd.datasets.load("hcp")
    weights = np.asarray(data.weights) / np.max(data.weights)
    work = Path(args.work or tempfile.mkdtemp(prefix="netdyn-bench-"))
    print(f"fits in {work}", flush=True)
    duration, realisations = (14_400.0, 1) if args.smoke else (288_000.0, 4)
    keys = 2 if args.smoke else args.keys
    results = {}
    for name in FITS:
        fit = _fit(name, work / name.replace(" ", "-"), args.smoke)
        net = _network(fit["report"], weights, np.asarray(data.lengths))
        heldout = nd.FcLoss(np.asarray(nd.runs_fc(list(data.bold[:4]))),
                            nd.Heun(remat=nd.Uniform(720)),
                            nd.Bold(period=data.tr, variables="S_e"), duration=duration,
                            burn_in=57_600.0, realisations=realisations)
        results[name] = {**fit, "scores": _scores(net, heldout, data, keys, (83, 3))}
        print(_row(name, fit, results[name]["scores"]), flush=True)
    return {"fits": results, "keys": keys, "duration": duration, "realisations": realisations}


def render(m: dict) -> str:
    """The table of both fits' held-out scores."""
    results = m["fits"]
    homo, het = (results[n]["scores"]["summary"]["test_fc_r"][0] for n in FITS)
    first = results["homogeneous"]["scores"]["sets"][0]
    lines = [
        "# Regional heterogeneity, scored on runs and noise the fit never saw", "",
        f"Written by `{C.command('studies/bench_fit_heterogeneous.py')}`. Both fits: `netdyn fit "
        "--model rww-ei-fic` (two-population Wong-Wang, feedback inhibition control at 3 "
        "Hz, BOLD of S_e at TR 720 ms, dt 1 ms, exact gradients) on the embedded HCP data, "
        f"fitted on runs 1-4. Each fitted model is simulated with {m['keys']} held-out noise "
        f"sets ({m['realisations']} x {m['duration'] / 1000:g} s after a 57.6 s burn-in each, "
        "keys no fit used) and scored against the test runs 5-7 and the training runs 1-4: "
        "mean ± standard deviation over the sets. FCD: 60 s windows (83 TRs), 2 s steps. "
        f"Noise ceiling (FC r of the training against the test runs): "
        f"{first['test']['ceiling']:.3f}.", "",
        f"| fit | test FC r | of ceiling | test mean FC (runs' "
        f"{first['test']['empirical_mean_fc']:.3f}) | test FCD KS | train FC r | train mean "
        f"FC (runs' {first['train']['empirical_mean_fc']:.3f}) | fit s |",
        "|---|---|---|---|---|---|---|---|",
        *(_row(name, results[name], results[name]["scores"]) for name in FITS), "",
        f"Input gains against the homogeneous fit: test-run FC r {het - homo:+.3f}.", "",
        "Commands:", "", *(f"- {name}: `{results[name]['command']}`" for name in FITS), "",
        *H.machine(m),
    ]
    return "\n".join(lines) + "\n"


def options(p) -> None:
    """This benchmark's own flags."""
    p.add_argument("--keys", type=int, default=5, help="held-out noise sets (default 5)")
    p.add_argument("--work", default=None, metavar="DIR",
                   help="where the fits' folders go, DIR/homogeneous and DIR/input-gains; a "
                   "folder with a params.json is reused, not fitted again (default: a new "
                   "temporary folder)")


if __name__ == "__main__":
    H.main(measure, render, doc=__doc__, name="fit_heterogeneous", options=options)
