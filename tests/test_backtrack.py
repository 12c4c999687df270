"""``backtrack``: against a NumPy loop of Adam with the backtracking rule written out, on a
loss with a cliff (where plain Adam is caught), through ``fit``, its checkpoints and
``fit_multistart``.
"""

import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import netdyn as nd

# A 1-D loss shaped like the FC loss of a mean-field model in G: a minimum at u = 1, and a
# steep rise below u = 0.8 (the edge of a bifurcation) to a flat plateau,
# L(u) = (1 - s) (u - 1)^2 + H s with s = sigmoid((0.8 - u) / w).
EDGE, WIDTH, HEIGHT = 0.8, 0.01, 1.0


def _cliff_np(u):
    s = 1.0 / (1.0 + np.exp(-(EDGE - u) / WIDTH))
    ds = -s * (1.0 - s) / WIDTH
    q = (u - 1.0) ** 2
    return (1 - s) * q + HEIGHT * s, -ds * q + (1 - s) * 2.0 * (u - 1.0) + HEIGHT * ds


class Point(eqx.Module):
    u: jax.Array


def _cliff(m, key):
    del key
    s = jax.nn.sigmoid((EDGE - m.u) / WIDTH)
    return (1 - s) * (m.u - 1.0) ** 2 + HEIGHT * s


