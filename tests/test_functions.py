"""Removable singularities and overflow: finite values and gradients in both precisions.

References are independent: Python's ``math`` in float64 far from the singular point, and
``decimal`` arithmetic, which evaluates ``z / (1 - exp(-z))`` and its derivative directly
(no series), with enough digits that cancellation near ``z = 0`` does not matter.
"""

import decimal
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import netdyn as nd


def _digits(z: float) -> int:
    """Digits for ``z / (1 - exp(-z))`` and its derivative to 40 significant digits: the
    derivative's numerator ``1 - exp(-z) - z exp(-z)`` (about ``z^2 / 2``) loses about
    ``-2 log10 |z|`` of them to cancellation. (A fixed 200 took 13 s over the 20,001
    points of the window below, and was too few below ``|z|`` ~ 1e-80.)"""
    return 40 + 2 * max(0, -decimal.Decimal(z).adjusted())


def _g_reference(z: float) -> float:
    if z == 0.0:
        return 1.0
    with decimal.localcontext(prec=_digits(z)):
        d = decimal.Decimal(z)
        return float(d / (1 - (-d).exp()))


def _dg_reference(z: float) -> float:
    if z == 0.0:
        return 0.5
    with decimal.localcontext(prec=_digits(z)):
        d = decimal.Decimal(z)
        e = (-d).exp()
        return float((1 - e - d * e) / (1 - e) ** 2)


POINTS = [0.0, 1e-30, -1e-30, 1e-8, -1e-8, 3e-4, -3e-4, 0.01, -0.01, 0.0999, 0.1, -0.1,
          0.1001, 0.5, -0.5, 5.0, -5.0, 60.0, -60.0, 200.0, -200.0]


@pytest.mark.parametrize("dtype,rtol", [(jnp.float32, 1e-5), (jnp.float64, 1e-14)])
def test_z_over_one_minus_exp_matches_reference(dtype, rtol):
    z = jnp.asarray(POINTS, dtype)
    value = jax.jit(nd.z_over_one_minus_exp)(z)  # compiled, as in a simulation
    grad = jax.jit(jax.vmap(jax.grad(nd.z_over_one_minus_exp)))(z)
    assert value.dtype == dtype and grad.dtype == dtype
    zs = np.asarray(z, np.float64)  # the points as represented in this precision
    expected = np.array([_g_reference(float(x)) for x in zs])
    dexpected = np.array([_dg_reference(float(x)) for x in zs])
    tiny = float(jnp.finfo(dtype).tiny)  # far negative z underflows to 0 in float32
    np.testing.assert_allclose(np.asarray(value, np.float64), expected, rtol=rtol, atol=tiny)
    np.testing.assert_allclose(np.asarray(grad, np.float64), dexpected, rtol=rtol, atol=tiny)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_z_over_one_minus_exp_dense_window_is_finite(dtype):
    # The window where the naive quotient failed in float32 (issue: 45 of 200,001 points
    # non-finite), and far beyond, in both precisions.
    # Compiled (as in a simulation): op by op, the vmap of the gradient took seconds.
    z = jnp.linspace(-2e-2, 2e-2, 200_001, dtype=dtype)
    value = jax.jit(nd.z_over_one_minus_exp)(z)
    grad = jax.jit(jax.vmap(jax.grad(nd.z_over_one_minus_exp)))(z)
    assert bool(jnp.all(jnp.isfinite(value))) and bool(jnp.all(jnp.isfinite(grad)))
    # Near 0: g = 1 + z/2 + z^2/12 and g' = 1/2 + z/6, up to O(z^4) and O(z^3).
    zz = np.asarray(z, np.float64)
    atol = 1e-6 if dtype == jnp.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(value, np.float64), 1 + zz / 2 + zz**2 / 12,
                               atol=atol)
    np.testing.assert_allclose(np.asarray(grad, np.float64), 0.5 + zz / 6.0, atol=atol)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_logistic_no_overflow(dtype):
    x = jnp.asarray([-1e4, -100.0, -1.0, 0.0, 1.0, 100.0, 1e4], dtype)
    value = nd.logistic(x)
    grad = jax.vmap(jax.grad(nd.logistic))(x)
    expected = [1.0 / (1.0 + math.exp(-float(v))) if v > -700 else 0.0 for v in x]
    np.testing.assert_allclose(np.asarray(value, np.float64), expected, rtol=1e-6, atol=1e-40)
    assert bool(jnp.all(jnp.isfinite(grad)))


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_rww_transfer_finite_at_singular_point(dtype):
    # The coupling input that puts a x - b exactly (in this precision) at 0, and a window
    # of +-2e-4 around it: vector field and its derivative in c are finite, and equal the
    # float64 reference H(x) = (a x - b) / (1 - exp(-d (a x - b))).
    m = nd.ReducedWongWang(w=0.5, I_o=0.32)
    S = 0.1
    c_star = ((m.b / m.a) - m.I_o - m.w * m.J_N * S) / m.J_N
    cs = jnp.asarray(c_star + np.linspace(-2e-4, 2e-4, 20_001), dtype)
    y = jnp.full((1, cs.shape[0]), S, dtype)

    def f(c):
        return m.vector_field(jnp.asarray(0.0, dtype), y, c[None])[0]

    # Compiled (as in a simulation): op by op, the vmap of the gradient took seconds.
    dS = jax.jit(f)(cs)
    dS_dc = jax.jit(jax.vmap(lambda c: jax.grad(lambda cc: m.vector_field(
        jnp.asarray(0.0, dtype), jnp.full((1, 1), S, dtype), cc[None, None])[0, 0])(c)))(cs)
    assert bool(jnp.all(jnp.isfinite(dS))) and bool(jnp.all(jnp.isfinite(dS_dc)))
    # Reference in float64 at the same (rounded) inputs.
    c64 = np.asarray(cs, np.float64)
    u = m.a * (m.w * m.J_N * S + m.I_o + m.J_N * c64) - m.b
    H = np.array([_g_reference(m.d * float(v)) / m.d for v in u])
    expected = -S / m.tau_s + (1 - S) * H * m.gamma
    tol = 1e-6 if dtype == jnp.float32 else 1e-14
    np.testing.assert_allclose(np.asarray(dS, np.float64), expected, atol=tol)
    dH = np.array([_dg_reference(m.d * float(v)) for v in u])  # dH/du * d = dg/dz
    np.testing.assert_allclose(np.asarray(dS_dc, np.float64),
                               (1 - S) * m.gamma * dH * m.a * m.J_N, rtol=1e-4)


@pytest.mark.parametrize("z", [-30.0, -2.0, -0.3, -0.05, 0.0, 0.05, 0.3, 2.0, 30.0])
def test_z_over_one_minus_exp_second_derivative(z):
    # The written-out first derivative is itself differentiable (curvatures, Hessians):
    # its derivative against central differences of the decimal reference's g'.
    d2 = float(jax.jit(jax.grad(jax.grad(nd.z_over_one_minus_exp)))(jnp.float64(z)))
    h = 1e-5
    expected = (_dg_reference(z + h) - _dg_reference(z - h)) / (2 * h)
    assert d2 == pytest.approx(expected, rel=1e-7, abs=1e-10)
    if z == 0.0:
        assert d2 == pytest.approx(1 / 6, rel=1e-14)  # g = 1 + z/2 + z^2/12 + ...
