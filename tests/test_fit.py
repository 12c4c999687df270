"""Fitting: parameter recovery, bounds, history, checkpoints, non-finite values, bad input,
multistart.

References are independent of the fit loop: parameters known in advance (recovery),
closed-form gradient-descent recurrences on toy losses, and separate single fits for
``fit_multistart``.
"""

import collections
import json
import re
import shutil

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from toy_networks import hopf

import netdyn as nd

# ---------------------------------------------------------------------------------------
# A tiny delay-coupled network (5 Stuart-Landau nodes, 2000 Heun steps) whose FC is the
# target. One optimizer and one `where` per kind of fit, shared by the tests, so that the
# compiled step is reused.

N = 5
DURATION, DT = 1000.0, 0.5
G_TRUE = 0.2
A_TRUE = np.array([-0.2, -0.3, -0.15, -0.25, -0.35])
MONITOR = nd.TemporalAverage(period=5.0, variables=("x",), warmup=50.0)
SOLVER = nd.Heun()
ADAM = optax.adam(0.1)
ADAM_SLOW = optax.adam(0.05)


def _where_g(n):
    return n.coupling.G


def _where_g_a(n):
    return n.coupling.G, n.dynamics.a


def _network(G, a) -> nd.Network:
    return hopf(N, 0, G=G, a=jnp.asarray(a, dtype=float), omega=0.3, sigma=0.1, max_delay=5.0)


@pytest.fixture(scope="module")
def problem():
    """``(network at the true parameters, FcLoss whose target is its FC, key)``. The target
    FC is computed with ``numpy.corrcoef``, not with the library's ``fc``."""
    key = jax.random.key(0)
    net = _network(G_TRUE, A_TRUE)
    sol = nd.simulate(net, SOLVER, t0=0.0, t1=DURATION, dt=DT, monitors={"s": MONITOR},
                      key=key)
    target = np.corrcoef(np.asarray(sol["s"])[:, 0, :].T)
    loss_fn = nd.FcLoss(target, SOLVER, MONITOR, duration=DURATION, dt=DT)
    return net, loss_fn, key


def _fit_g(problem, G0, steps, **kw):
    net, loss_fn, key = problem
    # An array, not a Python float (static to a filter_jit): every start, one compilation.
    start = eqx.tree_at(_where_g, net, jnp.asarray(G0, dtype=float))
    return nd.fit(start, loss_fn, ADAM, where=_where_g, bounds=nd.Positive(), steps=steps,
                  key=key, **kw)


def test_fc_loss_matches_numpy(problem):
    net, loss_fn, key = problem
    other = eqx.tree_at(_where_g, net, 0.05)
    loss, metrics = loss_fn(other, key)
    sol = nd.simulate(other, SOLVER, t0=0.0, t1=DURATION, dt=DT, monitors={"s": MONITOR},
                      key=key)
    f = np.corrcoef(np.asarray(sol["s"])[:, 0, :].T)
    iu = np.triu_indices(N, k=1)
    a, b = f[iu], np.asarray(loss_fn.target)[iu]
    np.testing.assert_allclose(loss, np.sqrt(np.mean((a - b) ** 2)), rtol=1e-10)
    np.testing.assert_allclose(metrics["fc_r"], np.corrcoef(a, b)[0, 1], rtol=1e-10)
    one_minus_r = nd.FcLoss(loss_fn.target, SOLVER, MONITOR, duration=DURATION, dt=DT,
                            metric="1-r")
    np.testing.assert_allclose(one_minus_r(other, key)[0], 1 - np.corrcoef(a, b)[0, 1],
                               rtol=1e-10)


def test_recovers_global_coupling(problem):
    fitted, history = _fit_g(problem, 0.05, steps=60)
    G = float(fitted.coupling.G)
    assert abs(G - G_TRUE) / G_TRUE < 0.05
    assert history.metrics["fc_r"][-1] > 0.99 > history.metrics["fc_r"][0]
    assert history.loss[-1] < 0.1 * history.loss[0]
    assert np.all(history.params["coupling.G"] > 0.0)


