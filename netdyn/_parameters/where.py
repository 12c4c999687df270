"""Which leaves of a model are trained: ``where`` and ``bounds`` validated against the
model (``ValueError`` naming them), for ``FittedParameters``."""

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .bounds import AbstractTransform, Identity


class _Marker:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class LeafWhere(eqx.Module):
    """``where`` flattened to a tuple of leaves, for ``eqx.tree_at``. A module (hashed by
    ``where``) rather than a closure, so that fits with the same ``where`` share the
    compiled step."""

    where: Callable[[Any], Any] = eqx.field(static=True)

    def __call__(self, model) -> tuple[Any, ...]:
        return tuple(jax.tree.leaves(self.where(model)))


def _is_float_leaf(value) -> bool:
    if isinstance(value, bool | int | complex):
        return False
    if isinstance(value, float):
        return True
    if isinstance(value, np.ndarray | jax.Array | np.generic):
        return jnp.issubdtype(value.dtype, jnp.floating)
    return False


def _is_bound(x) -> bool:
    return x is None or isinstance(x, AbstractTransform)


class Chosen(NamedTuple):
    """The leaves ``where`` selects, validated: their names (``"coupling.G"``), values,
    shapes, the structure of ``where(model)``, their transforms, and ``where`` as a
    ``LeafWhere``."""

    names: tuple[str, ...]
    values: tuple[Any, ...]
    shapes: tuple[tuple[int, ...], ...]
    structure: Any
    transforms: tuple[AbstractTransform, ...]
    leaf_where: LeafWhere


def choose(model, where: Callable[[Any], Any], bounds) -> Chosen:
    """Validate ``where`` and ``bounds`` against ``model`` (``ValueError`` naming them)."""
    if not callable(where):
        raise ValueError(f"where must be a function model -> leaf or leaves, got {where!r}.")
    path_leaves, treedef = jax.tree_util.tree_flatten_with_path(model)
    marked = jax.tree.unflatten(treedef, [_Marker(i) for i in range(len(path_leaves))])
    try:
        chosen = where(marked)
    except Exception as e:  # noqa: BLE001 - any failure of the user's function
        raise ValueError(f"where could not be applied to the model: {type(e).__name__}: {e}")
    chosen_leaves = jax.tree.leaves(chosen)
    if not chosen_leaves:
        raise ValueError(
            "where selects nothing to train (it returned no leaf of the model, e.g. None or "
            "an empty tuple); return a parameter such as `lambda n: n.coupling.G`."
        )
    indices = []
    for leaf in chosen_leaves:
        if not isinstance(leaf, _Marker):
            raise ValueError(
                f"where selected {leaf!r}, which is not a leaf of the model: a static field "
                "(eqx.field(static=True): structure, names, sizes) or a computed value "
                "cannot be trained."
            )
        indices.append(leaf.index)
    if len(set(indices)) != len(indices):
        raise ValueError("where selects the same leaf more than once.")
    names = tuple(jax.tree_util.keystr(path_leaves[i][0]).lstrip(".") for i in indices)
    values = tuple(path_leaves[i][1] for i in indices)
    for name, value in zip(names, values):
        if not _is_float_leaf(value):
            dtype = getattr(value, "dtype", type(value).__name__)
            raise ValueError(
                f"where selected {name} = {value!r} ({dtype}), which is not differentiable: "
                "only floating-point leaves can be trained (write 1.0 rather than 1, or "
                "pass a float array)."
            )
    shapes = tuple(tuple(np.shape(v)) for v in values)

    transforms = _transforms(chosen, names, values, bounds)
    return Chosen(names, values, shapes, jax.tree.structure(chosen), transforms,
                  LeafWhere(where))


def _transforms(chosen, names: Sequence[str], values, bounds) -> tuple[AbstractTransform, ...]:
    if bounds is None or isinstance(bounds, AbstractTransform):
        found = [bounds] * len(names)
    else:
        found, bdef = jax.tree.flatten(bounds, is_leaf=_is_bound)
        cdef = jax.tree.structure(chosen)
        if bdef != cdef:
            raise ValueError(
                "bounds must be a transform (applied to every trained leaf) or have the "
                f"structure of where(model), {cdef}, with a transform or None per leaf; got "
                f"{bdef}."
            )
        for b in found:
            if not _is_bound(b):
                raise ValueError(
                    f"bounds entries must be AbstractTransform (e.g. nd.Positive()) or None, "
                    f"got {b!r}."
                )
    transforms = tuple(Identity() if b is None else b for b in found)
    for t, name, value in zip(transforms, names, values):
        t.check(name, value)
    return transforms
