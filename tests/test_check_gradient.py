"""``check_gradient``: agrees on exact gradients (closed forms, a simulated loss), disagrees
on a gradient that leaves a term out, and refuses bad arguments."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_networks import rww

import netdyn as nd


class Params(eqx.Module):
    a: jax.Array
    b: jax.Array


def _loss(m, key):
    return jnp.sum(jnp.sin(m.a) * m.b) + 0.5 * jnp.sum(m.b**2), {}


def test_exact_gradient_agrees_with_the_closed_form():
    m = Params(jnp.asarray([0.3, -1.2, 2.0]), jnp.asarray(0.7))
    d = (jnp.asarray([1.0, 0.5, -2.0]), jnp.asarray(0.25))
    check = nd.check_gradient(_loss, m, lambda p: (p.a, p.b), direction=d, step=1e-3)
    exact = float(jnp.sum(jnp.cos(m.a) * m.b * d[0]) + (jnp.sum(jnp.sin(m.a)) + m.b) * d[1])
    assert check.gradient == pytest.approx(exact, rel=1e-12)
    assert check.finite_difference_half == pytest.approx(exact, rel=1e-6)
    assert check.agree and check.relative_error < 1e-6


def test_a_gradient_that_leaves_a_term_out_disagrees():
    # The gradient sees only x**2; the loss (and the finite difference) has -3 x**3 too.
    def loss(m, key):
        x = m.b
        return x**2 - 3.0 * jax.lax.stop_gradient(x) ** 3

    check = nd.check_gradient(loss, Params(jnp.zeros(1), jnp.asarray(1.0)), lambda p: p.b,
                              direction=jnp.asarray(1.0))
    assert check.gradient == pytest.approx(2.0, rel=1e-12)
    assert check.finite_difference_half == pytest.approx(2.0 - 9.0, rel=1e-6)
    assert check.settled and not check.agree


def test_a_loss_rough_at_the_steps_scale_is_not_settled():
    # A kink-free but fast ripple: the differences at h and h / 2 disagree.
    def loss(m, key):
        return m.b**2 + 1e-3 * jnp.sin(m.b / 1e-4)

    check = nd.check_gradient(loss, Params(jnp.zeros(1), jnp.asarray(1.0)), lambda p: p.b,
                              direction=jnp.asarray(1.0), step=3e-4)
    assert not check.settled and not check.agree


def test_random_direction_is_unit_and_reproducible():
    m = Params(jnp.asarray([0.3, -1.2, 2.0]), jnp.asarray(0.7))
    c1 = nd.check_gradient(_loss, m, lambda p: (p.a, p.b), seed=3)
    c2 = nd.check_gradient(_loss, m, lambda p: (p.a, p.b), seed=3)
    norm = np.sqrt(sum(np.sum(v**2) for v in c1.direction))
    assert norm == pytest.approx(1.0) and c1.gradient == c2.gradient and c1.agree


def test_relative_direction_scales_by_each_value_and_moves_zeros():
    # Values of different scales move by the same relative step; those at 0 (a map
    # coefficient, a log-gain at the start) still move, by an absolute step.
    m = Params(jnp.asarray([0.3, 0.0, -2e-3]), jnp.asarray(0.0))
    where = lambda p: (p.a, p.b)  # noqa: E731
    unit = nd.check_gradient(_loss, m, where, seed=5).direction
    rel = nd.check_gradient(_loss, m, where, seed=5, relative=True)
    np.testing.assert_array_equal(rel.direction[0], np.array([0.3, 1.0, -2e-3]) * unit[0])
    assert rel.direction[1] == unit[1] != 0
    assert rel.agree


@pytest.mark.slow
def test_simulated_loss_with_the_exact_burn_in_gradient(getkey):
    # Through a delayed, noisy RWW network with a burn-in differentiated too: exact.
    net = rww(G=0.3)
    target = jnp.asarray(np.corrcoef(np.random.default_rng(0).normal(size=(40, 6)).T))
    loss = nd.FcLoss(target, nd.Heun(), nd.TemporalAverage(period=10.0, variables=("S",)),
                     duration=400.0, burn_in=100.0, burn_in_gradient=True, metric="1-r+huber")
    check = nd.check_gradient(loss, net, lambda n: (n.coupling.G, n.dynamics.I_o),
                              key=getkey(), step=1e-5)
    assert check.agree and check.relative_error < 1e-4, check


@pytest.mark.parametrize(
    "kwargs, message",
    [({"step": 0.0}, "step must be a finite number > 0"),
     ({"direction": jnp.ones(2)}, "direction must have the shapes"),
     ({"direction": jnp.ones(3), "relative": True}, "either a direction or relative=True")],
)
def test_bad_arguments(kwargs, message):
    m = Params(jnp.asarray([0.3, -1.2, 2.0]), jnp.asarray(0.7))
    with pytest.raises(ValueError, match=message):
        nd.check_gradient(_loss, m, lambda p: p.a, **kwargs)


def test_bounds_check_the_gradient_in_the_unconstrained_coordinate():
    # a in (0, 2) through nd.Interval, b > 0 through nd.Positive: theta is u, x = T(u).
    a0, b0 = np.array([0.3, 1.2, 1.9]), 0.7
    m = Params(jnp.asarray(a0), jnp.asarray(b0))
    da, db = np.array([1.0, 0.5, -2.0]), 0.25
    check = nd.check_gradient(_loss, m, lambda p: (p.a, p.b), step=1e-3,
                              direction=(jnp.asarray(da), jnp.asarray(db)),
                              bounds=(nd.Interval(0.0, 2.0), nd.Positive()))

    # Reference: central differences of the loss written in NumPy as a function of u
    # (the transforms' formulas: a scaled logistic and the softplus), at a small step.
    ua = np.log(a0 / 2) - np.log1p(-a0 / 2)
    ub = b0 + np.log(-np.expm1(-b0))

    def loss(t):
        a = 2.0 / (1.0 + np.exp(-(ua + t * da)))
        b = np.log1p(np.exp(ub + t * db))
        return np.sum(np.sin(a) * b) + 0.5 * b**2

    h = 1e-5
    reference = (loss(h) - loss(-h)) / (2 * h)
    assert check.gradient == pytest.approx(reference, rel=1e-8)
    assert check.finite_difference_half == pytest.approx(reference, rel=1e-6)
    assert check.agree
    # In the leaves' own units the same direction gives another derivative.
    plain = nd.check_gradient(_loss, m, lambda p: (p.a, p.b), step=1e-3,
                              direction=(jnp.asarray(da), jnp.asarray(db)))
    assert abs(plain.gradient - reference) > 0.1 * abs(reference)
