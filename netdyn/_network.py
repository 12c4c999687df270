"""A network: dynamics, couplings, graph and noise."""

import equinox as eqx

from ._coupling._base import AbstractCoupling
from ._dynamics._base import AbstractDynamics
from ._graph._base import AbstractGraph
from ._noise._base import AbstractNoise
from ._stimulus._base import AbstractStimulus, check_stimuli


class Network(eqx.Module):
    r"""Nodes with local ``dynamics``, coupled through ``graph`` by ``coupling``:

    $$ dy_i = \Big(f\big(t, y_i, \textstyle\sum_c c^{(c)}_i\big) + u_i(t)\Big)\,dt
            + g(y_i)\,dW_i, $$

    where each coupling $c^{(c)}$ reads the dynamics' coupled variables of the source
    nodes (delayed or not) through the weights ``W[target, source]`` of the graph, and
    $u_i(t)$ is the external input of the stimuli (zero without).

    **Arguments**:

    - ``dynamics``: an ``AbstractDynamics``.
    - ``coupling``: an ``AbstractCoupling`` or a tuple of them (their outputs add up).
    - ``graph``: an ``AbstractGraph``; delayed couplings need an ``AbstractDelayGraph``.
    - ``noise``: an ``AbstractNoise`` or ``None`` (deterministic).
    - ``stimulus``: an ``AbstractStimulus``, a tuple of them (their inputs add up) or
      ``None`` (no external input).
    """

    dynamics: AbstractDynamics
    coupling: AbstractCoupling | tuple[AbstractCoupling, ...]
    graph: AbstractGraph
    noise: AbstractNoise | None = None
    stimulus: AbstractStimulus | tuple[AbstractStimulus, ...] | None = None

    def __check_init__(self):
        for c in self.couplings:
            if not isinstance(c, AbstractCoupling):
                raise ValueError(f"coupling must be AbstractCoupling(s), got {type(c).__name__}.")
        check_stimuli(self.stimulus)

    @property
    def couplings(self) -> tuple[AbstractCoupling, ...]:
        """The couplings as a tuple."""
        if isinstance(self.coupling, tuple):
            return self.coupling
        return (self.coupling,)

    @property
    def stimuli(self) -> tuple[AbstractStimulus, ...]:
        """The stimuli as a tuple (empty without)."""
        return check_stimuli(self.stimulus)
