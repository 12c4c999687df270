"""A fit's coordinates: the selected leaves of a model as one flat vector ``u`` (each
bounded leaf through its unconstrained coordinate), and back."""

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .bounds import AbstractTransform
from .select import select


class Coordinates(eqx.Module):
    """The selected leaves of ``model`` as a flat vector: ``at(u)`` is the model with the
    leaves set from ``u``, ``to_values(u)`` the leaves' values, flat; ``u0`` the model's
    own; ``names`` one label per coordinate (``"coupling.G"``, ``"dynamics.I_o[3]"``).
    A module, so that compiled functions of it are reused for another model of the
    same structure and the same ``where``."""

    model: Any
    leaf_where: Callable[[Any], tuple[Any, ...]] = eqx.field(static=True)
    transforms: tuple[AbstractTransform, ...]
    shapes: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    dtypes: tuple[Any, ...] = eqx.field(static=True)
    names: tuple[str, ...] = eqx.field(static=True)

    @property
    def _sizes(self) -> list[int]:
        return [int(np.prod(s, dtype=int)) for s in self.shapes]

    def _leaves(self, u):
        parts = jnp.split(u, np.cumsum(self._sizes)[:-1].tolist())
        return tuple(t.forward(p.reshape(s)).astype(d)
                     for t, p, s, d in zip(self.transforms, parts, self.shapes, self.dtypes))

    def at(self, u):
        return eqx.tree_at(self.leaf_where, self.model, self._leaves(u))

    def to_values(self, u):
        return jnp.concatenate([jnp.ravel(x) for x in self._leaves(u)])

    def with_value(self, u, index: int, value) -> jax.Array:
        """``u`` with coordinate ``index`` moved so that its leaf's value is ``value``
        (through the leaf's transform; the other coordinates unchanged)."""
        sizes = self._sizes
        leaf = int(np.searchsorted(np.cumsum(sizes), index, side="right"))
        offset = index - int(np.sum(sizes[:leaf]))
        current = jnp.ravel(self._leaves(u)[leaf])
        moved = current.at[offset].set(jnp.asarray(value, current.dtype))
        inner = jnp.ravel(self.transforms[leaf].inverse(moved.reshape(self.shapes[leaf])))
        start = int(np.sum(sizes[:leaf]))
        return u.at[start + offset].set(inner[offset].astype(u.dtype))

    @property
    def u0(self) -> jax.Array:
        leaves = self.leaf_where(self.model)
        return jnp.concatenate([jnp.ravel(t.inverse(jnp.asarray(v, d)))
                                for t, v, d in zip(self.transforms, leaves, self.dtypes)])


def _labels(names, shapes) -> tuple[str, ...]:
    labels = []
    for name, shape in zip(names, shapes):
        if shape == ():
            labels.append(name)
        else:
            labels += [f"{name}[{','.join(map(str, i))}]" for i in np.ndindex(*shape)]
    return tuple(labels)


def coordinates(model, where: Callable[[Any], Any], bounds) -> Coordinates:
    """The fit's coordinates of the leaves ``where`` selects (``bounds`` as for
    ``nd.fit``); ``ValueError`` for a bad ``where`` or ``bounds``, as ``nd.fit`` gives."""
    sel = select(model, where, bounds)
    dtypes = tuple(jnp.result_type(v) for v in sel.values)
    return Coordinates(model, sel.leaf_where, sel.transforms, sel.shapes, dtypes,
                       _labels(sel.names, sel.shapes))
