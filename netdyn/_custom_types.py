"""Named array shapes used across netdyn (jaxtyping aliases)."""

import numbers
from collections.abc import Sequence
from typing import TypeAlias

from jaxtyping import Array, ArrayLike, Float, PRNGKeyArray

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

Scalar: TypeAlias = Float[ArrayLike, ""]
"""A real scalar (Python float or 0-d array)."""

Param: TypeAlias = (
    Float[ArrayLike, "..."] | Sequence[numbers.Real] | Sequence[Sequence[numbers.Real]]
    | AbstractParameterisation | AbstractNetworkParameterisation
)
"""A model parameter: a scalar, an array broadcastable against ``[nodes]`` (or a list of
numbers, which ``Network`` turns into one), or a parameterisation that ``simulate``
resolves into one (``nd.MapParameter``, ...)."""

Key: TypeAlias = PRNGKeyArray

__all__ = [
    "Array",
    "CouplingInput",
    "History",
    "Key",
    "Matrix",
    "Param",
    "Scalar",
    "State",
]
