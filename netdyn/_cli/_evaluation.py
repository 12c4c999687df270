"""The fitted model's evaluations in ``netdyn fit``: the held-out check over noise sets
(``nd.heldout_scores``), scored on the training and the test subjects, and the long check
(``nd.long_check``): the loss at the held-out check's length along each fitted global value
of a simulated fit, what long simulations say about a parameter that the fit's own short,
noisy loss may not resolve (why, and what was measured: ``netdyn/_evaluation/long_check.py``)."""

import time

import numpy as np

from .._evaluation.heldout import heldout_scores, mean_and_sd
from .._evaluation.interval_text import has_interval
from .._evaluation.long_check import long_check as check_along
from .._loss.fc_loss import FcLoss
from .._persistence import interrupt
from ._data import FitData
from ._model import MODELS, Where, leaf, long_name
from ._plan import fcd_samples
from ._uncertainty import heldout_key


def heldout_check(args, data: FitData, heldout_fn: FcLoss, fitted, key):
    """The held-out check over ``--heldout-sets`` noise sets (``nd.heldout_scores``):
    ``((mean metrics, their sd, each set's), the first set's FC, (mean run scores, their
    sd, each set's))``."""
    if not args.quiet:
        print(f"netdyn fit: held-out check, {args.heldout_sets} set(s) of "
              f"{args.heldout_realisations} x {args.heldout_duration / 1000:g} s with new "
              "noise ...", flush=True)
    window, step = fcd_samples(args)
    # FCD windows count samples: compared only when the simulation samples as the data do.
    same_tr = data.tr is None or abs(data.tr - args.tr) <= 1e-6 * data.tr
    clock = [time.perf_counter()]

    def progress(i, one):
        interrupt.check()
        if not args.quiet and args.heldout_sets > 1:  # a long stage shows its progress
            test = f", test subjects {one['test']['fc_r']:.3f}" if data.test else ""
            print(f"netdyn fit: held-out set {i + 1}/{args.heldout_sets}: FC r "
                  f"{one['fit']['fc_r']:.3f}{test} ({time.perf_counter() - clock[0]:.0f} s)",
                  flush=True)
        clock[0] = time.perf_counter()

    interrupt.check()
    test, train = (data.test, data.train) if data.test else (data.train, None)
    result = heldout_scores(heldout_fn, fitted, key=heldout_key(key), sets=args.heldout_sets,
                            test=test, train=train, fcd_window=window if same_tr else None,
                            fcd_step=step, on_set=progress)
    metrics = [one["fit"] for one in result.sets]
    if data.train is None:
        return (*mean_and_sd(metrics), metrics), result.fc, (None, None, None)
    skipped = "the simulation's TR is not the data's" if not same_tr else result.fcd_skipped
    scores = [{"train_subjects": list(data.train_subjects),
               "test_subjects": list(data.test_subjects),
               "fcd_window": None if skipped else window, "fcd_step": step,
               "fcd_skipped": skipped,
               **({"train": one["train"], "test": one["test"]} if data.test
                  else {"train": one["test"]})}
              for one in result.sets]
    return (*mean_and_sd(metrics), metrics), result.fc, (*mean_and_sd(scores), scores)


def long_check(args, heldout_fn: FcLoss, fitted, where: Where, key,
               heldout_each: list[dict], uncertainty: dict | None = None) -> dict | None:
    """The held-out loss (``heldout_fn``, each held-out set's noise in turn) at
    0.8 and 1.25 times each fitted global value (and 0.5 or 2 times on a side flat there),
    the others fixed, beside that set's loss at the fit; ``None`` for the analytic engine
    (deterministic: its Hessian is the whole answer), with fewer than 2 held-out sets, or
    without a fitted global value left without an interval by the error bars
    (``uncertainty``, the command's report of them: each value it gave no interval, every
    value when it gave none or was skipped).

    ``nd.long_check``'s result, in the units of the options."""
    if args.engine == "linear" or not heldout_fn.stochastic or len(heldout_each) < 2:
        return None  # one set has no spread to judge a change by
    names = [n for n in where.names if n not in where.mapped
             and np.ndim(leaf(fitted, n)) == 0 and not has_interval(long_name(n), uncertainty)]
    if not names:
        return None
    if not args.quiet:
        print(f"netdyn fit: the loss along {', '.join(names)} at the held-out length "
              f"({len(heldout_each)} set(s)) ...", flush=True)
    return check_along(heldout_fn, fitted, names, heldout_key(key), heldout_each,
                       relevel="G" in where.names and "G" not in where.mapped,
                       preset=MODELS[args.model])

