"""A fitted model judged on what the fit never saw: new noise, and subjects left out."""

import dataclasses
from collections.abc import Callable, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float, Key

from .._loss.fc_loss import FcLoss
from .._network import Network
from .._observation.runs import runs_fc, score_runs

# The fewest FCD windows a run must hold for its FCD to be scored: fewer, heavily
# overlapping windows give a distribution that says more about the run's length than about
# the dynamics (4 x 72 s of rww BOLD scored FCD KS 0.94 against the test subjects where
# 4 x 288 s scored 0.32).
FCD_WINDOWS = 3


@dataclasses.dataclass(frozen=True)
class HeldoutScores:
    """What ``nd.heldout_scores`` measured.

    - ``mean``, ``sd``: over the noise sets, every score of ``sets[i]`` (``sd`` with
      ``ddof=1``; 0 with one set); nested as the sets are.
    - ``sets``: one dict per noise set: ``"fit"`` (the loss and its metrics of the
      simulated FC against the loss's own target, as ``loss_fn.loss_of_fc``), and with
      empirical runs ``"test"`` (``nd.score_runs`` against them, with the noise ceiling
      when ``train`` is given) and ``"train"`` (against ``train``).
    - ``fc``: the first set's simulated FC ``[nodes, nodes]`` (the mean of its
      realisations').
    - ``fcd_skipped``: why the FCD was not scored although ``fcd_window`` was given, or
      ``None``.
    """

    mean: dict
    sd: dict
    sets: list[dict]
    fc: np.ndarray
    fcd_skipped: str | None


def set_keys(key: Key[Array, ""], sets: int) -> list:
    """The keys of ``sets`` noise sets: ``key`` itself, then ``fold_in(key, i)`` for
    ``i = 1 .. sets - 1`` (so that adding sets keeps the first sets' noise)."""
    return [key] + [jax.random.fold_in(key, i) for i in range(1, sets)]


def mean_and_sd(items: list):
    """Over ``items`` (dicts of scores, nested alike): ``(mean, sd)`` of every float
    (``sd`` with ``ddof=1``, 0 for one item); other values (integers such as an FCD
    window, lists of subjects, ``None``) are settings, taken from the first item and left
    out of ``sd``."""
    first = items[0]
    if isinstance(first, dict):
        pairs = {k: mean_and_sd([i[k] for i in items]) for k in first}
        return ({k: m for k, (m, _) in pairs.items()},
                {k: s for k, (_, s) in pairs.items() if s is not None})
    if isinstance(first, float):
        v = np.asarray(items, dtype=float)
        return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0
    return first, None


@eqx.filter_jit
def simulate_signals(loss_fn: FcLoss, network: Network,
                     key: Key[Array, ""]) -> Float[Array, "realisations samples nodes"]:
    """``loss_fn.signals(network, key)`` (the same realisations, keys ``fold_in(key,
    b)``), forward only. On a CPU the realisations run one after the other: 4 realisations
    of rww-ei-fic ran at 36 us per member-step in sequence against 64 under ``vmap`` (56
    with the batch-last loop) on 2 cores; other devices run them in parallel, as the loss
    does."""
    if jax.default_backend() != "cpu" or key is None or loss_fn.realisations == 1:
        return loss_fn.signals(network, key)
    keys = jax.vmap(lambda b: jax.random.fold_in(key, b))(jnp.arange(loss_fn.realisations))
    return jax.lax.map(lambda k: loss_fn.signal(network, k), keys)


def _fcd_window(fcd_window: int | None, runs: list[np.ndarray],
                samples: int) -> tuple[int | None, str | None]:
    if fcd_window is None:
        return None, None
    shortest = min(samples, *(r.shape[0] for r in runs))
    if FCD_WINDOWS * fcd_window <= shortest:
        return fcd_window, None
    return None, (f"runs of {shortest} TRs hold fewer than {FCD_WINDOWS} FCD windows of "
                  f"{fcd_window} TRs")


