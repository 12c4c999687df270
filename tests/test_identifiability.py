"""``identifiability``, ``profile`` and ``local_profile``: Hessian and Gauss-Newton
information against closed forms (Rosenbrock), against finite differences of the gradient
and of the residuals through a delayed, noisy simulation, sloppy directions where the loss
sees only a sum, and the profiles against their closed forms."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from toy_networks import rww

import netdyn as nd


class Params(eqx.Module):
    a: jax.Array
    b: jax.Array


def _residuals(m, key):
    # Rosenbrock: L = (1 - a)**2 + 100 (b - a**2)**2 = r . r
    return jnp.stack([1.0 - m.a, 10.0 * (m.b - m.a**2)])


def _rosenbrock(m, key):
    r = _residuals(m, key)
    return jnp.sum(r * r)


def test_rosenbrock_hessian_and_gauss_newton_against_closed_forms():
    a, b = 0.7, 0.2
    out = nd.identifiability(_rosenbrock, Params(jnp.asarray(a), jnp.asarray(b)),
                             lambda p: (p.a, p.b), residuals=_residuals)
    hessian = np.array([[2 - 400 * (b - a**2) + 800 * a**2, -400 * a], [-400 * a, 200.0]])
    jac = np.array([[-1.0, 0.0], [-20 * a, 10.0]])
    np.testing.assert_allclose(out.hessian, hessian, rtol=1e-12)
    np.testing.assert_allclose(out.fisher, jac.T @ jac, rtol=1e-12)
    np.testing.assert_allclose(out.gradient, 2 * jac.T @ np.array([1 - a, 10 * (b - a**2)]),
                               rtol=1e-12)
    np.testing.assert_allclose(out.hessian_eigenvalues, np.linalg.eigvalsh(hessian)[::-1],
                               rtol=1e-12)
    assert out.names == ("a", "b") and out.loss == pytest.approx((1 - a)**2 + 100 * (b - a**2)**2)


def test_a_second_call_reuses_the_compiled_products():
    # The value, gradient and Hessian columns come from one program (the forward pass over
    # value_and_grad), the residuals' columns from another; a second call compiles nothing.
    traced = {"loss": 0, "residuals": 0}

    def loss(m, key):
        traced["loss"] += 1
        return _rosenbrock(m, key)

    def residuals(m, key):
        traced["residuals"] += 1
        return _residuals(m, key)

    def where(p):
        return p.a, p.b

    for a in (0.7, 0.4):
        nd.identifiability(loss, Params(jnp.asarray(a), jnp.asarray(0.2)), where,
                           residuals=residuals)
    assert traced == {"loss": 1, "residuals": 1}


def test_bounded_leaf_in_the_fits_coordinates():
    # b = softplus(u) through Positive(): the Hessian is in u; compare with central
    # differences of the closed-form gradient in u (db/du = 1 / (1 + exp(-u))).
    a, u = 0.7, 0.2 + np.log(1 - np.exp(-0.2))

    def grad_u(a, u):
        b = np.log1p(np.exp(u))
        return np.array([-2 * (1 - a) - 400 * a * (b - a**2),
                         200 * (b - a**2) / (1 + np.exp(-u))])

    h = 1e-6
    fd = np.stack([(grad_u(a + h, u) - grad_u(a - h, u)) / (2 * h),
                   (grad_u(a, u + h) - grad_u(a, u - h)) / (2 * h)], axis=1)
    out = nd.identifiability(_rosenbrock, Params(jnp.asarray(a), jnp.asarray(0.2)),
                             lambda p: (p.a, p.b), bounds=(None, nd.Positive()))
    np.testing.assert_allclose(out.hessian, fd, rtol=1e-7)
    assert out.fisher is None  # no residuals given, and not an FcLoss


def test_a_loss_that_sees_only_the_sum_has_one_sloppy_direction():
    def residuals(m, key):
        return jnp.atleast_1d(m.a + jnp.sum(m.b) - 2.0)

    out = nd.identifiability(lambda m, k: jnp.sum(residuals(m, k) ** 2),
                             Params(jnp.asarray(0.5), jnp.asarray([0.3, 0.4])),
                             lambda p: (p.a, p.b), residuals=residuals)
    assert out.names == ("a", "b[0]", "b[1]")
    np.testing.assert_allclose(out.fisher_eigenvalues, [3.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.abs(out.fisher_eigenvectors[:, 0]), np.full(3, 3**-0.5))
    assert len(out.sloppy) == 2  # the two directions orthogonal to (1, 1, 1)
    single = nd.identifiability(lambda m, k: (m.a + m.b[0] - 2.0) ** 2,
                                Params(jnp.asarray(0.5), jnp.asarray([0.3])),
                                lambda p: (p.a, p.b), residuals=lambda m, k: m.a + m.b - 2.0)
    assert len(single.sloppy) == 1 and "0.71 a - 0.71 b[0]" in single.sloppy[0]


@pytest.mark.slow
def test_simulated_fc_loss_against_finite_differences(getkey):
    # Through a delayed, noisy RWW network: each Hessian column against central
    # differences of the gradient, and the Gauss-Newton information against the Jacobian
    # of the simulated FC by central differences, all on common noise.
    net = rww(G=0.3)
    target = jnp.asarray(np.corrcoef(np.random.default_rng(0).normal(size=(40, 6)).T))
    loss = nd.FcLoss(target, nd.Heun(), nd.TemporalAverage(period=10.0, variables=("S",)),
                     duration=200.0, metric="1-r+huber")  # no burn-in: one run per program
    key = getkey()
    where = lambda n: (n.coupling.G, n.dynamics.I_o)  # noqa: E731
    out = nd.identifiability(loss, net, where, key=key)

    def at(x):
        return eqx.tree_at(where, net, (jnp.asarray(x[0]), jnp.asarray(x[1])))

    def loss_and_fc(x):  # the loss (of the simulated FC) and that FC, from one simulation
        f = loss.simulated_fc(at(x), key)
        return loss.loss_of_fc(f)[0], f[np.triu_indices(6, k=1)]

    # One compiled program for the gradient and the FC (not one for each).
    both = jax.jit(jax.grad(loss_and_fc, has_aux=True))
    x0, h = np.array([0.3, 0.32]), 1e-6  # FD error O(h**2): 5e-8 relative here
    cols, jac = [], []
    for e in np.eye(2):
        (g_plus, fc_plus), (g_minus, fc_minus) = both(x0 + h * e), both(x0 - h * e)
        cols.append((np.asarray(g_plus) - np.asarray(g_minus)) / (2 * h))
        jac.append((np.asarray(fc_plus) - np.asarray(fc_minus)) / (2 * h))
    np.testing.assert_allclose(out.hessian, np.stack(cols, axis=1), rtol=1e-6,
                               atol=1e-7 * np.abs(out.hessian).max())
    jac = np.stack(jac, axis=1)
    np.testing.assert_allclose(out.fisher, jac.T @ jac, rtol=1e-6)


def test_profile_with_the_other_parameter_reoptimized_is_the_closed_form():
    # L = (a - 1)**2 + 10 (a + b - 2)**2: min over b is (a - 1)**2 at b = 2 - a.
    def loss(m, key):
        return (m.a - 1.0) ** 2 + 10.0 * (m.a + m.b - 2.0) ** 2

    values = [1.0, 1.5, 2.0, 0.5, 0.0]
    prof = nd.profile(loss, Params(jnp.asarray(0.0), jnp.asarray(0.0)), lambda p: p.a, values,
                      where=lambda p: p.b, optimizer=optax.sgd(0.04), steps=60)
    np.testing.assert_allclose(prof.loss, (np.array(values) - 1) ** 2, atol=1e-8)
    np.testing.assert_allclose([b[0] for b in prof.others], 2 - np.array(values), atol=1e-5)
    plain = nd.profile(loss, Params(jnp.asarray(0.0), jnp.asarray(0.0)), lambda p: p.a, [1.0])
    assert plain.loss[0] == pytest.approx(10.0) and prof.names == ("a", "b")


class Three(eqx.Module):
    a: jax.Array
    b: jax.Array
    c: jax.Array


def _three(m, key):
    # min over (b, c) at fixed a: c = b = 2 - a, leaving (a - 1)**2.
    return (m.a - 1.0) ** 2 + 10.0 * (m.a + m.b - 2.0) ** 2 + 4.0 * (m.c - m.b) ** 2


# The Hessian of _three, written out: 2 [[11, 10, 0], [10, 14, -4], [0, -4, 4]].
THREE_HESSIAN = 2.0 * np.array([[11.0, 10.0, 0.0], [10.0, 14.0, -4.0], [0.0, -4.0, 4.0]])


def test_local_profile_of_a_quadratic_loss_is_the_exact_profile():
    fitted = Three(jnp.asarray(1.0), jnp.asarray(1.0), jnp.asarray(1.0))
    values = np.array([0.5, 0.9, 1.0, 1.3, 2.0])
    prof = nd.local_profile(_three, fitted, lambda p: (p.a, p.b, p.c), "a", values,
                            THREE_HESSIAN)
    np.testing.assert_allclose(prof.loss, (values - 1) ** 2, atol=1e-12)
    np.testing.assert_allclose(prof.quadratic, (values - 1) ** 2, atol=1e-12)
    others = np.array([[float(x) for x in point] for point in prof.others])
    np.testing.assert_allclose(others, np.stack([values, 2 - values, 2 - values], axis=1),
                               atol=1e-12)
    assert prof.names == ("a", "b", "c")


def test_local_profile_in_bounded_coordinates_agrees_to_second_order():
    # b = softplus(u) (Positive): the Newton step is in u, the values in b's units. Near
    # the fit the evaluated profile meets the quadratic model's to third order.
    def loss(m, key):
        return (m.a - 1.0) ** 2 + 10.0 * (m.a + jnp.log(m.b) - 1.0) ** 2

    fitted = Params(jnp.asarray(1.0), jnp.asarray(1.0))  # the minimum: a = 1, log b = 0
    where, bounds = (lambda p: (p.a, p.b)), (None, nd.Positive())
    h = nd.identifiability(loss, fitted, where, bounds=bounds).hessian
    gaps = []
    for d in (0.02, 0.01):
        prof = nd.local_profile(loss, fitted, where, "b", [1.0 + d, 1.0], h, bounds=bounds)
        assert float(prof.others[0][1]) == pytest.approx(1.0 + d, rel=1e-12)
        assert prof.loss[1] == pytest.approx(0.0, abs=1e-20) == prof.quadratic[1]
        gaps.append(abs(prof.loss[0] - prof.quadratic[0]))
        assert prof.loss[0] == pytest.approx(prof.quadratic[0], rel=0.1)
    assert gaps[0] / gaps[1] == pytest.approx(8.0, rel=0.2)  # O(d^3)


def test_local_profile_holds_an_unconstrained_coordinate():
    def loss(m, key):  # b is invisible
        return (m.a - 1.0) ** 2 + 0.0 * m.b

    fitted = Params(jnp.asarray(1.0), jnp.asarray(0.3))
    where = lambda p: (p.a, p.b)  # noqa: E731
    h = np.array([[2.0, 0.0], [0.0, 0.0]])
    prof = nd.local_profile(loss, fitted, where, "a", [0.0, 2.0], h)
    np.testing.assert_allclose(prof.loss, [1.0, 1.0])
    assert [float(p[1]) for p in prof.others] == [0.3, 0.3]
    with pytest.raises(ValueError, match="does not constrain b"):
        nd.local_profile(loss, fitted, where, "b", [0.0], h)


@pytest.mark.parametrize(
    "call, message",
    [(lambda m: nd.local_profile(_rosenbrock, m, lambda p: (p.a, p.b), "c", [1.0],
                                 np.eye(2)), "'c' is not one of the fitted coordinates"),
     (lambda m: nd.local_profile(_rosenbrock, m, lambda p: (p.a, p.b), "a", [1.0],
                                 np.eye(3)), r"hessian must be a finite \(2, 2\) matrix"),
     (lambda m: nd.local_profile(_rosenbrock, m, lambda p: (p.a, p.b), "a", [],
                                 np.eye(2)), "non-empty 1-D sequence"),
     (lambda m: nd.identifiability(_rosenbrock, m, lambda p: p.a, sloppy_ratio=0.0),
      "sloppy_ratio must be in"),
     (lambda m: nd.profile(_rosenbrock, m, lambda p: (p.a, p.b), [1.0]),
      "must select one scalar leaf"),
     (lambda m: nd.profile(_rosenbrock, m, lambda p: p.a, [1.0], where=lambda p: p.a),
      "where also selects the profiled a"),
     (lambda m: nd.profile(_rosenbrock, m, lambda p: p.a, [np.nan]), "finite numbers"),
     (lambda m: nd.profile(_rosenbrock, m, lambda p: p.a, [1.0], where=lambda p: p.b,
                           steps=0), "steps must be an integer >= 1")],
)
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call(Params(jnp.asarray(0.7), jnp.asarray(0.2)))