@pytest.mark.slow
def test_recovers_coupling_and_per_region_parameter(problem):
    net, loss_fn, key = problem
    start = eqx.tree_at(_where_g_a, net, (0.1, jnp.full(N, -0.25)))
    fitted, history = nd.fit(
        start, loss_fn, ADAM_SLOW, where=_where_g_a,
        bounds=(nd.Positive(), nd.Interval(-1.0, 0.0)), steps=100, key=key,
    )
    assert abs(float(fitted.coupling.G) - G_TRUE) / G_TRUE < 0.05
    np.testing.assert_array_less(np.abs(fitted.dynamics.a - A_TRUE) / np.abs(A_TRUE), 0.05)
    assert history.params["dynamics.a"].shape == (100, N)
    assert fitted.dynamics.a.shape == (N,)


# ---------------------------------------------------------------------------------------
# Toy models and losses with closed-form references.


class Toy(eqx.Module):
    x: jax.Array
    y: float
    n: jax.Array
    label: str = eqx.field(static=True, default="toy")


C, D = np.array([1.0, -2.0, 0.5]), 4.0


def _quadratic(m, key):
    loss = jnp.sum((m.x - C) ** 2) + (m.y - D) ** 2
    return loss, {"x_sum": jnp.sum(m.x)}


def _where_xy(m):
    return m.x, m.y


def _toy(x=(0.0, 0.0, 0.0), y=0.5):
    return Toy(x=jnp.asarray(x, dtype=float), y=y, n=jnp.arange(3))


SGD = optax.sgd(0.1)


def test_each_leaf_gets_its_own_optimizer_in_the_order_of_where():
    # The optimizer sees a list with one array per leaf of where's result, in order.
    per_leaf = optax.multi_transform({"x": optax.sgd(0.1), "y": optax.sgd(0.02)}, ["x", "y"])
    _, h = nd.fit(_toy(), _quadratic, per_leaf, where=_where_xy, steps=4)
    x, y = np.zeros(3), 0.5
    for k in range(4):
        np.testing.assert_allclose(h.params["x"][k], x, rtol=1e-13)
        np.testing.assert_allclose(h.params["y"][k], y, rtol=1e-13)
        x, y = x - 0.1 * 2 * (x - C), y - 0.02 * 2 * (y - D)


def test_history_is_gradient_descent():
    rows = []
    fitted, h = nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=7,
                       callback=rows.append)
    # Reference: x_{k+1} = x_k - lr * 2 (x_k - c), recorded before each update.
    x, y = np.zeros(3), 0.5
    for k in range(7):
        gx, gy = 2 * (x - C), 2 * (y - D)
        np.testing.assert_allclose(h.params["x"][k], x, rtol=1e-13)
        np.testing.assert_allclose(h.params["y"][k], y, rtol=1e-13)
        np.testing.assert_allclose(h.loss[k], np.sum((x - C) ** 2) + (y - D) ** 2, rtol=1e-13)
        np.testing.assert_allclose(h.grad_norm[k], np.sqrt(np.sum(gx**2) + gy**2), rtol=1e-13)
        np.testing.assert_allclose(h.metrics["x_sum"][k], np.sum(x), rtol=1e-13)
        x, y = x - 0.1 * gx, y - 0.1 * gy
    np.testing.assert_allclose(fitted.x, x, rtol=1e-13)
    np.testing.assert_allclose(fitted.y, y, rtol=1e-13)
    # One row per step, every column.
    assert len(h) == 7 and h.best is None and h.n_starts is None
    np.testing.assert_array_equal(h.step, np.arange(7))
    assert h.params["x"].shape == (7, 3) and h.params["y"].shape == (7,)
    assert np.all(h.wall_time > 0) and not np.any(h.skipped)
    assert [r["step"] for r in rows] == list(range(7))
    assert set(rows[0]) == {"step", "loss", "grad_norm", "wall_time", "skipped", "x_sum",
                            "x", "y"}
    np.testing.assert_array_equal([r["loss"] for r in rows], h.loss)
    # Untrained leaves untouched.
    assert fitted.label == "toy" and np.array_equal(fitted.n, np.arange(3))


