"""A finished fit's report in words (``netdyn fit``'s closing lines, and ``netdyn summary``):
from the content of its ``params.json`` (``fit_report``, completed by the command), one
sentence a line."""

import numpy as np

from .interval_text import uncertainty_text
from .long_check_text import long_check_text


def _pm(values: dict, sd: dict, key: str, digits: int = 3) -> str:
    """``value ± sd`` (just the value without a spread)."""
    text = f"{values[key]:.{digits}f}"
    return text + (f" ± {sd[key]:.{digits}f}" if sd.get(key) else "")


def _fcd(scores: dict, sd: dict) -> str:
    return f", FCD KS {_pm(scores, sd, 'fcd_ks')}" if "fcd_ks" in scores else ""


def _sets(result: dict) -> str:
    n = result.get("heldout_sets") or 1
    return "1 set" if n == 1 else f"mean ± sd over {n} sets"


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


def _runs_text(runs: dict | None, runs_sd: dict | None) -> str | None:
    """The scores on the test subjects (and the training subjects), ``± sd`` over the
    held-out noise sets where there are several; ``None`` without runs."""
    if runs is None:
        return None
    t, sd = runs.get("test"), runs_sd or {}
    train, train_sd = runs["train"], sd.get("train", {})
    names = ",".join(map(str, runs["test_subjects"]))
    if t is None:
        return (f"no test subjects; on the training subjects "
                f"{','.join(map(str, runs['train_subjects']))}: FC r "
                f"{_pm(train, train_sd, 'fc_r')}{_fcd(train, train_sd)}.")
    t_sd = sd.get("test", {})
    return (f"test subjects {names} (never fitted), held-out simulation: FC r "
            f"{_pm(t, t_sd, 'fc_r')} = {100 * t['fraction_of_ceiling']:.0f} % of the noise "
            f"ceiling {t['ceiling']:.3f} (r between training and test FC), mean FC "
            f"{_pm(t, t_sd, 'mean_fc')} (test subjects {t['empirical_mean_fc']:.3f}, training "
            f"{train['empirical_mean_fc']:.3f}){_fcd(t, t_sd)}; training subjects: FC r "
            f"{_pm(train, train_sd, 'fc_r')}{_fcd(train, train_sd)}"
            + (f" (FCD not scored: {runs['fcd_skipped']})" if runs.get("fcd_skipped") else "")
            + ".")


def summary_sentences(result: dict) -> list[str]:
    """What a fit found, from its report ``result``: the fitted values and the loss's
    progress, the held-out check, the scores on the subjects, the intervals, the long
    check and the cautions; one sentence each."""
    heldout, sd = result["heldout"], result.get("heldout_sd") or {}
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
    check = result.get("long_check")
    said = [
        f"{values}; {progress} ({_kept(result)} of {result['steps']}; "
        f"{result['seconds']:.0f} s).",
        f"held-out (new noise, {_sets(result)}): FC r {_pm(heldout, sd, 'fc_r')}, mean FC "
        f"{_pm(heldout, sd, 'mean_fc')} (empirical {result['empirical_mean_fc']:.3f}), "
        f"{100 * heldout['saturation']:.1f} % of pairs > 0.9.",
        _runs_text(result.get("runs"), result.get("runs_sd")),
        uncertainty_text(result.get("uncertainty"), maps["names"], check),
        None if check is None else f"{long_check_text(check)}.",
    ]
    caution = result.get("cautions") or []
    return [s for s in said if s is not None] + [f"caution: {c}." for c in caution]


def _kept(result: dict) -> str:
    """Which steps the fitted values come from: the best one, or the mean of a range (a
    fit with new noise each step keeps the mean of the second half of its steps)."""
    averaged = result.get("averaged_steps")
    if averaged and averaged[0] != averaged[1]:
        return f"the mean of steps {averaged[0]}-{averaged[1]}"
    if averaged:
        return f"kept: step {averaged[0]}, the second half's only"
    return f"best: step {result['best_step']}"
