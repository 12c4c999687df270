"""The models ``netdyn fit`` offers (``nd.presets.MODELS``) and the parameters ``--fit``
selects in them."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._fit.step import float_dtype
from .._monitor._base import AbstractMonitor
from .._network import Network
from .._parameterisation._base import resolve_parameters
from .._parameterisation.connectivity_scaling import InputScaling
from .._parameterisation.map_parameter import MapParameter
from .._parameterisation.regional_deviation import RegionalDeviation
from .._parameters.bounds import Interval, Positive
from .._presets.models import MODELS as MODELS
from .._remat._base import AbstractRemat
from .._remat.parse import parse_remat


def factor(model: str, name: str) -> float:
    """Network value = value on the command line * factor, for parameter ``name`` (a path
    such as ``"coupling.G"``) of ``--model model``: the preset's units (``Preset.units``)."""
    return MODELS[model].factor(name)


def in_option_units(model: str, name: str, x):
    """A network value of parameter ``name`` in the units of the command line (the one
    conversion on the way out; ``with_G`` is the one on the way in)."""
    return MODELS[model].in_preset_units(name, x)


def network(args, weights, lengths, G: float | None = None) -> tuple[Network, AbstractMonitor]:
    """The network of ``--model`` (G: ``G``, else ``--G``, else the model's default) and
    the monitor whose signal gives the FC."""
    model = MODELS[args.model]
    net = model.network(weights, lengths, G=args.G if G is None else G, sigma=args.sigma,
                        speed=args.speed)
    return net, model.signal(args.tr, args.warmup)


def with_G(args, net: Network, G: float) -> Network:
    """``net`` with the global coupling ``G`` given in the units of ``--G`` (the one place
    where a G of the command line enters a built network)."""
    value = jnp.asarray(G * factor(args.model, "coupling.G"), float_dtype())
    return eqx.tree_at(lambda n: n.coupling.G, net, value)


# Parameters outside the dynamics that --fit may name (always one value for all regions).
_OUTSIDE = {"G": lambda m: m.coupling.G, "sigma": lambda m: m.noise.sigma}


# The bounds of the map coefficients: +-1 changes a parameter by 100 % per standard
# deviation of a map, far beyond any published fit (|c| < 0.5), and keeps a step of Adam
# from flipping a parameter's sign in the extreme regions.
MAP_COEFFICIENT_BOUNDS = Interval(-1.0, 1.0)


# Each region's input scaled by exp(g_i) (nd.InputScaling), with g mean-free (G sets the
# overall level), per region or along the --maps. Bounded to gains within e^+-2.
INPUT_GAIN = "input-gain"
INPUT_GAIN_BOUNDS = Interval(-2.0, 2.0)


def long_name(name: str) -> str:
    """The network's name of the ``--fit`` parameter ``name`` (``G`` -> ``coupling.G``,
    ``sigma`` -> ``noise.sigma``, a field of the dynamics -> ``dynamics.NAME``), as the
    fitted leaves are labelled."""
    return {"G": "coupling.G", "sigma": "noise.sigma"}.get(name, f"dynamics.{name}")


def leaf(m: Network, name: str, maps: bool = False):
    """The parameter ``name`` (``G``, ``sigma``, ``input-gain`` or a field of the
    dynamics) of ``m``; the coefficients of its ``MapParameter`` with ``maps``."""
    if name == INPUT_GAIN:
        gain = m.graph.weights.log_gain
        return gain.coefficients if maps else gain.deviations
    leaf = _OUTSIDE[name](m) if name in _OUTSIDE else getattr(m.dynamics, name)
    return leaf.coefficients if maps else leaf


def _input_gain(net: Network, scope: str, maps, dtype) -> Network:
    """``net`` with its weights scaled per region: ``InputScaling`` whose log-gains are
    mean-free deviations, or a ``MapParameter`` over the maps, all zero at the start."""
    zero = jnp.asarray(0.0, dtype)
    if scope == "maps":
        gain = MapParameter(zero, maps.values, names=maps.names, relative=False,
                            coefficients=jnp.zeros(len(maps.names), dtype))
    else:
        gain = RegionalDeviation(zero, jnp.zeros(net.graph.n_nodes, dtype))
    return eqx.tree_at(lambda m: m.graph.weights, net, InputScaling(net.graph.weights, gain))


class Where(eqx.Module):
    """Selects the parameters named by ``--fit``. A module with static names, so that
    repeated runs in one process share the compiled step."""

    names: tuple[str, ...] = eqx.field(static=True)
    mapped: tuple[str, ...] = eqx.field(static=True, default=())  # fitted along --maps

    def __call__(self, m: Network) -> tuple:
        return tuple(leaf(m, name, name in self.mapped) for name in self.names)