def test_keep_best_returns_the_lowest_loss_row():
    # SGD with lr 1.05 on the quadratic: x - c is multiplied by 1 - 2.1 = -1.1 each step,
    # so the loss grows and the best evaluated point is the start.
    sgd = optax.sgd(1.05)
    last, _ = nd.fit(_toy(), _quadratic, sgd, where=_where_xy, steps=5)
    best, h = nd.fit(_toy(), _quadratic, sgd, where=_where_xy, steps=5, keep="best")
    np.testing.assert_allclose(last.x, C + (-1.1) ** 5 * (np.zeros(3) - C), rtol=1e-12)
    np.testing.assert_allclose(last.y, D + (-1.1) ** 5 * (0.5 - D), rtol=1e-12)
    assert np.argmin(h.loss) == 0
    np.testing.assert_array_equal(best.x, np.zeros(3))
    assert float(best.y) == 0.5 and jnp.result_type(best.y) == jnp.result_type(last.y)


def test_keep_average_is_the_mean_of_the_second_half_of_the_steps():
    # SGD with lr 0.1 on the quadratic: x_k - c = 0.8^k (x_0 - c). Five steps evaluate
    # k = 0..4; "average" keeps the mean of rows 2, 3, 4, written out here.
    _, h = nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=5)
    avg, h2 = nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=5, keep="average")
    np.testing.assert_array_equal(h2.average_rows(), [2, 3, 4])
    factor = np.mean([0.8**k for k in (2, 3, 4)])
    np.testing.assert_allclose(avg.x, C + factor * (np.zeros(3) - C), rtol=1e-12)
    np.testing.assert_allclose(avg.y, D + factor * (0.5 - D), rtol=1e-12)
    assert jnp.result_type(avg.y) == jnp.result_type(h.params["y"][0])


def test_keep_best_with_new_noise_each_step_is_an_error(no_type_hook):
    with pytest.raises(ValueError, match="keep='best' with redraw=True.*luckiest noise"):
        nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=2, key=jax.random.key(0),
               redraw=True, keep="best")
    with pytest.raises(ValueError, match="keep must be 'last', 'best' or 'average'"):
        nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=2, keep="mean")


