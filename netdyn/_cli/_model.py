"""The models ``netdyn fit`` offers (``nd.presets.MODELS``) and the parameters ``--fit``
selects in them."""

import equinox as eqx
import jax.numpy as jnp

from .._fit.step import float_dtype
from .._monitor._base import AbstractMonitor
from .._network import Network
from .._presets.models import MODELS as MODELS
from .._presets.selection import NamedWhere as Where, leaf as leaf, long_name as long_name, select


def network(args, weights, lengths, G: float | None = None) -> tuple[Network, AbstractMonitor]:
    """The network of ``--model`` (G: ``G``, else ``--G``, else the model's default) and
    the monitor whose signal gives the FC."""
    model = MODELS[args.model]
    net = model.network(weights, lengths, G=args.G if G is None else G, sigma=args.sigma,
                        speed=args.speed)
    return net, model.signal(args.tr, args.warmup, args.dt)


def with_G(args, net: Network, G: float) -> Network:
    """``net`` with the global coupling ``G`` given in the units of ``--G`` (the one place
    where a G of the command line enters a built network)."""
    value = jnp.asarray(G * MODELS[args.model].factor("coupling.G"), float_dtype())
    return eqx.tree_at(lambda n: n.coupling.G, net, value)


def selection(args, net: Network, maps=None) -> tuple[Where, tuple, Network]:
    """``where``, ``bounds`` and the network with the parameters of ``--fit`` as arrays
    (``nd.presets.select``, its errors naming the flags)."""
    return select(net, args.fit, MODELS[args.model].bounds, maps, context="--fit ",
                  model=f"--model {args.model}")