def selection(args, net: Network, maps=None) -> tuple[Where, tuple, Network]:
    """``where``, ``bounds`` and the network with the fitted parameters as arrays (made
    here, once: ``[nodes]`` for per-region ones, a scalar otherwise), and those fitted
    along maps (``NAME:maps``) as ``MapParameter``s over ``maps`` (a ``RegionMaps``, from
    ``--maps``) with zero coefficients: the homogeneous model at the start."""
    table = MODELS[args.model].bounds
    specs = [s.strip() for s in args.fit.split(",") if s.strip()]
    if not specs:
        raise ValueError("--fit: give at least one parameter, e.g. --fit G.")
    n = net.graph.n_nodes
    names, bounds, values, mapped = [], [], [], []
    for spec in specs:
        name, _, scope = spec.partition(":")
        if scope not in ("", "global", "maps"):
            raise ValueError(f"--fit {spec!r}: the suffixes are ':global' and ':maps'.")
        if scope == "maps" and name in _OUTSIDE:
            raise ValueError(f"--fit {spec!r}: only parameters of the dynamics and "
                             f"{INPUT_GAIN} vary along maps ({', '.join(table)}).")
        if name not in _OUTSIDE and name not in table and name != INPUT_GAIN:
            raise ValueError(
                f"--fit {name!r}: unknown parameter for --model {args.model}; choose from "
                f"{', '.join(_OUTSIDE)}, {INPUT_GAIN}, {', '.join(table)}."
            )
        if name in names:
            raise ValueError(f"--fit {args.fit!r} names {name} twice.")
        if scope == "maps" and maps is None:
            raise ValueError(f"--fit {spec!r}: no maps given (--maps).")
        names.append(name)
        if scope == "maps":
            mapped.append(name)
        if name == INPUT_GAIN:
            if scope == "global":
                raise ValueError(f"--fit {spec!r}: {INPUT_GAIN} is per region (or ':maps'); "
                                 "G scales every region's input alike.")
            net = _input_gain(net, scope, maps, float_dtype())
            bounds.append(MAP_COEFFICIENT_BOUNDS if scope == "maps" else INPUT_GAIN_BOUNDS)
            values.append(leaf(net, name, scope == "maps"))
            continue
        # Strongly typed (an explicit dtype), so that the first update does not change the
        # type: a second compilation.
        start = float(np.asarray(leaf(net, name)))
        if scope == "maps":
            net = eqx.tree_at(lambda m: getattr(m.dynamics, name), net, MapParameter(
                jnp.asarray(start, float_dtype()), maps.values, names=maps.names,
                coefficients=jnp.zeros(len(maps.names), float_dtype())))
            bounds.append(MAP_COEFFICIENT_BOUNDS)
            values.append(leaf(net, name, True))
            continue
        shape = () if name in _OUTSIDE or scope == "global" else (n,)
        values.append(jnp.full(shape, start, float_dtype()))
        bounds.append(Positive() if name in _OUTSIDE else table[name])
    where = Where(tuple(names), tuple(mapped))
    return where, tuple(bounds), eqx.tree_at(where, net, tuple(values))


def remat(spec: str) -> AbstractRemat:
    """The strategy of ``--remat`` (``nd.parse_remat``; its error names the flag)."""
    try:
        return parse_remat(spec)
    except ValueError as e:
        raise ValueError(f"--remat {e}") from None


# With per-region parameters fitted as well, a parameter that moves every region at once
# (G, sigma, a map coefficient) steps at this fraction of --lr: Adam moves each leaf by
# about the learning rate per step, and the FC's level reacts to G as to all regions'
# gains together (on the rww-ei-fic fit of input-gain, G at 0.4 % per step and the gains
# at 2 % reached test-run FC r 0.76 in 30 steps).
GLOBAL_STEP = 0.2


def step_scales(where: Where, net: Network) -> tuple[float, ...] | None:
    """Per fitted leaf, its share of the learning rate: 1 for per-region leaves, and
    ``GLOBAL_STEP`` for the others when per-region ones are fitted too (else ``None``)."""
    n = resolve_parameters(net).graph.n_nodes
    regional = [jnp.shape(x) == (n,) and name not in where.mapped
                for name, x in zip(where.names, where(net))]
    if not any(regional) or all(regional):
        return None
    return tuple(1.0 if r else GLOBAL_STEP for r in regional)
