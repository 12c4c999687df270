"""A network: dynamics, couplings, graph and noise."""

import equinox as eqx

from ._coupling._base import AbstractCoupling
from ._dynamics._base import AbstractDynamics
from ._graph._base import AbstractGraph
from ._noise._base import AbstractNoise


class Network(eqx.Module):
    r"""Nodes with local ``dynamics``, coupled through ``graph`` by ``coupling``:

    $$ dy_i = f\big(t, y_i, \textstyle\sum_c c^{(c)}_i\big)\,dt + g(y_i)\,dW_i, $$

    where each coupling $c^{(c)}$ reads the dynamics' coupled variables of the source
    nodes (delayed or not) through the weights ``W[target, source]`` of the graph.

    **Arguments**:

    - ``dynamics``: an ``AbstractDynamics``.
    - ``coupling``: an ``AbstractCoupling`` or a tuple of them (their outputs add up).
    - ``graph``: an ``AbstractGraph``; delayed couplings need an ``AbstractDelayGraph``.
    - ``noise``: an ``AbstractNoise`` or ``None`` (deterministic).
    """

    dynamics: AbstractDynamics
    coupling: AbstractCoupling | tuple[AbstractCoupling, ...]
    graph: AbstractGraph
    noise: AbstractNoise | None = None

    def __check_init__(self):
        for c in self.couplings:
            if not isinstance(c, AbstractCoupling):
                raise ValueError(f"coupling must be AbstractCoupling(s), got {type(c).__name__}.")

    @property
    def couplings(self) -> tuple[AbstractCoupling, ...]:
        """The couplings as a tuple."""
        if isinstance(self.coupling, tuple):
            return self.coupling
        return (self.coupling,)
