"""Abstract bases of parameterisations, and their resolution into plain parameters."""

import abc

import equinox as eqx
import jax
from jaxtyping import Array, Float


class AbstractParameterisation(eqx.Module):
    r"""A model parameter computed from the fields of this module, for example a regional
    parameter that varies along a few maps (``nd.MapParameter``) or connectome weights
    scaled per region (``nd.InputScaling``).

    Put one wherever a model holds a parameter (``eqx.tree_at(lambda n: n.dynamics.I_o,
    net, nd.MapParameter(...))``); ``nd.simulate`` replaces it by ``value()`` before it
    runs, so the model only ever sees arrays, and ``jax.grad`` or ``nd.fit`` reach the
    parameterisation's own leaves (select them with ``where=lambda n:
    n.dynamics.I_o.coefficients``).
    """

    @abc.abstractmethod
    def value(self) -> Float[Array, "..."]:
        """The parameter's value (a scalar, ``[nodes]`` or ``[nodes, nodes]`` array)."""


class AbstractNetworkParameterisation(eqx.Module):
    """A model parameter derived from the rest of the network, e.g. the inhibitory weights
    that feedback inhibition control sets from the coupling each region receives
    (``nd.FeedbackInhibition``).

    Resolved after every ``AbstractParameterisation``: ``value(network)`` sees the
    network with those already replaced by their values (and this field still holding
    the parameterisation itself, which ``value`` must not read).
    """

    @abc.abstractmethod
    def value(self, network) -> Float[Array, "..."]:
        """The parameter's value in ``network``."""


def _is_plain(x) -> bool:
    return isinstance(x, AbstractParameterisation)


def _is_derived(x) -> bool:
    return isinstance(x, AbstractNetworkParameterisation)


def _value(p: AbstractParameterisation):
    """``p.value()`` after the parameterisations inside ``p`` are replaced by theirs
    (e.g. ``InputScaling`` whose ``log_gain`` is a ``MapParameter``)."""
    leaves, treedef = jax.tree.flatten(p, is_leaf=lambda x: x is not p and _is_plain(x))
    inner = [_value(x) if _is_plain(x) else x for x in leaves]
    return jax.tree.unflatten(treedef, inner).value()


def resolve_parameters(network):
    """``network`` with every parameterisation replaced by its value: first the
    ``AbstractParameterisation``s (innermost first, when one holds another), then the
    ``AbstractNetworkParameterisation``s (which see the first ones' values). A network
    without any is returned as is."""
    network = jax.tree.map(lambda x: _value(x) if _is_plain(x) else x, network,
                           is_leaf=_is_plain)
    if not any(_is_derived(x) for x in jax.tree.leaves(network, is_leaf=_is_derived)):
        return network
    partly = network
    return jax.tree.map(lambda x: x.value(partly) if _is_derived(x) else x, network,
                        is_leaf=_is_derived)