def test_history_files(tmp_path):
    _, h = nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=3)
    h.to_json(tmp_path / "h.json")
    back = nd.FitHistory.from_dict(json.loads((tmp_path / "h.json").read_text()))
    for name in ("step", "loss", "grad_norm", "wall_time", "skipped"):
        np.testing.assert_array_equal(getattr(back, name), getattr(h, name))
    np.testing.assert_array_equal(back.params["x"], h.params["x"])
    h.to_csv(tmp_path / "h.csv")
    lines = (tmp_path / "h.csv").read_text().splitlines()
    assert lines[0] == "step,loss,grad_norm,wall_time,skipped,x_sum,x[0],x[1],x[2],y"
    assert len(lines) == 4
    values = np.loadtxt(tmp_path / "h.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(values[:, 1], h.loss)
    np.testing.assert_array_equal(values[:, 6:9], h.params["x"])


def _far(m, key):
    # Minimum far outside the bounds: an unbounded step of Adam(10) leaves them at once.
    return jnp.sum((m.x - 5.0) ** 2) + (m.y + 5.0) ** 2


BIG = optax.adam(10.0)


def test_bounds_hold_at_every_step():
    start = _toy(x=(0.2, 0.5, 0.9), y=2.0)
    bounds = (nd.Interval(0.0, 1.0), nd.Positive())
    fitted, h = nd.fit(start, _far, BIG, where=_where_xy, bounds=bounds, steps=25)
    x, y = h.params["x"], h.params["y"]
    assert np.all((x >= 0.0) & (x <= 1.0)) and np.all(y > 0.0)
    assert np.all((fitted.x >= 0.0) & (fitted.x <= 1.0)) and fitted.y > 0.0
    # It does push against the bounds.
    assert np.all(fitted.x > 0.99) and fitted.y < 0.01
    # The same optimizer without bounds leaves the ranges (so the check above can fail).
    _, free = nd.fit(start, _far, BIG, where=_where_xy, steps=3)
    assert np.any(free.params["x"] > 1.0) and np.any(free.params["y"] < 0.0)


def test_transforms_round_trip():
    x = jnp.array([1e-6, 0.3, 2.0, 50.0])
    for t, values in ((nd.Positive(), x), (nd.Positive(lower=-1.0), x - 1.0),
                      (nd.Interval(-2.0, 3.0), jnp.array([-1.999, -1.0, 0.0, 2.9])),
                      (nd.Identity(), -x)):
        np.testing.assert_allclose(t.forward(t.inverse(values)), values, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(nd.Positive().forward(jnp.array(0.0)), np.log(2.0))
    np.testing.assert_allclose(nd.Interval(1.0, 3.0).forward(jnp.array(0.0)), 2.0)
    with pytest.raises(ValueError, match="lower < upper"):
        nd.Interval(1.0, 1.0)


# ---------------------------------------------------------------------------------------
# Checkpoints and resume.


def _noisy(m, key):
    # Depends on the key: with redraw=True every step sees a different loss.
    z = jax.random.normal(key, (3,))
    return jnp.sum((m.x - C - 0.3 * z) ** 2) + (m.y - D) ** 2, {"z0": z[0]}


ADAM_TOY = optax.adam(0.2)


def _assert_same_fit(a, b):
    (ma, ha), (mb, hb) = a, b
    np.testing.assert_array_equal(ma.x, mb.x)
    np.testing.assert_array_equal(ma.y, mb.y)
    for name in ("step", "loss", "grad_norm", "skipped"):
        np.testing.assert_array_equal(getattr(ha, name), getattr(hb, name))
    for k in ha.params:
        np.testing.assert_array_equal(ha.params[k], hb.params[k])
    for k in ha.metrics:
        np.testing.assert_array_equal(ha.metrics[k], hb.metrics[k])


class Stop(Exception):
    pass


def _stop_after(n, on_stop=None):
    def callback(row):
        if row["step"] == n - 1:
            if on_stop is not None:
                on_stop()
            raise Stop

    return callback


def test_resume_is_bit_for_bit(tmp_path):
    kw = dict(where=_where_xy, bounds=(None, nd.Positive()), steps=13, redraw=True,
              key=jax.random.key(3))
    whole = nd.fit(_toy(), _noisy, ADAM_TOY, **kw)
    ckpt = tmp_path / "fit.ckpt"
    saving, resuming = nd.Checkpoint(ckpt, every=4), nd.Checkpoint(ckpt, every=4, resume=True)
    # Interrupted by an exception after 6 steps: the checkpoint holds step 6.
    with pytest.raises(Stop):
        nd.fit(_toy(), _noisy, ADAM_TOY, checkpoint=saving, callback=_stop_after(6), **kw)
    assert nd.saved_steps(ckpt) == (6, 13)  # (its header checked: history rows 0 to 5)
    _assert_same_fit(whole, nd.fit(_toy(), _noisy, ADAM_TOY, checkpoint=resuming, **kw))
    # Killed without warning after 10 steps: the periodic checkpoint of step 8 remains.
    ckpt.unlink()
    kept = tmp_path / "kept"
    with pytest.raises(Stop):
        nd.fit(_toy(), _noisy, ADAM_TOY, checkpoint=saving,
               callback=_stop_after(10, lambda: shutil.copy(ckpt, kept)), **kw)
    shutil.copy(kept, ckpt)
    assert nd.saved_steps(ckpt)[0] == 8
    _assert_same_fit(whole, nd.fit(_toy(), _noisy, ADAM_TOY, checkpoint=resuming, **kw))
    # A finished fit resumed with more steps continues it.
    kw13 = dict(kw, steps=13)
    part = nd.fit(_toy(), _noisy, ADAM_TOY, checkpoint=saving, **dict(kw13, steps=5))
    assert len(part[1]) == 5
    _assert_same_fit(whole, nd.fit(_toy(), _noisy, ADAM_TOY, checkpoint=resuming, **kw13))


def test_resume_network_fit(problem, tmp_path):
    ckpt = tmp_path / "net.ckpt"
    whole = _fit_g(problem, 0.05, steps=9)
    with pytest.raises(Stop):
        _fit_g(problem, 0.05, steps=9, checkpoint=ckpt, callback=_stop_after(4))
    net, *_ = problem
    resumed = _fit_g(problem, 0.05, steps=9, checkpoint=nd.Checkpoint(ckpt, resume=True))
    np.testing.assert_array_equal(resumed[0].coupling.G, whole[0].coupling.G)
    for name in ("loss", "grad_norm"):
        np.testing.assert_array_equal(getattr(resumed[1], name), getattr(whole[1], name))
    np.testing.assert_array_equal(resumed[1].params["coupling.G"],
                                  whole[1].params["coupling.G"])
    np.testing.assert_array_equal(resumed[1].metrics["fc_r"], whole[1].metrics["fc_r"])


def test_resume_checks_the_fit(tmp_path):
    ckpt = tmp_path / "c"
    nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=2, checkpoint=ckpt)
    resume = nd.Checkpoint(ckpt, resume=True)
    with pytest.raises(ValueError, match="names"):
        nd.fit(_toy(), _quadratic, SGD, where=lambda m: m.x, steps=3, checkpoint=resume)
    with pytest.raises(ValueError, match="transforms"):
        nd.fit(_toy(), _quadratic, SGD, where=_where_xy, bounds=(None, nd.Positive()),
               steps=3, checkpoint=resume)
    with pytest.raises(ValueError, match="already done 2 steps"):
        nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=1, checkpoint=resume)
    (tmp_path / "junk").write_bytes(b"hello\n")
    with pytest.raises(ValueError, match="not a netdyn fit checkpoint"):
        nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=1,
               checkpoint=nd.Checkpoint(tmp_path / "junk", resume=True))


