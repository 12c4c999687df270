"""``nd.leave_one_run_out``: each loss's FC target (and FCD target) is the NumPy group FC
(and pooled FCD values) of the other runs; the rest of the loss is unchanged."""

import numpy as np
import pytest

import netdyn as nd

N, T, RUNS = 4, 30, 3


def _runs():
    rng = np.random.default_rng(3)
    return [rng.normal(size=(T, N)) + rng.normal(size=(T, 1)) for _ in range(RUNS)]


def _numpy_fcd_values(run, window, step):
    iu = np.triu_indices(N, k=1)
    fcs = [np.corrcoef(run[s:s + window].T)[iu] for s in range(0, T - window + 1, step)]
    m = np.corrcoef(np.array(fcs))
    return m[np.triu_indices(len(fcs), k=1)]


def test_targets_are_the_other_runs_and_the_rest_is_unchanged():
    runs = _runs()
    window, step = 10, 5
    loss = nd.FcLoss(nd.runs_fc(runs), nd.Heun(), nd.Raw(), duration=20.0,
                     fcd_target=np.concatenate([_numpy_fcd_values(r, window, step) for r in runs]),
                     fcd_window=(window, step), fcd_weight=0.5, metric="1-r")
    left = nd.leave_one_run_out(loss, runs)
    assert len(left) == RUNS
    for r, one in enumerate(left):
        others = [x for i, x in enumerate(runs) if i != r]
        np.testing.assert_allclose(one.target, np.mean([np.corrcoef(x.T) for x in others], 0),
                                   rtol=1e-12)
        np.testing.assert_allclose(
            one.fcd_target, np.concatenate([_numpy_fcd_values(x, window, step) for x in others]),
            rtol=1e-10)
        assert (one.metric, one.fcd_weight, one.duration) == ("1-r", 0.5, 20.0)


def test_analytic_loss_and_runs_as_one_array():
    runs = _runs()
    loss = nd.LinearFcLoss(nd.runs_fc(runs), nd.Bold(period=720.0), metric="1-r")
    left = nd.inference.leave_one_run_out(loss, np.stack(runs))
    np.testing.assert_allclose(left[0].target, np.mean([np.corrcoef(x.T) for x in runs[1:]], 0),
                               rtol=1e-12)
    assert left[0].metric == "1-r"


def test_one_run_cannot_be_left_out():
    loss = nd.LinearFcLoss(np.eye(N), nd.Bold(period=720.0))
    with pytest.raises(ValueError, match="at least 2 runs, got 1"):
        nd.leave_one_run_out(loss, _runs()[:1])
