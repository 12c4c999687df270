"""Lead-field monitor: sensor signals (EEG, MEG, SEEG) projected from region activity."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .._validate import finite_array, is_concrete, real_array
from ._base import AbstractMonitor
from ._checks import check_warmup, to_variables


def _as_gain(gain) -> Array:
    """``gain`` as a JAX array; strings and other non-numbers refused by name."""
    if isinstance(gain, Array):  # a JAX array, or a tracer under jit
        return gain
    return jnp.asarray(real_array("LeadField.gain", gain))


class LeadField(AbstractMonitor):
    r"""Sensor signals through a lead field (gain) matrix, averaged over each period (TVB's
    ``EEG``, ``MEG`` and ``iEEG`` projection monitors, at region level):

    $$ s_j(t) = \sum_v c_v\, y_{v,j}(t), \qquad
       e_k = \sum_j G_{kj}\, \bar s_j, \qquad
       \bar s_j = \frac{1}{m} \sum_{n = km + 1}^{(k+1)m} s_j(t_n), $$

    with $y_{v,j}$ the watched state variables ``variables`` of region $j$, $c_v$ their
    ``coefficients`` (e.g. Jansen-Rit's pyramidal membrane potential $y_1 - y_2$:
    ``variables=("y1", "y2")``, ``coefficients=(1, -1)``; ``LeadField.jansen_rit``),
    $G$ the ``gain`` ``[sensors, regions]`` and $m$ = ``period / dt`` steps per sample
    (the projection is linear, so averaging the sources equals averaging the sensors).
    With ``reference="average"`` (EEG's common average reference) the mean over sensors
    is subtracted from every sensor, $e_k - \frac{1}{K}\sum_l e_l$.

    Each step adds one ``[regions]`` row to a running sum, whatever the number of
    sensors; the ``[sensors, regions]`` product runs once per sample. ``gain`` and
    ``coefficients`` are array leaves (``grad``, ``vmap`` and ``eqx.tree_at`` reach them).

    **Arguments**:

    - ``gain``: ``[sensors, regions]``, column $j$ for region (node) $j$ of the graph, in
      the connectome's order. Read TVB's projection matrices with
      ``netdyn.datasets.read_projection_matrix``.
    - ``period``: ms per sample (a whole number of steps; e.g. 1.0 for 1 kHz).
    - ``variables``: the watched state variables (all when ``None``).
    - ``coefficients``: one weight per watched variable; may be omitted when one variable
      is watched.
    - ``reference``: ``None`` or ``"average"``.
    - ``warmup``: ms of samples dropped at the start of a fresh run (transients).

    Samples have shape ``[1, sensors]`` (``sol[name]`` is ``[time, 1, sensors]``, as TVB's
    projection monitors), and sample ``k`` is stamped, as ``TemporalAverage`` and TVB, at
    the end of its window minus half a period.

    **Reference**: Sanz Leon, Knock, Woodman, Domide, Mersmann, McIntosh, Jirsa (2013),
    *The Virtual Brain: a simulator of primate brain network dynamics*, Front.
    Neuroinform. 7:10 (the projection monitors); Nunez & Srinivasan (2006), *Electric
    Fields of the Brain*, Oxford University Press (lead fields, references).
    """

    gain: Float[Array, "sensors regions"] = eqx.field(converter=_as_gain)
    period: float = eqx.field(static=True)
    variables: tuple[str, ...] | None = eqx.field(
        default=None, static=True, converter=to_variables
    )
    coefficients: Float[ArrayLike, " variables"] | None = None
    # str, not Literal: a wrong value gets netdyn's ValueError, not a type-checker's.
    reference: str | None = eqx.field(default=None, static=True)
    warmup: float = eqx.field(default=0.0, static=True)

    def __check_init__(self):
        check_warmup(self)
        shape = jnp.shape(self.gain)
        if len(shape) != 2 or 0 in shape:
            raise ValueError(
                f"LeadField: gain must be a non-empty [sensors, regions] matrix, got shape "
                f"{shape}."
            )
        _check_values("LeadField.gain", self.gain)
        if self.coefficients is not None:
            _check_values("LeadField.coefficients", self.coefficients)
        if self.reference not in (None, "average"):
            raise ValueError(
                f"LeadField: reference must be None or 'average', got {self.reference!r}."
            )
        if self.coefficients is not None:
            c_shape = jnp.shape(self.coefficients)
            n = None if self.variables is None else len(self.variables)
            if len(c_shape) != 1 or (n is not None and c_shape[0] != n):
                raise ValueError(
                    f"LeadField: coefficients must be [variables] = "
                    f"[{'k' if n is None else n}] (one per watched variable), got shape "
                    f"{c_shape}."
                )

    @classmethod
    def jansen_rit(cls, gain: ArrayLike, period: float, **kwargs) -> "LeadField":
        r"""For ``JansenRit``: the pyramidal cells' membrane potential $y_1 - y_2$, the
        usual EEG source of the model (Jansen & Rit 1995), through ``gain``. Other fields
        (e.g. ``reference="average"``) from ``kwargs``."""
        return cls(gain, period, variables=("y1", "y2"), coefficients=jnp.array([1.0, -1.0]),
                   **kwargs)

    def _source(self, y: Float[Array, "k nodes"]) -> Float[Array, " nodes"]:
        if self.coefficients is None:
            return y[0]
        return jnp.asarray(self.coefficients, y.dtype) @ y

    def init(self, y: Float[Array, "k nodes"], dt: float):
        sensors, regions = self.gain.shape
        if y.ndim != 2 or y.shape[1] != regions:
            raise ValueError(
                f"LeadField: gain has shape {self.gain.shape} = [sensors, regions], but the "
                f"network has {y.shape[-1]} regions (state {y.shape})."
            )
        if self.coefficients is None and y.shape[0] != 1:
            raise ValueError(
                f"LeadField watches {y.shape[0]} state variables: pass coefficients (one "
                "per variable, e.g. (1, -1) for Jansen-Rit's y1 - y2) or a single variable."
            )
        if self.coefficients is not None and jnp.shape(self.coefficients) != (y.shape[0],):
            raise ValueError(
                f"LeadField: coefficients have shape {jnp.shape(self.coefficients)} for "
                f"{y.shape[0]} watched state variables."
            )
        return jnp.zeros(y.shape[1:], y.dtype), jnp.zeros((), jnp.int32)

    def update(self, state, y: Float[Array, "k nodes"], dt: float):
        total, count = state
        return total + self._source(y), count + 1

    def emit(self, state, dt: float):
        total, count = state
        mean = total / count.astype(total.dtype)
        sensors = jnp.asarray(self.gain, mean.dtype) @ mean
        if self.reference == "average":
            sensors = sensors - jnp.mean(sensors)
        return (jnp.zeros_like(total), jnp.zeros_like(count)), sensors[None]

    def sample_offset(self, period: float, dt: float) -> float:
        return -0.5 * period


def _check_values(name: str, value) -> None:
    """Real values always (the dtype is known under ``jit`` too); finite ones when
    concrete (a traced gain is the caller's to keep finite)."""
    if jnp.iscomplexobj(value):
        raise ValueError(
            f"{name} must be real, got {jnp.result_type(value)} values (netdyn does not "
            "drop imaginary parts)."
        )
    if is_concrete(value):
        finite_array(name, value)
