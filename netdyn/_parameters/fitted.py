"""The fitted parameters of a model: the leaves ``where`` selects with their bounds, built
once and used by the fit's loop, its checkpoints and every statistic of a fit."""

from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .bounds import AbstractTransform
from .where import LeafWhere, choose


def _labels(names, shapes) -> tuple[str, ...]:
    labels = []
    for name, shape in zip(names, shapes):
        if shape == ():
            labels.append(name)
        else:
            labels += [f"{name}[{','.join(map(str, i))}]" for i in np.ndindex(*shape)]
    return tuple(labels)


class FittedParameters(eqx.Module):
    r"""The leaves of ``model`` that ``where`` selects, each with its transform $x = T(u)$
    from ``bounds`` (``nd.Identity`` for an unbounded leaf), as ``nd.fit`` trains them.

    Built once, ``FittedParameters(model, where, bounds)``, which validates ``where`` and
    ``bounds`` against the model (``ValueError`` naming them, as ``nd.fit`` gives). Per
    leaf, in ``where``'s order: ``names`` (``"coupling.G"``), ``values`` (the model's
    own), ``shapes``, ``dtypes``, ``transforms``; ``forward``/``inverse`` between the
    unconstrained values ``u`` the optimizer updates and the physical values, and ``set``
    to put physical values in a model (the fit's loop and checkpoints work per leaf). As
    one flat vector (the statistics work on it): ``u0``, the model's own unconstrained
    coordinates; ``at(u)``, the model with the leaves set from ``u``; ``to_values(u)``;
    ``labels``, one per coordinate (``"coupling.G"``, ``"dynamics.I_o[3]"``).

    A module, hashed by ``where`` (``LeafWhere``), so that compiled functions of it are
    reused for another model of the same structure and the same ``where``.
    """

    model: Any
    leaf_where: LeafWhere = eqx.field(static=True)
    transforms: tuple[AbstractTransform, ...]
    names: tuple[str, ...] = eqx.field(static=True)
    shapes: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    dtypes: tuple[Any, ...] = eqx.field(static=True)
    structure: Any = eqx.field(static=True)
    labels: tuple[str, ...] = eqx.field(static=True)

    def __init__(self, model, where: Callable[[Any], Any], bounds):
        chosen = choose(model, where, bounds)
        self.model = model
        self.leaf_where = chosen.leaf_where
        self.transforms = chosen.transforms
        self.names = chosen.names
        self.shapes = chosen.shapes
        self.dtypes = tuple(jnp.result_type(v) for v in chosen.values)
        self.structure = chosen.structure
        self.labels = _labels(chosen.names, chosen.shapes)

    # Per leaf.

    @property
    def values(self) -> tuple[Any, ...]:
        """The selected leaves of ``model`` as they are there (Python floats included)."""
        return self.leaf_where(self.model)

    def forward(self, us: Sequence[Any]) -> tuple[Any, ...]:
        """The physical values $T(u)$ of the unconstrained values ``us``, one per leaf."""
        return tuple(t.forward(u) for t, u in zip(self.transforms, us))

    def inverse(self, xs: Sequence[Any]) -> list:
        """The unconstrained values $T^{-1}(x)$ of the physical values ``xs``, one per leaf."""
        return [t.inverse(x) for t, x in zip(self.transforms, xs)]

    def set(self, model, xs: Sequence[Any]):
        """``model`` (of this structure) with the selected leaves replaced by ``xs``."""
        return eqx.tree_at(self.leaf_where, model, tuple(xs))

    # As one flat vector of unconstrained coordinates.

    @property
    def _sizes(self) -> list[int]:
        return [int(np.prod(s, dtype=int)) for s in self.shapes]

    def _leaves(self, u):
        return tuple(t.forward(p).astype(d)
                     for t, p, d in zip(self.transforms, self.split(u), self.dtypes))

    def split(self, u) -> tuple[Any, ...]:
        """The flat vector ``u`` cut into one array per leaf, shaped as the leaf."""
        parts = jnp.split(u, np.cumsum(self._sizes)[:-1].tolist())
        return tuple(p.reshape(s) for p, s in zip(parts, self.shapes))

    def at(self, u):
        """``model`` with the leaves set from the unconstrained coordinates ``u``."""
        return eqx.tree_at(self.leaf_where, self.model, self._leaves(u))

    def to_values(self, u):
        """The leaves' physical values at ``u``, flat."""
        return jnp.concatenate([jnp.ravel(x) for x in self._leaves(u)])

    def range_of(self, index: int) -> tuple[float, float]:
        """The open interval of physical values of coordinate ``index`` (its leaf's
        transform's ``range``)."""
        leaf = int(np.searchsorted(np.cumsum(self._sizes), index, side="right"))
        return self.transforms[leaf].range()

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
        """The model's own values in the unconstrained coordinates, flat."""
        leaves = self.leaf_where(self.model)
        return jnp.concatenate([jnp.ravel(t.inverse(jnp.asarray(v, d)))
                                for t, v, d in zip(self.transforms, leaves, self.dtypes)])