# ---------------------------------------------------------------------------------------
# Non-finite values.


def _cliff(m, key):
    # (x - 3)^2, but NaN for x >= 2 (0 * log of a negative number).
    return (m.y - 3.0) ** 2 + 0.0 * jnp.log(2.0 - m.y)


def _where_y(m):
    return m.y


def _sgd_path(x0, lr, steps):
    xs = [x0]
    for _ in range(steps):
        xs.append(xs[-1] - lr * 2 * (xs[-1] - 3.0))
    return xs


SGD2 = optax.sgd(0.2)


def test_nonfinite_stops_with_last_good_parameters(tmp_path):
    path = _sgd_path(0.0, 0.2, 4)  # 0, 1.2, 1.92, 2.352: the loss is NaN at step 3
    assert path[2] < 2.0 < path[3]
    ckpt = tmp_path / "c"
    with pytest.raises(nd.FitDivergedError, match="step 3") as info:
        nd.fit(_toy(y=0.0), _cliff, SGD2, where=_where_y, steps=10, checkpoint=ckpt)
    e = info.value
    assert e.step == 3
    np.testing.assert_allclose(e.model.y, path[2], rtol=1e-13)
    assert len(e.history) == 4 and np.isnan(e.history.loss[3]) and e.history.skipped[3]
    np.testing.assert_allclose(e.history.params["y"], path[:4], rtol=1e-13)
    # The checkpoint holds the last good state; resuming with a smaller step goes on from
    # there (the optimizer's hyper-parameters may change).
    assert nd.saved_steps(ckpt)[0] == 2
    fitted, h = nd.fit(_toy(y=0.0), _cliff, optax.sgd(0.01), where=_where_y, steps=5,
                       checkpoint=nd.Checkpoint(ckpt, resume=True))
    y = path[2]
    for k in (2, 3, 4):
        np.testing.assert_allclose(h.params["y"][k], y, rtol=1e-13)
        y = y - 0.01 * 2 * (y - 3.0)
    np.testing.assert_allclose(fitted.y, y, rtol=1e-13)
    assert not h.skipped.any()


def test_nonfinite_at_the_start():
    with pytest.raises(nd.FitDivergedError, match="step 0") as info:
        nd.fit(_toy(y=2.5), _cliff, SGD2, where=_where_y, steps=3)
    assert info.value.model.y == 2.5


def _unlucky(m, key):
    # NaN whenever the step's uniform draw is below 0.3.
    u = jax.random.uniform(key)
    return (m.y - 3.0) ** 2 + jnp.where(u < 0.3, jnp.nan, 0.0)


def test_nonfinite_skip():
    key = jax.random.key(11)
    steps = 20
    fitted, h = nd.fit(_toy(y=0.0), _unlucky, optax.sgd(0.05), where=_where_y, steps=steps,
                       key=key, redraw=True, on_nonfinite="skip")
    bad = np.array([float(jax.random.uniform(jax.random.fold_in(key, k))) < 0.3
                    for k in range(steps)])
    assert 2 <= bad.sum() <= steps - 2
    np.testing.assert_array_equal(h.skipped, bad)
    np.testing.assert_array_equal(np.isnan(h.loss), bad)
    # Reference: a bad step goes back to the last parameters with a finite loss.
    y, good = 0.0, 0.0
    for k in range(steps):
        if bad[k]:
            y = good
        else:
            np.testing.assert_allclose(h.params["y"][k], y, rtol=1e-13)
            good, y = y, y - 0.05 * 2 * (y - 3.0)
    np.testing.assert_allclose(fitted.y, y, rtol=1e-13)
    assert np.isfinite(fitted.y)


