"""A network: dynamics, couplings, graph and noise."""

import equinox as eqx

from ._coupling._base import AbstractCoupling
from ._dynamics._base import AbstractDynamics
from ._graph._base import AbstractGraph
from ._noise._base import AbstractNoise
from ._stimulus._base import AbstractStimulus, check_stimuli
from ._validate import number_lists_as_arrays


def parameter_arrays(part):
    """``part`` (a model part, a tuple of them, or ``None``) with each parameter given as
    a list or tuple of numbers (e.g. ``I_o=[0.3, 0.32, ...]``, one per region) as an
    array; a ragged or complex one gets a ``ValueError`` naming it."""
    if isinstance(part, (tuple, list)):
        return type(part)(parameter_arrays(p) for p in part)
    return part if part is None else number_lists_as_arrays(part, type(part).__name__)


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

    A parameter of the dynamics, couplings or noise given as a list of numbers (e.g.
    ``nd.ReducedWongWang(I_o=[0.30, 0.32, ...])``, one per region) becomes an array here.
    """

    dynamics: AbstractDynamics = eqx.field(converter=parameter_arrays)
    coupling: AbstractCoupling | tuple[AbstractCoupling, ...] = eqx.field(
        converter=parameter_arrays)
    graph: AbstractGraph
    noise: AbstractNoise | None = eqx.field(default=None, converter=parameter_arrays)
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
