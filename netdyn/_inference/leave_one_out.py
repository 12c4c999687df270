"""The losses of a fit with one empirical run left out of its target, for the jackknife."""

from collections.abc import Sequence

import numpy as np

from .._custom_types import ArrayLike
from .._loss._base import AbstractFcLoss


def leave_one_run_out(loss_fn: AbstractFcLoss,
                      runs: ArrayLike | Sequence[ArrayLike]) -> list[AbstractFcLoss]:
    r"""For each of the runs the fit's target was made from, ``loss_fn`` fitted to the
    others (``loss_fn.fitted_to``: the FC target, and the FCD target when the loss has
    one): the ``leave_one_out`` losses of ``nd.uncertainty``, whose jackknife spread of
    the fitted values is the part of their error bars that other subjects (or runs) would
    move, $\sigma^2_{\text{data}} = \frac{R-1}{R} \sum_r (\hat\theta_{-r} -
    \bar\theta)^2$ (Efron & Stein 1981).

    **Raises** ``ValueError`` with fewer than 2 runs (one left out leaves none).
    """
    runs = [np.asarray(r) for r in runs]
    if len(runs) < 2:
        raise ValueError(f"leave_one_run_out needs at least 2 runs, got {len(runs)}.")
    return [loss_fn.fitted_to(runs[:r] + runs[r + 1:]) for r in range(len(runs))]