def heldout_scores(
    loss_fn: FcLoss,
    network: Network,
    *,
    key: Key[Array, ""],
    sets: int = 3,
    test: ArrayLike | Sequence[ArrayLike] | None = None,
    train: ArrayLike | Sequence[ArrayLike] | None = None,
    fcd_window: int | None = None,
    fcd_step: int = 1,
    on_set: Callable[[int, dict], None] | None = None,
) -> HeldoutScores:
    r"""Score ``network`` on new noise, ``sets`` times, and on empirical runs it was not
    fitted to.

    Each noise set $i$ simulates ``loss_fn``'s realisations (its burn-in, duration and
    monitor; make the check longer than the fit's loss with ``loss_fn.replace(duration=...,
    realisations=...)``) with the key ``set_keys(key, sets)[i]`` and scores their FC
    (``runs_fc``, the mean of the realisations' FCs): against the loss's target
    (``loss_fn.loss_of_fc``), and with ``test`` against those runs (``nd.score_runs``: FC r,
    mean FC, saturation, FCD KS with ``fcd_window``, the fraction of the noise ceiling
    between ``train`` and ``test`` when ``train`` is given) and against ``train``. The
    spread over the sets is what one set's numbers are worth: report ``mean`` with ``sd``.

    The FCD is scored only when every run (simulated and empirical) holds
    ``FCD_WINDOWS`` = 3 windows (``fcd_skipped`` says why otherwise); the simulation must
    sample at the data's TR for it to mean anything. ``on_set(i, scores)`` is called after
    each set (progress, interrupts).

    **Raises** ``ValueError`` for ``sets < 1``, ``train`` without ``test``, or runs whose
    node count differs from the simulation's (``nd.score_runs``'s).
    """
    if not isinstance(sets, int) or isinstance(sets, bool) or sets < 1:
        raise ValueError(f"heldout_scores: sets must be an integer >= 1, got {sets!r}.")
    if train is not None and test is None:
        raise ValueError("heldout_scores: train= is the other side of the noise ceiling; "
                         "pass test= (the held-out runs) with it.")
    empirical = [np.asarray(r) for runs in (test, train) if runs is not None for r in runs]
    scored, first_fc, window, skipped = [], None, None, None
    for i, k in enumerate(set_keys(key, sets)):
        signals = np.asarray(simulate_signals(loss_fn, network, k))
        fc = runs_fc(signals)
        loss, metrics = loss_fn.loss_of_fc(jnp.asarray(fc))
        one = {"fit": {"loss": float(loss), **{m: float(v) for m, v in metrics.items()}}}
        if i == 0:
            first_fc = fc
        if test is not None:
            if i == 0:  # every set has the same length: the FCD is scored in all or in none
                window, skipped = _fcd_window(fcd_window, empirical, signals.shape[1])
            one["test"] = score_runs(signals, test, train=train, fcd_window=window,
                                     fcd_step=fcd_step)
            if train is not None:
                one["train"] = score_runs(signals, train, fcd_window=window,
                                          fcd_step=fcd_step)
        scored.append(one)
        if on_set is not None:
            on_set(i, one)
    mean, sd = mean_and_sd(scored)
    return HeldoutScores(mean=mean, sd=sd, sets=scored, fc=first_fc, fcd_skipped=skipped)


def heldout_cautions(metrics: dict, target_mean_fc: float) -> list[str]:
    """What makes a held-out result doubtful, in words (empty when nothing does), from the
    metrics of the held-out FC against the fit's target (``HeldoutScores.mean["fit"]``:
    ``saturation``, ``mean_fc``, ``fc_r``): more than 5 % of its pairs above 0.9
    (saturated), a mean FC more than 0.1 from the target's ``target_mean_fc``, an FC r
    below 0.3."""
    out = []
    if metrics["saturation"] > 0.05:
        out.append(f"{100 * metrics['saturation']:.0f} % of the held-out FC pairs are above "
                   "0.9 (saturated)")
    gap = abs(metrics["mean_fc"] - target_mean_fc)
    if gap > 0.1:
        out.append(f"the held-out mean FC {metrics['mean_fc']:.3f} is {gap:.3f} from the "
                   f"fitted {target_mean_fc:.3f}")
    if metrics["fc_r"] < 0.3:
        out.append(f"the held-out FC r is only {metrics['fc_r']:.3f}")
    return out
