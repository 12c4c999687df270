"""The compiler tricks of ``netdyn/_xla_tricks.py`` against their plain formulations.

Each trick must compute its plain formulation's value (bit for bit where it is an
identity or a random draw, to rounding where it is a sum in another order) and
derivative, in float64 and in float32, and be taken only on the platforms it is meant
for: the CPU program compiled here holds the trick, a program lowered for CUDA
(``jax.export``, no GPU needed) does not.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from netdyn import _xla_tricks

DTYPES = [jnp.float64, jnp.float32]
EPS = {jnp.float64: 1e-15, jnp.float32: 1e-6}


def _x(shape, dtype, seed=0):
    return jnp.asarray(np.random.default_rng(seed).normal(size=shape), dtype)


def _compiled(f, *args) -> str:
    """The optimized HLO of ``f`` compiled for this (CPU) backend."""
    return jax.jit(f).lower(*args).compile().as_text()


def _lowered_for_cuda(f, *args) -> str:
    return jax.export.export(jax.jit(f), platforms=["cuda"])(*args).mlir_module()


def _vjp(f, x, ct):
    return jax.jit(lambda x, ct: jax.vjp(f, x)[1](ct)[0])(x, ct)


@pytest.mark.parametrize("dtype", DTYPES)
def test_materialise_is_the_identity(dtype):
    x, ct = _x((3, 7), dtype), _x((3, 7), dtype, seed=1)
    token = jnp.asarray(5, jnp.int32)
    f = lambda x: _xla_tricks.materialise(x, token)  # noqa: E731
    np.testing.assert_array_equal(jax.jit(f)(x), x)
    np.testing.assert_array_equal(_vjp(f, x, ct), ct)
    np.testing.assert_array_equal(jax.jit(lambda x, t: jax.jvp(f, (x,), (t,))[1])(x, ct), ct)
    # Under vmap (the batched time loop) and with a NaN in x: still the identity.
    xs = jnp.stack([x, x.at[0, 0].set(jnp.nan)])
    np.testing.assert_array_equal(jax.jit(jax.vmap(f))(xs), xs)


def test_materialise_is_a_conditional_on_cpu_only():
    x = _x((3, 7), jnp.float64)

    def f(x, token):
        return _xla_tricks.materialise(jnp.sin(x), token)

    assert "conditional" in _compiled(f, x, jnp.asarray(0, jnp.int32))
    lowered = _lowered_for_cuda(f, x, jnp.asarray(0, jnp.int32))
    assert "0x7FF8" not in lowered and "compare  GE" not in lowered  # no NaN branch


@pytest.mark.parametrize("dtype", DTYPES)
def test_materialise_linear_is_the_identity(dtype):
    x, ct = _x((2, 3, 6), dtype), _x((2, 3, 6), dtype, seed=1)
    f = _xla_tricks.materialise_linear
    np.testing.assert_array_equal(jax.jit(f)(x), x)
    np.testing.assert_array_equal(_vjp(f, x, ct), ct)
    transpose = jax.linear_transpose(f, x)
    np.testing.assert_array_equal(jax.jit(lambda ct: transpose(ct)[0])(ct), ct)


def test_materialise_linear_is_a_dot_on_cpu_only():
    x = _x((3, 7), jnp.float64)
    assert " dot(" in _compiled(_xla_tricks.materialise_linear, x)
    assert "dot_general" not in _lowered_for_cuda(_xla_tricks.materialise_linear, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (4, 84), (2, 3, 1), (2, 0)])
def test_row_sums_is_the_sum(dtype, shape):
    x = _x(shape, dtype)
    got = jax.jit(_xla_tricks.row_sums)(x)
    assert got.shape == shape[:-1] and got.dtype == dtype
    bound = EPS[dtype] * shape[-1] * np.sum(np.abs(np.asarray(x, np.float64)), axis=-1)
    assert np.all(np.abs(np.asarray(got, np.float64) - np.sum(np.asarray(x, np.float64), -1))
                  <= bound)
    ct = _x(shape[:-1], dtype, seed=1)
    np.testing.assert_array_equal(_vjp(_xla_tricks.row_sums, x, ct),
                                  jnp.broadcast_to(ct[..., None], shape))


def test_row_sums_is_a_dot_on_cpu_only():
    x = _x((4, 84), jnp.float64)
    compiled = _compiled(_xla_tricks.row_sums, x)
    assert " dot(" in compiled and " reduce(" not in compiled
    lowered = _lowered_for_cuda(_xla_tricks.row_sums, x)
    assert "dot_general" not in lowered and "stablehlo.reduce" in lowered


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 3, 8, 12, 80, 84])
def test_pairwise_sum_is_the_sum(dtype, n):
    x = _x((2, 5, n, 3), dtype)
    f = lambda x: _xla_tricks.pairwise_sum(x, axis=2)  # noqa: E731
    got = jax.jit(f)(x)
    assert got.shape == (2, 5, 3) and got.dtype == dtype
    x64 = np.asarray(x, np.float64)
    bound = EPS[dtype] * max(n, 1) * np.sum(np.abs(x64), axis=2)
    assert np.all(np.abs(np.asarray(got, np.float64) - np.sum(x64, axis=2)) <= bound)
    ct = _x((2, 5, 3), dtype, seed=1)
    np.testing.assert_array_equal(_vjp(f, x, ct), jnp.broadcast_to(ct[:, :, None], x.shape))


def test_pairwise_sum_is_elementwise_on_cpu_only():
    x = _x((5, 80, 16), jnp.float64)
    f = lambda x: _xla_tricks.pairwise_sum(x, axis=1)  # noqa: E731
    assert " reduce(" not in _compiled(f, x)
    assert "stablehlo.reduce" in _lowered_for_cuda(f, x)


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("impl", ["threefry2x32", "rbg", None])
def test_fold_in_normal_is_jax_random_bit_for_bit(impl, dtype, partitionable):
    """For typed keys of two implementations and the raw key of the default one (``None``),
    under both settings of ``jax_threefry_partitionable``, also under ``vmap`` over keys."""
    keys = [jax.random.PRNGKey(s) if impl is None else jax.random.key(s, impl=impl)
            for s in (7, 8)]
    steps = jnp.asarray([0, 1, 2**31 - 1], jnp.int32)

    def plain(key, step):
        return jax.random.normal(jax.random.fold_in(key, step), (3, 84), dtype)

    def trick(key, step):
        return _xla_tricks.fold_in_normal(key, step, (3, 84), dtype)

    def both(f, g):
        return jax.jit(lambda *a: (f(*a), g(*a)))

    # Each pair compiled once, as one program, for every key and step (op by op, the plain
    # draws cost more than compiling the trick).
    with jax.threefry_partitionable(partitionable):
        scalar = both(trick, plain)
        for key in keys:
            for step in steps:
                np.testing.assert_array_equal(*scalar(key, step))
        batch = jnp.stack(keys)
        vmapped = both(jax.vmap(trick, (0, None)), jax.vmap(plain, (0, None)))
        np.testing.assert_array_equal(*vmapped(batch, steps[1]))


def test_fold_in_normal_is_written_out_on_cpu_only():
    key, step = jax.random.key(0), jnp.asarray(3, jnp.int32)

    def f(key, step):
        return _xla_tricks.fold_in_normal(key, step, (2, 84), jnp.float64)

    assert "while" not in _compiled(f, key, step)  # JAX's Threefry on CPU: rolled loops
    assert "@threefry2x32" in _lowered_for_cuda(f, key, step)  # JAX's own lowering there


@pytest.mark.parametrize("dtype", DTYPES)
def test_keep_apart_is_the_identity_on_every_backend(dtype):
    x, ct = _x((3, 4), dtype), _x((3, 4), dtype, seed=1)
    carry = {"y": x, "step": jnp.asarray(3, jnp.int32)}
    out = jax.jit(_xla_tricks.keep_apart)(carry)
    np.testing.assert_array_equal(out["y"], x)
    assert out["step"] == 3
    np.testing.assert_array_equal(_vjp(_xla_tricks.keep_apart, x, ct), ct)
    assert "optimization_barrier" in _lowered_for_cuda(_xla_tricks.keep_apart, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_divide_is_correctly_rounded(dtype):
    rng = np.random.default_rng(0)
    x = np.asarray(rng.uniform(0.0, 250.0, 20_000), dtype)
    y = 0.05
    want = x / np.asarray(y, dtype)  # NumPy: one correctly rounded division per element
    np.testing.assert_array_equal(jax.jit(lambda x: _xla_tricks.divide(x, y))(x), want)
    np.testing.assert_array_equal(
        jax.jit(jax.vmap(lambda x: _xla_tricks.divide(x, y)))(x.reshape(100, 200)),
        want.reshape(100, 200),
    )
    # The plain quotient is rewritten as x * (1 / y): some elements differ by an ulp.
    assert not np.array_equal(jax.jit(lambda x: x / y)(x), want)


def test_divide_is_not_the_product_with_the_reciprocal():
    # 228.875 mm at 5 mm/ms in steps of 0.05 ms: 915.4999... by division, 915.5 by the
    # product with 1 / 0.05, which would round to the other whole step.
    d = jnp.asarray([228.875 / 5.0])
    got = float(jax.jit(lambda d: _xla_tricks.divide(d, 0.05))(d)[0])
    assert got == 228.875 / 5.0 / 0.05 < 915.5


@pytest.mark.parametrize("dtype", DTYPES)
def test_divide_derivatives(dtype):
    x, y = _x((5,), dtype) + 2, jnp.asarray(0.3, dtype)
    ct = _x((5,), dtype, seed=1)
    got = jax.jit(lambda x, y, ct: jax.vjp(_xla_tricks.divide, x, y)[1](ct))(x, y, ct)
    want = jax.jit(lambda x, y, ct: jax.vjp(jnp.divide, x, y)[1](ct))(x, y, ct)
    np.testing.assert_allclose(got[0], want[0], rtol=EPS[dtype])
    np.testing.assert_allclose(got[1], want[1], rtol=10 * EPS[dtype])
