r"""``select``: the parameters of a preset network that a short text names, as ``netdyn
fit --fit`` takes it (``"G,sigma,w_p:maps,input-gain"``), made ready to fit: the
``where`` (``NamedWhere``), the bounds, and the network with each named parameter as an
array of its own (per region, one value, or a ``MapParameter`` along maps)."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._fit.step import float_dtype
from .._network import Network
from .._parameterisation._base import resolve_parameters
from .._parameterisation.connectivity_scaling import InputScaling
from .._parameterisation.map_parameter import MapParameter
from .._parameterisation.maps import RegionMaps
from .._parameterisation.regional_deviation import RegionalDeviation
from .._parameters.bounds import AbstractTransform, Interval, Positive

# Parameters outside the dynamics that a text may name (one value for all regions).
_OUTSIDE = {"G": lambda m: m.coupling.G, "sigma": lambda m: m.noise.sigma}


# The bounds of the map coefficients: +-1 changes a parameter by 100 % per standard
# deviation of a map, far beyond any published fit (|c| < 0.5), and keeps a step of Adam
# from flipping a parameter's sign in the extreme regions.
MAP_COEFFICIENT_BOUNDS = Interval(-1.0, 1.0)


# Each region's input scaled by exp(g_i) (nd.InputScaling), with g mean-free (G sets the
# overall level), per region or along the maps. Bounded to gains within e^+-2.
INPUT_GAIN = "input-gain"
INPUT_GAIN_BOUNDS = Interval(-2.0, 2.0)


def long_name(name: str) -> str:
    """The network's name of the parameter ``name`` (``G`` -> ``coupling.G``,
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


# With per-region parameters fitted as well, a parameter that moves every region at once
# (G, sigma, a map coefficient) steps at this fraction of the learning rate: Adam moves
# each leaf by about the learning rate per step, and the FC's level reacts to G as to all
# regions' gains together (on the rww-ei-fic fit of input-gain, G at 0.4 % per step and
# the gains at 2 % reached test-run FC r 0.76 in 30 steps).
GLOBAL_STEP = 0.2


class NamedWhere(eqx.Module):
    """The ``where`` of ``select``: the parameters ``names`` of a preset network (``G``,
    ``sigma``, ``input-gain`` or a field of the dynamics), those in ``mapped`` by the
    coefficients of their ``MapParameter``. A module with static names, so that fits
    with the same names share their compiled step."""

    names: tuple[str, ...] = eqx.field(static=True)
    mapped: tuple[str, ...] = eqx.field(static=True, default=())

    def __call__(self, m: Network) -> tuple:
        return tuple(leaf(m, name, name in self.mapped) for name in self.names)

    def step_scales(self, net: Network, global_step: float = GLOBAL_STEP
                    ) -> tuple[float, ...] | None:
        """Per parameter, its share of the learning rate when per-region parameters are
        fitted beside global ones (``nd.fit_optimizer``'s ``scales``, as ``netdyn fit``
        passes them): 1 for a per-region leaf of ``net``, ``global_step`` for one that
        moves every region at once (G, sigma, a map's coefficients); ``None`` (all 1)
        when the leaves are all of one kind."""
        n = resolve_parameters(net).graph.n_nodes
        regional = [jnp.shape(x) == (n,) and name not in self.mapped
                    for name, x in zip(self.names, self(net))]
        if not any(regional) or all(regional):
            return None
        return tuple(1.0 if r else global_step for r in regional)