# ---------------------------------------------------------------------------------------
# Bad input.


def test_bad_input(problem):
    net, loss_fn, key = problem
    wrong = nd.FcLoss(np.eye(N + 1), SOLVER, MONITOR, duration=DURATION, dt=DT)
    with pytest.raises(ValueError, match=r"target FC has shape \(6, 6\).*5 nodes"):
        nd.fit(net, wrong, ADAM, where=_where_g, steps=2, key=key)
    with pytest.raises(ValueError, match="square FC matrix"):
        nd.FcLoss(np.ones((N, N - 1)), SOLVER, MONITOR, duration=DURATION)
    with pytest.raises(ValueError, match="finite"):
        nd.FcLoss(np.full((N, N), np.nan), SOLVER, MONITOR, duration=DURATION)
    for where in (lambda n: (), lambda n: None):
        with pytest.raises(ValueError, match="selects nothing"):
            nd.fit(net, loss_fn, ADAM, where=where, steps=2, key=key)
    with pytest.raises(ValueError, match="static field"):
        nd.fit(net, loss_fn, ADAM, where=lambda n: n.graph.max_delay, steps=2, key=key)
    with pytest.raises(ValueError, match="could not be applied"):
        nd.fit(net, loss_fn, ADAM, where=lambda n: n.coupling.G * 2, steps=2, key=key)
    toy = _toy()
    with pytest.raises(ValueError, match="n = .*int.*not differentiable"):
        nd.fit(toy, _quadratic, SGD, where=lambda m: m.n, steps=2)
    with pytest.raises(ValueError, match="static field"):
        nd.fit(toy, _quadratic, SGD, where=lambda m: m.label, steps=2)
    with pytest.raises(ValueError, match="y = 1 .*not differentiable"):
        nd.fit(Toy(x=toy.x, y=1, n=toy.n), _quadratic, SGD, where=_where_y, steps=2)
    for steps in (0, -1, True):
        with pytest.raises(ValueError, match="steps must be an integer >= 1"):
            nd.fit(toy, _quadratic, SGD, where=_where_xy, steps=steps)
    with pytest.raises(ValueError, match=r"initial value of y must lie strictly inside"):
        nd.fit(toy, _quadratic, SGD, where=_where_xy, bounds=(None, nd.Interval(0.0, 0.4)),
               steps=2)
    with pytest.raises(ValueError, match="bounds must be a transform"):
        nd.fit(toy, _quadratic, SGD, where=_where_xy, bounds=(nd.Positive(),), steps=2)
    with pytest.raises(ValueError, match="scalar loss"):
        nd.fit(toy, lambda m, k: m.x, SGD, where=_where_xy, steps=2)
    with pytest.raises(ValueError, match="redraw=True needs a key"):
        nd.fit(toy, _quadratic, SGD, where=_where_xy, steps=2, redraw=True)


def test_on_nonfinite_is_checked_without_the_type_hook(no_type_hook):
    # fit's own check, as a user meets it (the tests' type-checking hook refuses it first).
    with pytest.raises(ValueError, match="on_nonfinite must be 'stop' or 'skip', got 'ignore'"):
        nd.fit(_toy(), _quadratic, SGD, where=_where_xy, steps=2, on_nonfinite="ignore")


def test_failed_trace_writes_no_checkpoint(tmp_path, problem):
    net, _, key = problem
    wrong = nd.FcLoss(np.eye(N + 1), SOLVER, MONITOR, duration=DURATION, dt=DT)
    with pytest.raises(ValueError):
        nd.fit(net, wrong, ADAM, where=_where_g, steps=2, key=key,
               checkpoint=tmp_path / "c")
    assert not (tmp_path / "c").exists()


# ---------------------------------------------------------------------------------------
# Several starts.


