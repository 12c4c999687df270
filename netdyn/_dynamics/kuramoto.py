"""Kuramoto phase oscillator."""

from typing import ClassVar

import equinox as eqx

from .._custom_types import CouplingInput, Param, Scalar, State
from ._base import AbstractDynamics, constant_state


class Kuramoto(AbstractDynamics):
    r"""Kuramoto phase oscillator (TVB's ``Kuramoto``):

    $$ \dot\theta = \omega + c_0, $$

    with natural angular frequency $\omega$ (rad/ms) and one coupling input $c_0$ built
    from $\theta$; paired with ``KuramotoSine`` it reads
    $c_{0,i} = G \sum_j W_{ij} \sin(\theta_j - \theta_i)$. The phase is not wrapped to
    $[0, 2\pi)$ (as in TVB).

    **Arguments** (defaults as TVB 2.10): ``omega = 1.0`` rad/ms. ``initial_theta = 0.0``:
    the constant phase returned by ``initial_state``.

    **References**: Kuramoto (1975), *Self-entrainment of a population of coupled
    non-linear oscillators*, Lecture Notes in Physics 39:420-422; Cabral, Hugues, Sporns,
    Deco (2011), *Role of local network oscillations in resting-state functional
    connectivity*, NeuroImage 57(1):130-139.
    """

    omega: Param = 1.0
    initial_theta: Param = 0.0
    coupled_variables: tuple[str, ...] = eqx.field(default=("theta",), static=True)

    state_names: ClassVar[tuple[str, ...]] = ("theta",)
    state_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t: Scalar, y: State, c: CouplingInput) -> State:
        dtheta = self.omega + c[0]
        return dtheta[None]

    def initial_state(self, n_nodes: int) -> State:
        return constant_state((self.initial_theta,), n_nodes)
