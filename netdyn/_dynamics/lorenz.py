"""The Lorenz system as a node: chaos without a neural interpretation."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import CouplingInput, Param, Scalar, State
from ._base import AbstractDynamics, constant_state


class Lorenz(AbstractDynamics):
    r"""The Lorenz (1963) system, coupled through $x$:

    $$
    \begin{aligned}
    \dot x &= \sigma (y - x) + c_0, \\
    \dot y &= x(\rho - z) - y, \\
    \dot z &= x y - \beta z .
    \end{aligned}
    $$

    Not a neural model (TVB has none of that name): the standard test of methods on a
    chaotic network, as in tvboptim's examples. At the classical parameters the attractor
    is chaotic (largest Lyapunov exponent about 0.9 per unit time); time is read in ms.
    With Heun, measured on 4 coupled nodes against dt = 1e-4 ms (error relative to each
    variable's range): dt = 0.005 ms stays within 1e-3 over 1 ms, 0.001 ms within 4e-4
    over 5 ms; the error grows with the run's length (chaos).

    **Arguments**: ``sigma = 10`` (Prandtl number), ``rho = 28`` (Rayleigh number),
    ``beta = 8/3`` (geometric factor), each a scalar, a ``[nodes]`` array or a
    parameterisation; ``initial_x = initial_y = initial_z = 1``: the constant initial
    state. Coupled variable ``x`` (one input, added to $\dot x$); noise applies to every
    state variable by default.

    **Reference**: Lorenz (1963), *Deterministic nonperiodic flow*, J. Atmos. Sci.
    20(2):130-141.
    """

    sigma: Param = 10.0
    rho: Param = 28.0
    beta: Param = 8.0 / 3.0
    initial_x: Param = 1.0
    initial_y: Param = 1.0
    initial_z: Param = 1.0
    coupled_variables: tuple[str, ...] = eqx.field(default=("x",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("x", "y", "z")
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        x, v, z = y
        return jnp.stack([self.sigma * (v - x) + c[0], x * (self.rho - z) - v,
                          x * v - self.beta * z])

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_x, self.initial_y, self.initial_z), n_nodes)
