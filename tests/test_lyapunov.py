"""``nd.lyapunov`` and ``nd.block_lyapunov``: against SciPy's Bartels-Stewart solver
(``scipy.linalg.solve_continuous_lyapunov``), closed forms for 2x2 systems, and their
derivatives (reverse mode, forward mode, forward over reverse) against automatic
differentiation through a dense Kronecker-product solve and against central differences."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import netdyn as nd

# Compiled once per shape (eagerly, each operation would compile on its own).
# eqx.filter_jit: a runtime error (eqx.error_if) then raises EquinoxRuntimeError.
_lyapunov = eqx.filter_jit(nd.lyapunov)
_block_lyapunov = eqx.filter_jit(nd.block_lyapunov)
_doubling = eqx.filter_jit(lambda a, q: nd.lyapunov(a, q, method="doubling"))
_block_doubling = eqx.filter_jit(lambda *args: nd.block_lyapunov(*args, method="doubling"))


def _stable(rng, n: int, margin: float = 0.3) -> np.ndarray:
    """A random real matrix shifted so that its spectral abscissa is ``-margin``."""
    a = rng.normal(size=(n, n))
    return a - (np.linalg.eigvals(a).real.max() + margin) * np.eye(n)


def _spd(rng, n: int) -> np.ndarray:
    b = rng.normal(size=(n, n))
    return b @ b.T + 0.1 * np.eye(n)


def _scipy(a, q) -> np.ndarray:
    """S with A S + S A^T + Q = 0 (SciPy solves A X + X A^H = Q)."""
    return scipy.linalg.solve_continuous_lyapunov(np.asarray(a), -np.asarray(q))


def _kron_lyapunov(a, q):
    """The same equation as one dense linear system, by ``jnp.linalg.solve``: with the
    row-major vectorisation, vec(A S) = (A (x) I) vec S and vec(S A^T) = (I (x) A) vec S.
    Plain JAX: autodiff through it is the reference for the custom VJPs."""
    n = a.shape[0]
    eye = jnp.eye(n, dtype=a.dtype)
    m = jnp.kron(a, eye) + jnp.kron(eye, a)
    return jnp.linalg.solve(m, -q.reshape(-1)).reshape(n, n)


def _relative_residual(a, q, s) -> float:
    """||A S + S A^T + Q|| / (2 ||A|| ||S|| + ||Q||): the backward error of a solution."""
    a, q, s = (np.asarray(x) for x in (a, q, s))
    r = a @ s + s @ a.T + q
    return np.abs(r).max() / (2 * np.abs(a).max() * np.abs(s).max() + np.abs(q).max())


def _dense_cases():
    rng = np.random.default_rng(7)
    cases = [(f"random n={n} seed {k}", _stable(rng, n)) for n in (1, 2, 5, 12) for k in range(2)]
    b = _stable(rng, 3)
    # Identical diagonal blocks: every eigenvalue twice (non-defective).
    cases.append(("block diagonal, identical blocks",
                  np.block([[b, np.zeros((3, 3))], [np.zeros((3, 3)), b]])))
    # Non-normal: distinct eigenvalues, strong upper-triangular coupling (eigenvector
    # matrix condition number ~1e4); then rotated so that it is not triangular.
    t = np.diag(-np.linspace(0.5, 1.5, 6)) + 3.0 * np.triu(rng.normal(size=(6, 6)), 1)
    o, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    cases.append(("non-normal", o @ t @ o.T))
    return cases


DENSE = _dense_cases()


@pytest.mark.parametrize("method", ["eig", "doubling"])
@pytest.mark.parametrize("name,a", DENSE, ids=[c[0] for c in DENSE])
def test_lyapunov_against_scipy(name, a, method):
    rng = np.random.default_rng(a.shape[0])
    q = _spd(rng, a.shape[0])
    solve = _lyapunov if method == "eig" else _doubling
    s = np.asarray(solve(jnp.asarray(a), jnp.asarray(q)))
    want = _scipy(a, q)
    np.testing.assert_allclose(s, want, rtol=0, atol=1e-10 * np.abs(want).max())
    assert _relative_residual(a, q, s) < 1e-10
    np.testing.assert_allclose(s, s.T, rtol=0, atol=1e-12 * np.abs(want).max())


def test_lyapunov_of_a_non_symmetric_q_against_scipy():
    # The docstring allows any real Q (then S is not symmetric).
    rng = np.random.default_rng(3)
    a, q = _stable(rng, 5), rng.normal(size=(5, 5))
    s = np.asarray(_lyapunov(jnp.asarray(a), jnp.asarray(q)))
    want = _scipy(a, q)
    np.testing.assert_allclose(s, want, rtol=0, atol=1e-10 * np.abs(want).max())


def test_two_by_two_closed_forms():
    # Diagonal A: S_ij = -Q_ij / (a_i + a_j).
    a1, a2 = -0.3, -1.7
    q = np.array([[2.0, 0.4], [0.4, 0.9]])
    s = np.asarray(_lyapunov(jnp.diag(jnp.array([a1, a2])), jnp.asarray(q)))
    want = -q / np.add.outer([a1, a2], [a1, a2])
    np.testing.assert_allclose(s, want, rtol=1e-13)
    # Lower triangular A = [[a, 0], [c, b]] driven through the first state only,
    # Q = diag(q, 0): S11 = -q / 2a, S21 = -c S11 / (a + b), S22 = -c S21 / b.
    a, b, c, q0 = -0.5, -2.0, 1.3, 0.7
    s = np.asarray(_lyapunov(jnp.array([[a, 0.0], [c, b]]), jnp.diag(jnp.array([q0, 0.0]))))
    s11 = -q0 / (2 * a)
    s21 = -c * s11 / (a + b)
    np.testing.assert_allclose(s, [[s11, s21], [s21, -c * s21 / b]], rtol=1e-13)


# Defective matrices (a repeated eigenvalue with fewer eigenvectors than its multiplicity)
# have no eigendecomposition: method="eig" must refuse them (its residual check) instead of
# returning a wrong S, and method="doubling" must solve them. Such matrices are not exotic:
# a block-triangular matrix with identical diagonal blocks (a feed-forward chain of
# identical nodes) is one.


def test_two_by_two_jordan_block_closed_form():
    # The triangular case above with a = b: a Jordan block. The closed form still holds.
    a, c, q0 = -0.5, 1.3, 0.7
    args = (jnp.array([[a, 0.0], [c, a]]), jnp.diag(jnp.array([q0, 0.0])))
    with pytest.raises(eqx.EquinoxRuntimeError, match="method='doubling'"):
        _lyapunov(*args).block_until_ready()
    s = np.asarray(_doubling(*args))
    s11 = -q0 / (2 * a)
    s21 = -c * s11 / (2 * a)
    np.testing.assert_allclose(s, [[s11, s21], [s21, -c * s21 / a]], rtol=1e-10)


def test_block_triangular_with_identical_diagonal_blocks_against_scipy():
    rng = np.random.default_rng(11)
    b, c = _stable(rng, 3), rng.normal(size=(3, 3))
    a = np.block([[b, np.zeros((3, 3))], [c, b]])  # each eigenvalue of b twice, defective
    q = _spd(rng, 6)
    with pytest.raises(eqx.EquinoxRuntimeError):
        _lyapunov(jnp.asarray(a), jnp.asarray(q)).block_until_ready()
    s = np.asarray(_doubling(jnp.asarray(a), jnp.asarray(q)))
    want = _scipy(a, q)
    np.testing.assert_allclose(s, want, rtol=0, atol=1e-10 * np.abs(want).max())


def _assemble(a_n, k, h_blocks, q_n):
    """The block lower-triangular A = [[A_n, 0], [K, blockdiag(H)]] and Q = [[Q_n, 0],
    [0, 0]] as dense matrices (jnp: differentiable)."""
    n, m = a_n.shape[0], k.shape[0]
    h = jax.scipy.linalg.block_diag(*h_blocks)
    a = jnp.block([[a_n, jnp.zeros((n, m), a_n.dtype)], [k, h]])
    q = jnp.zeros((n + m, n + m), q_n.dtype).at[:n, :n].set(q_n)
    return a, q


def _block_problem(seed: int, identical: bool, n: int = 4, blocks: int = 2, b: int = 4):
    rng = np.random.default_rng(seed)
    a_n = _stable(rng, n)
    if identical:  # the hemodynamic blocks of regions at the same drive
        h_blocks = np.repeat(_stable(rng, b, margin=0.2)[None], blocks, axis=0)
    else:
        h_blocks = np.stack([_stable(rng, b, margin=0.2) for _ in range(blocks)])
    k = rng.normal(size=(blocks * b, n))
    return tuple(jnp.asarray(x) for x in (a_n, k, h_blocks, _spd(rng, n)))


@pytest.mark.parametrize("method", ["eig", "doubling"])
@pytest.mark.parametrize("identical", [True, False], ids=["identical blocks", "distinct blocks"])
@pytest.mark.parametrize("seed", [0, 1])
def test_block_lyapunov_against_scipy(identical, seed, method):
    a_n, k, h_blocks, q_n = _block_problem(seed, identical)
    out = (_block_lyapunov if method == "eig" else _block_doubling)(a_n, k, h_blocks, q_n)
    assert isinstance(out, nd.BlockCovariance)
    a, q = _assemble(a_n, k, h_blocks, q_n)
    want = _scipy(a, q)
    n = a_n.shape[0]
    scale = np.abs(want).max()
    np.testing.assert_allclose(out.nn, want[:n, :n], rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(out.hn, want[n:, :n], rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(out.hh, want[n:, n:], rtol=0, atol=1e-10 * scale)
    s = np.block([[np.asarray(out.nn), np.asarray(out.hn).T], [np.asarray(out.hn), out.hh]])
    assert _relative_residual(a, q, s) < 1e-10


def _directions(rng, *arrays):
    return tuple(jnp.asarray(rng.normal(size=x.shape)) for x in arrays)


def _central(f, args, dirs, h: float = 1e-5) -> float:
    plus = [x + h * d for x, d in zip(args, dirs)]
    minus = [x - h * d for x, d in zip(args, dirs)]
    return (float(f(*plus)) - float(f(*minus))) / (2 * h)


def _inner(grads, dirs) -> float:
    return sum(float(jnp.sum(g * d)) for g, d in zip(grads, dirs))


# A random linear functional <W, S> of the solution, by the library and by the Kronecker
# reference; compiled once per shape (the weights are arguments, not constants).
def _dense_value(a, q, w):
    return jnp.sum(w * nd.lyapunov(a, q))


def _dense_reference(a, q, w):
    return jnp.sum(w * _kron_lyapunov(a, q))


_dense_grad = jax.jit(jax.grad(_dense_value, argnums=(0, 1)))
_dense_reference_grad = jax.jit(jax.grad(_dense_reference, argnums=(0, 1)))
_dense_value = jax.jit(_dense_value)


@pytest.mark.parametrize("n", [1, 3, 7])
def test_lyapunov_gradients(n):
    # W not symmetric, Q symmetric.
    rng = np.random.default_rng(20 + n)
    a, q = jnp.asarray(_stable(rng, n)), jnp.asarray(_spd(rng, n))
    w = jnp.asarray(rng.normal(size=(n, n)))
    got = _dense_grad(a, q, w)
    want = _dense_reference_grad(a, q, w)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-10 * np.abs(r).max())
    for _ in range(3):
        dirs = _directions(rng, a, q)
        value = lambda a, q: _dense_value(a, q, w)  # noqa: E731
        np.testing.assert_allclose(_inner(got, dirs), _central(value, (a, q), dirs),
                                   rtol=1e-6)


def test_lyapunov_gradients_for_a_non_symmetric_q():
    # The docstring allows any real Q; S is then not symmetric, and A's cotangent is
    # L S^T + L^T S (not (L + L^T) S).
    rng = np.random.default_rng(5)
    a, q = jnp.asarray(_stable(rng, 3)), jnp.asarray(rng.normal(size=(3, 3)))
    w = jnp.asarray(rng.normal(size=(3, 3)))
    got, want = _dense_grad(a, q, w), _dense_reference_grad(a, q, w)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-10 * np.abs(r).max())


def test_lyapunov_forward_mode_and_second_derivatives():
    # Forward mode (jvp) against central differences of the value, and forward-over-reverse
    # Hessian-vector products against central differences of the gradient (and against
    # the Kronecker reference's), as nd.identifiability and nd.uncertainty take them.
    rng = np.random.default_rng(8)
    a, q = jnp.asarray(_stable(rng, 3)), jnp.asarray(_spd(rng, 3))
    w = jnp.asarray(rng.normal(size=(3, 3)))
    dirs = _directions(rng, a, q)
    value = lambda a, q: _dense_value(a, q, w)  # noqa: E731
    tangent = jax.jit(lambda a, q, da, dq: jax.jvp(
        lambda a, q: nd.lyapunov(a, q), (a, q), (da, dq))[1])(a, q, *dirs)
    np.testing.assert_allclose(float(jnp.sum(w * tangent)), _central(value, (a, q), dirs),
                               rtol=1e-6)

    def hvp(grad):
        return jax.jit(lambda a, q, da, dq: jax.jvp(
            lambda a, q: grad(a, q, w), (a, q), (da, dq))[1])(a, q, *dirs)

    got, want = hvp(_dense_grad), hvp(_dense_reference_grad)
    h = 1e-5
    plus = _dense_grad(a + h * dirs[0], q + h * dirs[1], w)
    minus = _dense_grad(a - h * dirs[0], q - h * dirs[1], w)
    for g, r, p, m in zip(got, want, plus, minus):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-10 * np.abs(r).max())
        np.testing.assert_allclose(g, (p - m) / (2 * h), rtol=0, atol=1e-6 * np.abs(r).max())


def _block_value(a_n, k, h_blocks, q_n, w):
    out = nd.block_lyapunov(a_n, k, h_blocks, q_n)
    return jnp.sum(w.nn * out.nn) + jnp.sum(w.hn * out.hn) + jnp.sum(w.hh * out.hh)


def _block_reference(a_n, k, h_blocks, q_n, w):
    n = a_n.shape[0]
    s = _kron_lyapunov(*_assemble(a_n, k, h_blocks, q_n))
    return jnp.sum(w.nn * s[:n, :n]) + jnp.sum(w.hn * s[n:, :n]) + jnp.sum(w.hh * s[n:, n:])


_block_grad = jax.jit(jax.grad(_block_value, argnums=(0, 1, 2, 3)))
_block_jvp = jax.jit(lambda args, dirs, w: jax.jvp(lambda *x: _block_value(*x, w), args, dirs)[1])
_block_reference_grad = jax.jit(jax.grad(_block_reference, argnums=(0, 1, 2, 3)))
_block_value = jax.jit(_block_value)


@pytest.mark.parametrize("identical", [True, False], ids=["identical blocks", "distinct blocks"])
def test_block_lyapunov_gradients(identical):
    # n = 4 neural states and two 4x4 blocks: a 12x12 system, 144 unknowns for the
    # Kronecker reference. A functional of all three blocks, none of them symmetric.
    args = _block_problem(3, identical)
    n, m = args[0].shape[0], args[1].shape[0]
    rng = np.random.default_rng(4)
    w = nd.BlockCovariance(*(jnp.asarray(rng.normal(size=s))
                             for s in ((n, n), (m, n), (m, m))))
    got = _block_grad(*args, w)
    want = list(_block_reference_grad(*args, w))
    # The block solve assumes a symmetric Q_n (a covariance): compare Q_n's cotangents
    # along symmetric directions only, i.e. their symmetric parts.
    got = list(got)
    got[3], want[3] = (0.5 * (x + x.T) for x in (got[3], want[3]))
    for name, g, r in zip(("A_n", "K", "H_blocks", "Q_n"), got, want):
        assert g.shape == r.shape, name
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-10 * np.abs(r).max(), err_msg=name)
    value = lambda *x: _block_value(*x, w)  # noqa: E731
    for _ in range(3):
        dirs = list(_directions(rng, *args))
        dirs[3] = dirs[3] + dirs[3].T  # symmetric
        fd = _central(value, args, dirs)
        np.testing.assert_allclose(_inner(got, dirs), fd, rtol=1e-6)
        np.testing.assert_allclose(float(_block_jvp(args, tuple(dirs), w)), fd, rtol=1e-6)