def _check(spec: str, whole: str, table, names, maps, context: str, model: str) -> None:
    """``ValueError`` (starting with ``context``) unless ``spec``, one item of ``whole``,
    names a parameter of ``table``'s model (or ``G``, ``sigma``, ``input-gain``) once,
    with a known suffix."""
    name, _, scope = spec.partition(":")
    if scope not in ("", "global", "maps"):
        raise ValueError(f"{context}{spec!r}: the suffixes are ':global' and ':maps'.")
    if scope == "maps" and name in _OUTSIDE:
        raise ValueError(f"{context}{spec!r}: only parameters of the dynamics and "
                         f"{INPUT_GAIN} vary along maps ({', '.join(table)}).")
    if name not in _OUTSIDE and name not in table and name != INPUT_GAIN:
        raise ValueError(
            f"{context}{name!r}: unknown parameter for {model}; choose from "
            f"{', '.join(_OUTSIDE)}, {INPUT_GAIN}, {', '.join(table)}."
        )
    if name in names:
        raise ValueError(f"{context}{whole!r} names {name} twice.")
    if scope == "maps" and maps is None:
        raise ValueError(f"{context}{spec!r}: no maps given (maps=).")
    if name == INPUT_GAIN and scope == "global":
        raise ValueError(f"{context}{spec!r}: {INPUT_GAIN} is per region (or ':maps'); "
                         "G scales every region's input alike.")


def select(net: Network, spec: str, bounds: dict[str, AbstractTransform],
           maps: RegionMaps | None = None, *, context: str = "",
           model: str = "this model") -> tuple[NamedWhere, tuple, Network]:
    r"""The parameters that ``spec`` names in ``net`` (a preset, ``nd.presets``), ready
    for ``nd.fit(net, ..., where=where, bounds=bounds)``: ``(where, bounds, net)``.

    ``spec`` is comma-separated: ``G`` (the coupling's ``G``), ``sigma`` (the noise's),
    ``input-gain`` (each region's input scaled by $e^{g_i}$, ``nd.InputScaling`` of
    mean-free ``nd.RegionalDeviation`` log-gains within $\pm 2$, zero at the start) and
    any parameter of the dynamics with a range in ``bounds`` (``Preset.bounds``), one
    value per region; with ``:global`` one value for all regions; with ``:maps`` varying
    along ``maps`` (``nd.maps.from_spec``: a ``MapParameter`` whose coefficients, within
    $\pm 1$ and zero at the start, are fitted). ``G`` and ``sigma`` are one value,
    positive. The network returned holds each parameter as a new array of the fit's
    float type (``[nodes]`` or a scalar): the homogeneous model at the start.

    **Raises** ``ValueError`` that starts with ``context`` (``"--fit "``): an unknown
    name (for ``model``), a name twice, an unknown suffix, ``:maps`` without ``maps``.
    """
    table = bounds
    specs = [s.strip() for s in spec.split(",") if s.strip()]
    if not specs:
        raise ValueError(f"{context}{spec!r}: no parameter named (e.g. 'G').")
    n = net.graph.n_nodes
    names, fitted_bounds, values, mapped = [], [], [], []
    for item in specs:
        _check(item, spec, table, names, maps, context, model)
        name, _, scope = item.partition(":")
        names.append(name)
        if scope == "maps":
            mapped.append(name)
        if name == INPUT_GAIN:
            net = _input_gain(net, scope, maps, float_dtype())
            fitted_bounds.append(MAP_COEFFICIENT_BOUNDS if scope == "maps" else INPUT_GAIN_BOUNDS)
            values.append(leaf(net, name, scope == "maps"))
            continue
        # Strongly typed (an explicit dtype), so that the first update does not change the
        # type: a second compilation.
        start = float(np.asarray(leaf(net, name)))
        if scope == "maps":
            net = eqx.tree_at(lambda m: getattr(m.dynamics, name), net, MapParameter(
                jnp.asarray(start, float_dtype()), maps.values, names=maps.names,
                coefficients=jnp.zeros(len(maps.names), float_dtype())))
            fitted_bounds.append(MAP_COEFFICIENT_BOUNDS)
            values.append(leaf(net, name, True))
            continue
        shape = () if name in _OUTSIDE or scope == "global" else (n,)
        values.append(jnp.full(shape, start, float_dtype()))
        fitted_bounds.append(Positive() if name in _OUTSIDE else table[name])
    where = NamedWhere(tuple(names), tuple(mapped))
    return where, tuple(fitted_bounds), eqx.tree_at(where, net, tuple(values))