@pytest.mark.slow
def test_multistart_matches_single_fits(problem):
    net, loss_fn, key = problem
    starts = jnp.array([0.05, 0.6, 0.12])
    fitted, h = nd.fit_multistart(net, loss_fn, ADAM, where=_where_g, starts=starts,
                                  bounds=nd.Positive(), steps=12, key=key)
    assert h.n_starts == 3 and h.loss.shape == (12, 3)
    singles = [_fit_g(problem, float(g), steps=12) for g in starts]
    for s, (m, hs) in enumerate(singles):
        np.testing.assert_allclose(h.loss[:, s], hs.loss, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(h.params["coupling.G"][:, s], hs.params["coupling.G"],
                                   rtol=1e-8)
    best = int(np.argmin([hs.loss[-1] for _, hs in singles]))
    assert h.best == best
    np.testing.assert_allclose(fitted.coupling.G, singles[best][0].coupling.G, rtol=1e-8)


def _hole(m, key):
    # (y - 3)^2, NaN for 2.45 < y < 2.55.
    return (m.y - 3.0) ** 2 + 0.0 * jnp.log((m.y - 2.45) * (m.y - 2.55))


def test_multistart_ignores_stopped_starts():
    # Start 0 (y = 2.2) jumps to 2.52 at once and stops there, at y = 2.2 (loss 0.64);
    # start 1 (y = 0) is at 1.92 (loss 1.17) at the last step, yet it is the one kept.
    fitted, h = nd.fit_multistart(_toy(), _hole, SGD2, where=_where_y,
                                  starts=jnp.array([2.2, 0.0]), steps=3)
    np.testing.assert_allclose(h.params["y"][:, 0], [2.2, 2.52, 2.2], rtol=1e-13)
    np.testing.assert_array_equal(h.skipped, [[False, False], [True, False], [True, False]])
    assert h.loss[-1, 0] < h.loss[-1, 1]
    assert h.best == 1
    np.testing.assert_allclose(fitted.y, _sgd_path(0.0, 0.2, 3)[3], rtol=1e-13)
    with pytest.raises(nd.FitDivergedError, match="every start"):
        nd.fit_multistart(_toy(), _hole, SGD2, where=_where_y, starts=jnp.array([2.2, 2.21]),
                          steps=3)
    with pytest.raises(ValueError, match="starts for y must have shape"):
        nd.fit_multistart(_toy(), _hole, SGD2, where=_where_y, starts=jnp.ones((2, 2)),
                          steps=3)


def _holding(path: str, value):
    """A PyTree with ``value`` at the attribute path ``path`` (``"coupling.G"``), the
    parameter's name in a fit's history and progress line."""
    for name in reversed(path.split(".")):
        value = collections.namedtuple("Node", [name])(value)
    return value


def _progress_lines(capsys, path: str, value, metrics: dict) -> list[str]:
    """The progress lines of 10 steps that keep ``value`` (at ``path``) and the loss 0.5."""
    def get(m):
        for name in path.split("."):
            m = getattr(m, name)
        return m

    def loss_fn(m, key):
        return 0.5 + 0.0 * jnp.sum(get(m)), metrics

    nd.fit(_holding(path, value), loss_fn, optax.sgd(0.0), where=get, steps=10, progress=True)
    return capsys.readouterr().err.splitlines()


def test_progress_line(capsys):
    # Not a terminal (pytest captures stderr): a line every tenth of the steps.
    lines = _progress_lines(capsys, "coupling.G", jnp.asarray(0.125),
                            {"fc_r": jnp.asarray(0.75)})
    assert len(lines) == 10
    assert re.fullmatch(r"\[#{6}\.{14}\] step  3/10 \| loss 0\.5 \| fc_r 0\.75 \| G 0\.125 "
                        r"\| \d+\.\d\d s/step", lines[2]), lines[2]
    # A vector is summarised by its mean and spread, named with its parameterisation.
    lines = _progress_lines(capsys, "graph.weights.log_gain.deviations",
                            jnp.asarray([-0.5, 0.5]), {})
    assert re.fullmatch(r"\[#{2}\.{18}\] step  1/10 \| loss 0\.5 \| log_gain\.deviations "
                        r"mean 0 sd 0\.5 \| \d+\.\d\d s/step", lines[0]), lines[0]
