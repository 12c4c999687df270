"""An ``InputScaling`` of a dense graph's weights, kept as the graph's per-node input gain
inside the time loop."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._graph._dense_layout import AbstractDenseGraph
from ._base import AbstractParameterisation, resolve_parameters
from .connectivity_scaling import InputScaling


class _InputGain(AbstractParameterisation):
    """The gains $\\gamma_i = b_i e^{g_i}$ of an ``InputScaling`` with log-gains ``g``,
    times the graph's own ``input_gain`` ``b`` where it has one."""

    log_gain: Float[Array, " nodes"] | AbstractParameterisation
    base: Float[Array, " nodes"] | None

    def value(self) -> Float[Array, " nodes"]:
        gain = jnp.exp(self.log_gain)
        return gain if self.base is None else self.base * gain


def factor_input_scaling(network):
    r"""``network`` with an ``InputScaling`` of its dense graph's weights split into the
    structural weights (the graph's ``weights``) and the gains (its ``input_gain``):

    $$ \sum_j e^{g_i} W_{ij}\, v_{ij} = e^{g_i} \sum_j W_{ij}\, v_{ij}, $$

    the same coupling input, for which reverse mode through the time loop accumulates a
    cotangent per node instead of one per edge (``[nodes]`` instead of ``[nodes,
    nodes]`` every step). Any other network is returned as is. ``simulate`` and
    ``FcLoss`` resolve the network this way; ``resolve_parameters`` alone keeps
    $e^{g_i} W_{ij}$ as the graph's weights.
    """
    graph = network.graph
    if not (isinstance(graph, AbstractDenseGraph) and isinstance(graph.weights, InputScaling)):
        return network
    scaling = graph.weights
    gain = _InputGain(scaling.log_gain, graph.input_gain)
    return eqx.tree_at(lambda n: (n.graph.weights, n.graph.input_gain), network,
                       (scaling.weights, gain), is_leaf=lambda x: x is None)


def resolve_for_simulation(network):
    """``resolve_parameters`` of ``factor_input_scaling(network)``: the resolution
    ``simulate`` and ``FcLoss`` run before their time loops."""
    return resolve_parameters(factor_input_scaling(network))
