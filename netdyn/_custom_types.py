"""Named array shapes used across netdyn (jaxtyping aliases).

The unions are ``TypeAliasType``s (PEP 695's ``type X = ...``, from ``typing_extensions``
while Python 3.11 is supported): ``help()`` and ``inspect.signature`` print their name
(``a: Param = 0.27``) instead of the expanded union of a few hundred characters, while
beartype and jaxtyping still check the value against the union (tests run with the import
hook). A ``TypeAliasType`` cannot be subscripted like ``Float[...]``'s array argument:
use jaxtyping's ``ArrayLike`` there, this module's ``ArrayLike`` in plain annotations.
"""

import numbers
from collections.abc import Sequence
from typing import TypeAlias

import jaxtyping
from jaxtyping import Array, Float, PRNGKeyArray
from typing_extensions import TypeAliasType

from ._parameterisation._base import AbstractNetworkParameterisation, AbstractParameterisation

State: TypeAlias = Float[Array, "states nodes"]
"""Dynamics state: one row per state variable, one column per node."""

CouplingInput: TypeAlias = Float[Array, "inputs nodes"]
"""Coupling input to the dynamics: one row per coupling input, one column per node."""

Matrix: TypeAlias = Float[Array, "nodes nodes"]
"""A node-by-node matrix, oriented ``[target, source]``."""

History: TypeAlias = Float[Array, "rows nodes k"]
"""Delay history buffer of the ``k`` coupled variables: time-major, oldest row first and
row ``-1`` the newest state, the variables on the trailing axis (``_simulate/_buffer.py``)."""

ArrayLike = TypeAliasType("ArrayLike", jaxtyping.ArrayLike)
"""Anything ``jnp.asarray`` takes: a JAX or NumPy array, a NumPy scalar or a Python number
(jaxtyping's ``ArrayLike``)."""

Scalar = TypeAliasType("Scalar", Float[jaxtyping.ArrayLike, ""])
"""A real scalar (Python float or 0-d array)."""

Param = TypeAliasType(
    "Param",
    Float[jaxtyping.ArrayLike, "..."] | Sequence[numbers.Real] | Sequence[Sequence[numbers.Real]]
    | AbstractParameterisation | AbstractNetworkParameterisation,
)
"""A model parameter: a scalar, an array broadcastable against ``[nodes]`` (or a list of
numbers, which ``Network`` turns into one), or a parameterisation that ``simulate``
resolves into one (``nd.MapParameter``, ...)."""

Key: TypeAlias = PRNGKeyArray

__all__ = [
    "Array",
    "ArrayLike",
    "CouplingInput",
    "History",
    "Key",
    "Matrix",
    "Param",
    "Scalar",
    "State",
]
