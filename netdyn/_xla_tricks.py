"""Formulations chosen for how XLA compiles them: every such trick of netdyn, one a function.

Each function computes a plain value (an identity, a sum, a quotient, a random draw)
in a form that steers XLA's compiler. Where a trick helps one backend only, the
function takes it when the computation is lowered for that platform
(``jax.lax.platform_dependent``: the platform compiled for, not the default one at trace
time) and computes the plain formulation elsewhere. The rest are needed on every
backend, for the values they keep. ``tests/test_xla_tricks.py`` pins each against its
plain formulation, in value and derivative; the measurements are in
``benchmarks/xla_tricks.md`` (``scripts/studies/bench_xla_tricks.py`` switches each
one off).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def _on_cpu(trick, plain, *args):
    """``trick(*args)`` when lowered for CPU, ``plain(*args)`` on every other platform."""
    return lax.platform_dependent(*args, cpu=trick, default=plain)


def _through_conditional(x, token):
    return lax.cond(token >= 0, lambda v: v, lambda v: jnp.full_like(v, jnp.nan), x)


def materialise(x, token):
    """``x``: the identity, in value and derivative.

    Why: XLA:CPU fuses an elementwise producer into every consumer that reads each of
    its elements many times (a broadcast over a monitor's rows, a gather over edges) and
    recomputes the producer per read; a conditional it cannot fold computes ``x`` into
    memory once. ``token`` is an integer scalar that is non-negative at run time (a step
    counter, a node index): the conditional's NaN branch never runs.

    CPU only: on GPU a conditional costs a round trip to the host.
    ``lax.optimization_barrier`` does not do this (XLA:CPU removes barriers before
    fusion). Measured in ``benchmarks/xla_tricks.md``.
    """
    return _on_cpu(_through_conditional, lambda v, _: v, x, token)


def _times_identity(x):
    n = x.shape[-1]
    return (x.reshape(math.prod(x.shape[:-1]), n) @ np.eye(n, dtype=x.dtype)).reshape(x.shape)


def materialise_linear(x):
    """``x``: the identity, linear in ``x`` (for tangents: inside a ``custom_jvp`` rule).

    Why: on CPU it is computed as ``x @ I``, which reverse mode transposes into
    ``cotangent @ I``: a dot, whose output XLA:CPU computes once into memory instead of
    fusing the chain that produced the cotangent (a solver stage's derivatives) into each
    of its many readers. ``materialise`` cannot stand here: its NaN branch is not linear.
    Exact for finite ``x`` (a ``-0.0`` may come out as ``+0.0``); a non-finite element
    makes its whole row NaN.

    CPU only (elsewhere ``x`` itself: no dot is paid, and a float32 dot on GPU may round
    to TF32). Measured in ``benchmarks/xla_tricks.md``.
    """
    return _on_cpu(_times_identity, lambda v: v, x)


def _dot_with_ones(x):
    ones = np.ones(x.shape[-1:], x.dtype)  # a literal: no broadcast kernel per step
    return (x.reshape(math.prod(x.shape[:-1]), x.shape[-1]) @ ones).reshape(x.shape[:-1])


def row_sums(x):
    """``jnp.sum(x, axis=-1)``.

    Why: on CPU it is computed as the matrix-vector product ``x @ ones``. XLA:CPU hands
    reductions to a library kernel whose cost per call exceeds the whole sum at a
    network's size, and a dot's output is computed once instead of being recomputed in
    every consumer. The rounding is that of the dot.

    CPU only (elsewhere ``jnp.sum``). Measured in ``benchmarks/xla_tricks.md``.
    """
    return _on_cpu(_dot_with_ones, lambda v: jnp.sum(v, axis=-1), x)


def _halving_adds(x, axis: int):
    n = x.shape[axis]
    if n == 0:
        return jnp.zeros(x.shape[:axis] + x.shape[axis + 1 :], x.dtype)
    # Split the axis into [n / c, c], c the largest power of two dividing n; halve over c
    # (no odd remainders), then add the n / c partial sums in order.
    c = n & -n
    x = x.reshape(x.shape[:axis] + (n // c, c) + x.shape[axis + 1 :])
    while x.shape[axis + 1] > 1:
        half = x.shape[axis + 1] // 2
        x = (lax.slice_in_dim(x, 0, half, axis=axis + 1)
             + lax.slice_in_dim(x, half, 2 * half, axis=axis + 1))
    x = jnp.squeeze(x, axis + 1)
    total = lax.index_in_dim(x, 0, axis, keepdims=False)
    for j in range(1, n // c):
        total = total + lax.index_in_dim(x, j, axis, keepdims=False)
    return total


def pairwise_sum(x, axis: int):
    """``jnp.sum(x, axis)`` over an axis of static length (of an array with more axes
    after it: the batch-last time loop's edge sums).

    Why: on CPU it is computed as halving adds of slices, elementwise operations that XLA
    fuses with the product before them; a reduction or a batched dot over a middle axis
    goes to a library kernel on CPU. The rounding is that of the pairwise order.

    CPU only (elsewhere ``jnp.sum``). Measured in ``benchmarks/xla_tricks.md``.
    """
    return _on_cpu(lambda v: _halving_adds(v, axis), lambda v: jnp.sum(v, axis=axis), x)


# Rotation constants of Threefry-2x32 (Salmon, Moraes, Dror, Shaw 2011, table 4).
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def _threefry2x32(k1, k2, x1, x2):
    """Threefry-2x32, 20 rounds, written out (the block cipher of ``jax.random``).

    **Reference**: Salmon, Moraes, Dror, Shaw (2011), *Parallel random numbers: as easy
    as 1, 2, 3*, SC '11.
    """
    keys = (k1, k2, k1 ^ k2 ^ _PARITY)
    x1 = x1 + keys[0]
    x2 = x2 + keys[1]
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            x1 = x1 + x2
            rotated = lax.shift_left(x2, np.uint32(r)) | lax.shift_right_logical(
                x2, np.uint32(32 - r)
            )
            x2 = rotated ^ x1
        x1 = x1 + keys[(block + 1) % 3]
        x2 = x2 + keys[(block + 2) % 3] + np.uint32(block + 1)
    return x1, x2


def _written_out_normal(key, step, shape: tuple[int, ...], dtype):
    # The layout of ``jax.random`` with ``jax_threefry_partitionable``: fold-in counter
    # ``(0, step)``, counter ``(0, n)`` for element ``n``, mantissa-fill uniform on
    # ``(-1, 1)``, ``sqrt(2) erfinv(u)``.
    data = jax.random.key_data(key)
    step = jnp.asarray(step).astype(jnp.uint32)
    k1, k2 = _threefry2x32(data[0], data[1], jnp.zeros_like(step), step)
    counter = lax.iota(np.uint32, math.prod(shape)).reshape(shape)
    b1, b2 = _threefry2x32(k1, k2, jnp.zeros_like(counter), counter)
    finfo = jnp.finfo(dtype)
    if finfo.bits == 64:
        uint = np.uint64
        bits = lax.shift_left(b1.astype(uint), uint(32)) | b2.astype(uint)
    else:
        uint = np.uint32
        bits = b1 ^ b2
    one = np.array(1.0, dtype)
    mantissa = lax.shift_right_logical(bits, uint(finfo.bits - finfo.nmant))
    u = lax.bitcast_convert_type(mantissa | one.view(uint), dtype) - one  # [0, 1)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = lax.max(lo, u * (one - lo) + lo)
    return np.array(np.sqrt(2), dtype) * lax.erf_inv(u)


def fold_in_normal(key, step, shape: tuple[int, ...], dtype):
    """``jax.random.normal(jax.random.fold_in(key, step), shape, dtype)``, bit for bit.

    Why: JAX lowers Threefry on CPU to rolled loops (two nested while loops per draw,
    each iteration a few tiny kernels); written out, the 20 rounds of the fold-in and of
    the draw fuse with the Gaussian transform into one kernel.

    CPU only, and only for Threefry keys under ``jax_threefry_partitionable`` (JAX's
    default, whose layout it writes out) in float32 or float64: other key
    implementations, the other setting, other dtypes and other platforms draw with
    ``jax.random`` itself. Measured in ``benchmarks/xla_tricks.md``.
    """
    dtype = np.dtype(dtype)

    def plain(key, step):
        return jax.random.normal(jax.random.fold_in(key, step), shape, dtype)

    if not (
        jax.random.key_impl(key) == "threefry2x32"
        and jax.config.jax_threefry_partitionable
        and dtype in (np.float32, np.float64)
    ):
        return plain(key, step)
    return _on_cpu(lambda k, i: _written_out_normal(k, i, shape, dtype), plain, key, step)


def keep_apart(carry):
    """``carry``: the identity; XLA fuses nothing across it.

    Why: placed between the unrolled copies of the time step, so that each copy is fused,
    and rounded, as the rolled step is: an unrolled loop's results are then bit-identical
    to ``unroll=1``'s, as ``AbstractRemat`` promises (``lax.scan(unroll=...)`` lets XLA
    fuse consecutive steps, which changes the last bits: ``benchmarks/unroll.md``).

    Every backend: the promise holds on each. Its cost is measured in
    ``benchmarks/xla_tricks.md``.
    """
    return lax.optimization_barrier(carry)


def divide(x, y):
    """``x / y``, correctly rounded, for a finite array ``x`` and a scalar ``y``.

    Why: XLA rewrites a division by a constant or a broadcast scalar into a
    multiplication by its reciprocal, ``x * (1 / y)``, which is off by an ulp for about
    a third of all ``x``: enough to move a quotient just below a half (915.4999...) onto
    it (915.5), and its rounding to the other whole number. Dividing by an array of
    ``x``'s shape that XLA cannot see through (also under ``vmap``) keeps a true
    division. The derivative is that of ``x / y``.

    Every backend: the rewrite is XLA's, on all of them.
    """
    return x / lax.optimization_barrier(lax.stop_gradient(x) * 0 + y)
