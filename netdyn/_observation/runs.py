"""Scores on empirical runs a fit never saw: the group FC of runs, the noise ceiling, and
a simulated signal scored against held-out runs (FC pattern, level, saturation, FCD)."""

from collections.abc import Sequence

import numpy as np

from .._custom_types import ArrayLike
from ._stats import upper_triangle
from .fc import fc
from .fcd import fcd, fcd_values
from .losses import fc_correlation
from .summary import fc_summary


def _runs(runs, name: str) -> list[np.ndarray]:
    """``runs`` as a list of ``[time, nodes]`` float arrays (one nodes count)."""
    if isinstance(runs, np.ndarray) or not isinstance(runs, Sequence):
        a = np.asarray(runs, dtype=float)
        if a.ndim == 2:
            a = a[None]
        if a.ndim != 3:
            raise ValueError(f"{name} must be [runs, time, nodes], [time, nodes] or a list of "
                             f"[time, nodes] arrays, got shape {a.shape}.")
        out = list(a)
    else:
        out = [np.asarray(r, dtype=float) for r in runs]
    if not out:
        raise ValueError(f"{name} holds no run.")
    for i, r in enumerate(out):
        if r.ndim != 2 or r.shape[0] < 3 or r.shape[1] != out[0].shape[1]:
            raise ValueError(f"{name}[{i}] must be [time >= 3, {out[0].shape[-1]}] "
                             f"(nodes as run 0), got shape {r.shape}.")
        if not np.all(np.isfinite(r)):
            raise ValueError(f"{name}[{i}] holds NaN or infinite values.")
    return out


def runs_fc(runs: ArrayLike | Sequence[ArrayLike]) -> np.ndarray:
    r"""The group FC of several runs: the mean of each run's FC,
    $\bar F = \frac{1}{R}\sum_r \operatorname{corr}(x^{(r)})$.

    ``runs``: ``[runs, time, nodes]``, one run ``[time, nodes]``, or a list of
    ``[time, nodes]`` arrays (runs may differ in length). Returns ``[nodes, nodes]``
    (NumPy, float64). Averaging per-run FCs, rather than correlating concatenated runs,
    keeps differences in a run's mean or scale out of the group FC.
    """
    return np.mean([np.asarray(fc(r)) for r in _runs(runs, "runs")], axis=0)


def noise_ceiling(train: ArrayLike | Sequence[ArrayLike],
                  test: ArrayLike | Sequence[ArrayLike]) -> float:
    r"""The noise ceiling of a train/test split of runs: the Pearson correlation between
    the upper triangles of the two groups' FCs (``runs_fc``),
    $r(\operatorname{triu}\bar F_{\rm train}, \operatorname{triu}\bar F_{\rm test})$.

    The best FC r that any model fitted to the training runs can expect on the test runs,
    since the training FC itself is such a model. On the embedded HCP data, runs 1-4
    against runs 5-7: 0.899.
    """
    return float(fc_correlation(runs_fc(train), runs_fc(test)))


def ks_statistic(a: ArrayLike, b: ArrayLike) -> float:
    r"""The two-sample Kolmogorov-Smirnov statistic, $\sup_z |F_a(z) - F_b(z)|$, of the
    empirical CDFs of the values ``a`` and ``b`` (exact; ``fcd_ks`` is its smoothed,
    differentiable form for losses). NaN when a value is NaN or infinite (a diverged
    simulation's FCD): sorting would move such values to one end and give a plausible,
    possibly better, statistic."""
    a, b = np.sort(np.ravel(a)), np.sort(np.ravel(b))
    if a.size == 0 or b.size == 0:
        raise ValueError("ks_statistic needs at least one value in a and in b.")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("nan")
    z = np.concatenate([a, b])
    fa = np.searchsorted(a, z, side="right") / a.size
    fb = np.searchsorted(b, z, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def pooled_fcd_values(runs: ArrayLike | Sequence[ArrayLike], window: int, step: int,
                      name: str = "runs") -> np.ndarray:
    """The FCD values (``fcd``, ``fcd_values(k=1)``) of every run, pooled: the distribution
    that FCD KS compares. ``window`` and ``step`` in samples; ``ValueError`` naming
    ``name`` and the run (counted from 1) when a run is shorter than the window."""
    runs = _runs(runs, name)
    short = [i for i, r in enumerate(runs) if r.shape[0] < window]
    if short:
        raise ValueError(f"{name}: run {short[0] + 1} has {runs[short[0]].shape[0]} samples, "
                         f"fewer than the FCD window ({window}).")
    return np.concatenate([np.asarray(fcd_values(fcd(r, window, step), k=1)) for r in runs])


def score_runs(
    simulated: ArrayLike | Sequence[ArrayLike],
    test: ArrayLike | Sequence[ArrayLike],
    *,
    train: ArrayLike | Sequence[ArrayLike] | None = None,
    fcd_window: int | None = None,
    fcd_step: int = 1,
) -> dict[str, float]:
    r"""A simulated signal scored against empirical runs, usually runs the fit never saw.

    ``simulated`` holds one or more simulated realisations (``[realisations, samples,
    nodes]``, e.g. BOLD sampled at the data's TR); ``test`` the empirical runs. With
    $F$ = ``runs_fc(simulated)`` and $F^*$ = ``runs_fc(test)``, over the upper triangles:

    - ``fc_r``: $r(F, F^*)$; ``mean_fc``: mean of $F$; ``empirical_mean_fc``: mean of
      $F^*$; ``saturation``: fraction of pairs with $F_{ij} > 0.9$;
    - with ``fcd_window`` (samples): ``fcd_ks``, the KS statistic (``ks_statistic``)
      between the FCD values (``fcd``, ``fcd_values(k=1)``) pooled over the simulated
      realisations and those pooled over the test runs (window and ``fcd_step`` in
      samples: the data's and the simulation's sampling periods must be equal);
    - with ``train``: ``ceiling`` = ``noise_ceiling(train, test)`` and
      ``fraction_of_ceiling`` = ``fc_r / ceiling``.
    """
    sim, emp = _runs(simulated, "simulated"), _runs(test, "test")
    if sim[0].shape[1] != emp[0].shape[1]:
        raise ValueError(f"simulated has {sim[0].shape[1]} nodes but test has "
                         f"{emp[0].shape[1]}.")
    f, target = runs_fc(sim), runs_fc(emp)
    summary = fc_summary(f, target)
    out = {k: float(summary[k]) for k in ("fc_r", "mean_fc", "saturation")}
    out["empirical_mean_fc"] = float(np.mean(upper_triangle(target, k=1)))
    if fcd_window is not None:
        out["fcd_ks"] = ks_statistic(pooled_fcd_values(sim, fcd_window, fcd_step, "simulated"),
                                     pooled_fcd_values(emp, fcd_window, fcd_step, "test"))
    if train is not None:
        out["ceiling"] = noise_ceiling(train, test)
        out["fraction_of_ceiling"] = out["fc_r"] / out["ceiling"]
    return out
