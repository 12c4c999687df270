"""The closing lines of ``netdyn fit`` (and ``netdyn summary DIR``): the fitted values,
the held-out check, the test subjects' scores, the error bars, the long check and the
cautions, from the result that ``params.json`` holds."""

from pathlib import Path

import numpy as np

from .._persistence.strict_json import read_json_object
from ._long_check import long_check_line
from ._uncertainty import uncertainty_line


def _fcd(scores: dict, sd: dict) -> str:
    return f", FCD KS {_pm(scores, sd, 'fcd_ks')}" if "fcd_ks" in scores else ""


def _runs_line(runs: dict | None, runs_sd: dict | None) -> str:
    """The line on the test subjects (and the training subjects) for ``summary``; ``± sd`` over
    the held-out noise sets where there are several."""
    if runs is None:
        return ""
    t, sd = runs.get("test"), runs_sd or {}
    train, train_sd = runs["train"], sd.get("train", {})
    names = ",".join(map(str, runs["test_subjects"]))
    if t is None:
        return (f"netdyn fit: no test subjects; on the training subjects "
                f"{','.join(map(str, runs['train_subjects']))}: FC r "
                f"{_pm(train, train_sd, 'fc_r')}{_fcd(train, train_sd)}.\n")
    t_sd = sd.get("test", {})
    return (
        f"netdyn fit: test subjects {names} (never fitted), held-out simulation: FC r "
        f"{_pm(t, t_sd, 'fc_r')} = {100 * t['fraction_of_ceiling']:.0f} % of the noise "
        f"ceiling {t['ceiling']:.3f} (r between training and test FC), mean FC "
        f"{_pm(t, t_sd, 'mean_fc')} (test subjects {t['empirical_mean_fc']:.3f}, training "
        f"{train['empirical_mean_fc']:.3f}){_fcd(t, t_sd)}; training subjects: FC r "
        f"{_pm(train, train_sd, 'fc_r')}{_fcd(train, train_sd)}"
        + (f" (FCD not scored: {runs['fcd_skipped']})" if runs.get("fcd_skipped") else "")
        + ".\n"
    )


def _parameter_text(name: str, v, map_names: list[str]) -> str:
    """``name = value``: a scalar, each map's coefficient, or a per-region spread (a
    ``RegionalDeviation``'s deviations with their mean removed, as the model applies
    them: their raw mean has no effect)."""
    if isinstance(v, float):
        return f"{name} = {v:.4g}"
    if name.endswith(".coefficients") and len(v) == len(map_names):
        return f"{name} = " + ", ".join(f"{c:+.4g} {m}" for c, m in zip(v, map_names))
    v = np.asarray(v, dtype=float)
    if name.endswith(".deviations"):
        v = v - v.mean()
        return (f"{name} (mean removed) sd {v.std():.3g}, from {v.min():.3g} to "
                f"{v.max():.3g}")
    return f"{name} = mean {v.mean():.4g}, sd {v.std():.3g}"


def _pm(values: dict, sd: dict, key: str, digits: int = 3) -> str:
    """``value ± sd`` (just the value without a spread)."""
    text = f"{values[key]:.{digits}f}"
    return text + (f" ± {sd[key]:.{digits}f}" if sd.get(key) else "")


def _sets(result: dict) -> str:
    n = result.get("heldout_sets") or 1
    return "1 set" if n == 1 else f"mean ± sd over {n} sets"


def summary(out: Path, result: dict, plotted: bool) -> str:
    """The closing lines printed by ``netdyn fit``."""
    heldout, sd = result["heldout"], result.get("heldout_sd") or {}
    caution = result.get("cautions") or []
    maps = result.get("maps") or {"names": []}
    values = ", ".join(_parameter_text(k, v, maps["names"])
                       for k, v in result["parameters"].items())
    if result.get("engine") == "linear":  # the simulated figures are the held-out check's
        progress = (
            f"analytic loss {result['initial_loss']:.4g} -> {result['fit_loss']:.4g}, FC r "
            f"{result['initial_fc_r']:.3f} -> {result['fit_fc_r']:.3f}")
    else:
        progress = (f"loss {result['initial_loss']:.4g} -> {result['loss']:.4g}, FC r "
                    f"{result['initial_fc_r']:.3f} -> {result['fc_r']:.3f}")
    return (
        f"netdyn fit: {values}; {progress} "
        f"(best: step {result['best_step']} of {result['steps']}; "
        f"{result['seconds']:.0f} s).\n"
        f"netdyn fit: held-out (new noise, {_sets(result)}): FC r "
        f"{_pm(heldout, sd, 'fc_r')}, mean FC {_pm(heldout, sd, 'mean_fc')} (empirical "
        f"{result['empirical_mean_fc']:.3f}), {100 * heldout['saturation']:.1f} % of pairs "
        "> 0.9.\n"
        + _runs_line(result.get("runs"), result.get("runs_sd"))
        + uncertainty_line(result.get("uncertainty"), maps["names"])
        + long_check_line(result.get("long_check"))
        + "".join(f"netdyn fit: caution: {c}.\n" for c in caution)
        + f"netdyn fit: wrote {out}/params.json, "
        "history.csv, history.json, fc_simulated.csv, fc_heldout.csv, model.eqx, checkpoint.eqx"
        + (", fit.png" if plotted else "")
    )


def finished_summary(out: Path) -> str:
    """``summary`` of the finished fit in ``out``, from its ``params.json`` (``netdyn
    summary DIR``)."""
    path = out / "params.json"
    result = read_json_object(path, missing=f": {out} holds no finished netdyn fit")
    try:
        return summary(out, result, (out / "fit.png").is_file())
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a netdyn params.json (no {e}).") from None