def _adam_np(g, m, v, t, lr, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam update (Kingma & Ba 2015, Algorithm 1): the step and the new moments."""
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    t = t + 1
    step = -lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return step, m, v, t


def _backtracking_adam_np(u, steps, lr, shrink):
    """The rule of ``backtrack``'s docstring around ``_adam_np``: the points evaluated and
    the number of rejected steps."""
    inner = (0.0, 0.0, 0)  # (m, v, t)
    best_u, best_g, best_L, scale = None, None, np.inf, 1.0
    points, rejected = [], 0
    for _ in range(steps):
        points.append(u)
        L, g = _cliff_np(u)
        if L <= best_L:
            step, *moments = _adam_np(g, *inner, lr)
            inner = tuple(moments)
            best_u, best_g, best_L = u, g, L
            u = u + scale * step
        else:
            scale *= shrink
            step, *moments = _adam_np(best_g, 0.0, 0.0, 0, lr)  # restarted
            inner = tuple(moments)
            u = best_u + scale * step
            rejected += 1
    return np.array(points), rejected


def _fit(optimizer, steps, u0=2.0, **kw):
    return nd.fit(Point(jnp.asarray(u0)), _cliff, optimizer, where=lambda m: m.u,
                  steps=steps, **kw)


LR, STEPS = 0.3, 40
BACKTRACK = nd.backtrack(optax.adam(LR), shrink=0.5)


def test_matches_numpy_reference_and_escapes_the_cliff():
    expected, rejected = _backtracking_adam_np(2.0, STEPS, LR, 0.5)
    assert rejected >= 2  # the reference itself steps over the edge: the test bites
    fitted, history = _fit(BACKTRACK, STEPS)
    np.testing.assert_allclose(history.params["u"], expected, rtol=1e-12, atol=1e-12)
    # Plain Adam steps over the edge and stays on the plateau; taken back, it converges.
    _, plain = _fit(optax.adam(LR), STEPS)
    assert plain.loss[-1] > 0.9 * HEIGHT
    assert history.loss[-1] < 1e-3 and abs(float(fitted.u) - 1.0) < 0.05
    # The best point's loss never rises.
    assert np.all(np.diff(np.minimum.accumulate(history.loss)) <= 0)


def test_is_the_wrapped_optimizer_while_the_loss_falls():
    target = jnp.array([0.3, -0.2])

    def quadratic(params):
        return jnp.sum((params - target) ** 2)

    adam, wrapped = optax.adam(0.01), nd.backtrack(optax.adam(0.01))
    p, q = jnp.zeros(2), jnp.zeros(2)
    # Optax mixes Python floats and int32 counts: standard promotion, as in ``fit``.
    with jax.numpy_dtype_promotion("standard"):
        sa, sw = adam.init(p), wrapped.init(q)
        for _ in range(15):
            ga, gw = jax.grad(quadratic)(p), jax.grad(quadratic)(q)
            ua, sa = adam.update(ga, sa, p)
            uw, sw = wrapped.update(gw, sw, q, value=quadratic(q))
            p, q = optax.apply_updates(p, ua), optax.apply_updates(q, uw)
            np.testing.assert_array_equal(p, q)
    assert int(sw.rejected) == 0 and float(sw.scale) == 1.0


SHRINK = r"backtrack\(shrink\) must be a finite real number > 0 and < 1, got "


def test_bad_arguments():
    for shrink in (0.0, 1.0, -0.5, 2.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=SHRINK + re.escape(repr(shrink))):
            nd.backtrack(optax.adam(0.1), shrink=shrink)
    params = jnp.zeros(2)
    with jax.numpy_dtype_promotion("standard"):
        state = BACKTRACK.init(params)
    with pytest.raises(ValueError, match="value=loss"):
        BACKTRACK.update(params, state, params)
    with pytest.raises(ValueError, match="needs the parameters"):
        BACKTRACK.update(params, state, value=0.0)
    # A vector of losses would broadcast the best loss into a vector (a shape error later).
    with pytest.raises(ValueError, match=r"value must be the scalar loss .* got shape \(2,\)"):
        BACKTRACK.update(params, state, params, value=jnp.zeros(2))


@pytest.mark.parametrize("shrink", ["0.5", None, True, 1])
def test_shrink_of_the_wrong_type(no_type_hook, shrink):
    # "0.5" and None gave a raw TypeError ('<' not supported between 'float' and 'str').
    with pytest.raises(ValueError, match=SHRINK + re.escape(repr(shrink))):
        nd.backtrack(optax.adam(0.1), shrink=shrink)


def test_optimizer_must_be_an_optax_transformation(no_type_hook):
    # optax.adam uncalled (a factory, not an optimizer) gave a raw AttributeError from optax
    # ('function' object has no attribute 'init').
    with pytest.raises(ValueError, match=r"backtrack\(optimizer\) must be an "
                                         r"optax.GradientTransformation .* got <function adam"):
        nd.backtrack(optax.adam)


class Stop(Exception):
    pass


def test_resume_continues_the_same_search(tmp_path):
    whole_model, whole = _fit(BACKTRACK, 20)
    ckpt = tmp_path / "fit.ckpt"

    def stop(row):
        if row["step"] == 11:
            raise Stop

    with pytest.raises(Stop):
        _fit(BACKTRACK, 20, checkpoint=nd.Checkpoint(ckpt, every=5), callback=stop)
    model, resumed = _fit(BACKTRACK, 20, checkpoint=nd.Checkpoint(ckpt, resume=True))
    np.testing.assert_array_equal(resumed.params["u"], whole.params["u"])
    np.testing.assert_array_equal(model.u, whole_model.u)


def test_multistart_matches_single_fits():
    starts = jnp.array([2.0, 0.9, 1.3])
    _, h = nd.fit_multistart(Point(jnp.asarray(2.0)), _cliff, BACKTRACK,
                             where=lambda m: m.u, starts=starts, steps=12)
    for i, u0 in enumerate(starts):
        _, single = _fit(BACKTRACK, 12, u0=float(u0))
        np.testing.assert_allclose(h.params["u"][:, i], single.params["u"], rtol=1e-12)


def test_fit_optimizer_decays_its_steps_along_a_cosine_and_scales_each_leaf():
    lr, steps = 0.1, 4
    opt = nd.fit_optimizer(lr, steps, redraw=True, scales=(1.0, 0.2))
    params = (jnp.zeros(()), jnp.zeros(()))
    state = opt.init(params)
    grads = (jnp.asarray(2.0), jnp.asarray(-3.0))  # constant: Adam's step is its rate
    for t in range(steps + 1):
        with jax.numpy_dtype_promotion("standard"):  # Optax's own arithmetic, as nd.fit
            updates, state = opt.update(grads, state, params)
        # Independently: lr (0.1 + 0.9 (1 + cos(pi t / T)) / 2), against the gradient.
        rate = lr * (0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * min(t, steps) / steps)))
        np.testing.assert_allclose([float(u) for u in updates], [-rate, 0.2 * rate],
                                   rtol=1e-6)
    # With one noise key, steps that raise the loss are taken back (backtrack); the
    # same arguments give the same instance (a fit's compiled step is reused).
    fixed = nd.fit_optimizer(lr, steps)
    assert isinstance(fixed.init(params), nd.BacktrackState)
    assert nd.fit_optimizer(lr, steps) is fixed
    with pytest.raises(ValueError, match="2 scales for 3 leaves"):
        nd.scale_updates((1.0, 2.0)).update((1.0, 2.0, 3.0), optax.EmptyState())
