"""Abstract base of neural-mass dynamics."""

import abc
import numbers
from collections.abc import Mapping, Sequence

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import ArrayLike, CouplingInput, Scalar, State


class AbstractDynamics(eqx.Module):
    """A neural mass: the local dynamics of every node of a network.

    A dynamics maps the node states ``y`` (``[states, nodes]``) and the coupling input
    ``c`` (``[inputs, nodes]``, the sum of all couplings of the network) to the time
    derivative ``dy/dt``. Parameters are array leaves (scalars, or ``[nodes]`` vectors for
    regional heterogeneity), so ``eqx.tree_at``, ``jax.grad`` and ``jax.vmap`` reach them.

    Subclasses define:

    - ``state_names``: class variable, the names of the state variables in row order;
    - ``state_bounds``: class variable, ``{name: (low, high)}`` for states that the
      solvers clip after every stage (as TVB's ``state_variable_boundaries``);
    - ``n_coupling_inputs``: class variable, the number of rows of ``c`` the model reads;
    - ``coupled_variables``: a static field, the state variables sent through the
      couplings to other nodes (TVB's ``cvar``);
    - ``vector_field`` and ``initial_state``.

    Time is in milliseconds, as in TVB.
    """

    state_names: eqx.AbstractClassVar[tuple[str, ...]]
    state_bounds: eqx.AbstractClassVar[Mapping[str, tuple[float, float]]]
    n_coupling_inputs: eqx.AbstractClassVar[int]
    coupled_variables: eqx.AbstractVar[tuple[str, ...]]

    def __check_init__(self):
        unknown = [v for v in self.coupled_variables if v not in self.state_names]
        if unknown:
            raise ValueError(
                f"{type(self).__name__}: unknown coupled-variable name(s) {unknown}; "
                f"state variables are {self.state_names}."
            )
        if len(self.coupled_variables) == 0:
            raise ValueError(f"{type(self).__name__}: coupled_variables must not be empty.")

    @abc.abstractmethod
    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        """The time derivative ``dy/dt`` at time ``t`` (ms) given coupling input ``c``."""

    @abc.abstractmethod
    def initial_state(self, n_nodes: int) -> State:
        """A default initial state ``[states, nodes]`` (also the constant initial history)."""


def constant_state(values: Sequence[ArrayLike | Sequence[numbers.Real]], n_nodes: int) -> State:
    """The state ``[len(values), nodes]`` whose row ``k`` holds ``values[k]`` at every node:
    what the models' ``initial_state`` returns from their ``initial_<state>`` fields.

    Each value is a scalar, the same at every node, or a ``[nodes]`` array or list (a
    per-region initial value). Every row is cast to the default floating dtype (float64
    with x64, float32 without), whatever the values' own dtypes: an integer or a float32
    field still gives a state of the dtype the solvers start from.
    """
    return jnp.stack(
        [jnp.broadcast_to(jnp.asarray(v, dtype=float), (n_nodes,)) for v in values]
    )


def coupled_indices(dynamics: AbstractDynamics) -> tuple[int, ...]:
    """Row indices of the coupled variables in the state array."""
    return tuple(dynamics.state_names.index(v) for v in dynamics.coupled_variables)


def clip_to_bounds(dynamics: AbstractDynamics, y: State) -> State:
    """Clip the rows of ``y`` named in ``dynamics.state_bounds`` (identity if none)."""
    if not dynamics.state_bounds:
        return y
    rows = []
    for name, row in zip(dynamics.state_names, y):
        if name in dynamics.state_bounds:
            low, high = dynamics.state_bounds[name]
            row = jnp.clip(row, low, high)
        rows.append(row)
    return jnp.stack(rows)
