"""Abstract base of noise."""

import abc
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._custom_types import Key, Param, State
from .._materialise import materialised
from .._names import as_names

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
            x2 = (
                lax.shift_left(x2, np.uint32(r)) | lax.shift_right_logical(x2, np.uint32(32 - r))
            ) ^ x1
        x1 = x1 + keys[(block + 1) % 3]
        x2 = x2 + keys[(block + 2) % 3] + np.uint32(block + 1)
    return x1, x2


def _threefry_normal(data, step, shape: tuple[int, ...], dtype):
    """``jax.random.normal(jax.random.fold_in(key, step), shape, dtype)``, bit for bit.

    JAX lowers Threefry on CPU to a rolled loop (two nested while loops per draw, each a
    handful of tiny kernels), which made the noise draw the most expensive part of a
    time step. Written out, the hash fuses with the Gaussian transform into one kernel.
    The layout (fold-in counter ``(0, step)``, counters ``(0, n)`` for element ``n``,
    mantissa-fill uniform on ``(-1, 1)``, ``sqrt(2) erfinv(u)``) is that of
    ``jax.random`` with ``jax_threefry_partitionable`` (the default); should JAX change
    it, draws stay a deterministic function of ``(key, step)`` but no longer equal
    ``jax.random.normal``'s.
    """
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


def standard_normal(key: Key, step, shape: tuple[int, ...], dtype):
    """Counter-based standard normal draw of step ``step``: a function of ``(key, step)``.

    Equal to ``jax.random.normal(jax.random.fold_in(key, step), shape, dtype)`` for every
    key implementation; Threefry keys (JAX's default) take a faster, equivalent path.
    """
    dtype = np.dtype(dtype)
    data = jax.random.key_data(key)
    if (
        str(jax.random.key_impl(key)) == "threefry2x32"
        and jax.config.jax_threefry_partitionable
        and data.shape == (2,)
        and dtype.itemsize in (4, 8)
    ):
        z = _threefry_normal(data, step, shape, dtype)
    else:
        z = jax.random.normal(jax.random.fold_in(key, step), shape, dtype)
    # Computed once: XLA:CPU would otherwise copy the ~350 operations per element of the
    # draw into each of its consumers (the solver stages, the clipping, the history push).
    return materialised(z, step)


def to_names(apply_to: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...] | None:
    """``apply_to`` as a tuple of state variable names; a string is one name."""
    return as_names(apply_to, "noise apply_to")


class AbstractNoise(eqx.Module):
    r"""Noise of a stochastic differential equation $dy = f\,dt + g(y)\, dW$.

    A noise gives the diffusion $g(y)$ on the state variables named in ``apply_to``
    (all of them when ``None``); other rows get no noise. The Wiener increments are
    counter-based: step ``i`` draws from ``jax.random.fold_in(key, i)``, so no
    ``[steps, ...]`` array is allocated, and the trajectory does not depend on how the
    time loop is split into blocks (remat strategies, continuation runs).
    """

    sigma: eqx.AbstractVar[Param]
    apply_to: eqx.AbstractVar[tuple[str, ...] | None]

    @abc.abstractmethod
    def diffusion(self, y: State) -> State:
        """``g(y)`` on the noisy rows, shape ``[len(rows), nodes]``; ``y`` holds those rows."""

    def rows(self, state_names: tuple[str, ...]) -> tuple[int, ...]:
        """Rows of the state that receive noise (``sigma``'s shape checked against them)."""
        if self.apply_to is None:
            rows = tuple(range(len(state_names)))
        else:
            unknown = [n for n in self.apply_to if n not in state_names]
            if unknown:
                raise ValueError(
                    f"{type(self).__name__}.apply_to names unknown state variable(s) "
                    f"{unknown}; state variables are {state_names}."
                )
            rows = tuple(state_names.index(n) for n in self.apply_to)
        self._check_sigma(len(rows), tuple(state_names[r] for r in rows), None)
        return rows

    def _check_sigma(self, k: int, names: tuple[str, ...] | None, n_nodes: int | None) -> None:
        """Trace-time check that ``sigma`` is a scalar, ``[k]`` (one value per noisy state
        variable) or ``[k, nodes]``; a size-1 axis broadcasts."""
        shape = jnp.shape(self.sigma)
        fits = len(shape) <= 2 and (len(shape) == 0 or shape[0] in (1, k))
        if fits and len(shape) == 2 and n_nodes is not None:
            fits = shape[1] in (1, n_nodes)
        if not fits:
            nodes = "nodes" if n_nodes is None else f"nodes = {n_nodes}"
            which = "" if names is None else f" {names}"
            raise ValueError(
                f"{type(self).__name__}.sigma has shape {shape}; it must be a scalar, "
                f"[{k}] (one value per noisy state variable{which}) or [{k}, {nodes}]."
            )

    def increment(self, key: Key, step, y: State, dt: float, rows: tuple[int, ...]) -> State:
        """The noise term ``g(y) * dW`` of step ``step``, with ``dW ~ N(0, dt)``."""
        # ``rows`` checked the leading axis against the variables' names; this, the nodes.
        self._check_sigma(len(rows), None, y.shape[1])
        idx = jnp.asarray(rows)
        z = standard_normal(key, step, (len(rows), y.shape[1]), y.dtype)
        dw = jnp.sqrt(jnp.asarray(dt, y.dtype)) * z
        g = self.diffusion(y[idx])
        if len(rows) == y.shape[0]:
            return g * dw
        return jnp.zeros_like(y).at[idx].set(g * dw)
