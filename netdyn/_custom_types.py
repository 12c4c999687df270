"""Named array shapes used across netdyn (jaxtyping aliases)."""

from typing import TypeAlias

from jaxtyping import Array, ArrayLike, Float, Int, PRNGKeyArray

State: TypeAlias = Float[Array, "states nodes"]
"""Dynamics state: one row per state variable, one column per node."""

CouplingInput: TypeAlias = Float[Array, "inputs nodes"]
"""Coupling input to the dynamics: one row per coupling input, one column per node."""

Matrix: TypeAlias = Float[Array, "nodes nodes"]
"""A node-by-node matrix, oriented ``[target, source]``."""

History: TypeAlias = Float[Array, "rows cvars nodes"]
"""Delay history buffer of the coupled variables; row ``-1`` is the newest."""

Scalar: TypeAlias = Float[ArrayLike, ""]
"""A real scalar (Python float or 0-d array)."""

Param: TypeAlias = Float[ArrayLike, "..."]
"""A model parameter: a scalar, or an array broadcastable against ``[nodes]``."""

StepIndex: TypeAlias = Int[Array, ""]
"""Global integer step counter (drives counter-based noise)."""

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
    "StepIndex",
]
