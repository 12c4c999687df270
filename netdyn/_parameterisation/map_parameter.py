"""A regional parameter that varies along a few maps."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import Scalar
from ._base import AbstractParameterisation


class MapParameter(AbstractParameterisation):
    r"""A regional parameter varying along ``k`` maps (Demirtas et al. 2019; Kong et al.
    2021; Wang et al. 2019):

    $$ P_i = P_b \Big(1 + \sum_k c_k M_{ki}\Big) \quad \text{(``relative=True``)}, \qquad
       P_i = P_b + \sum_k c_k M_{ki} \quad \text{(``relative=False``)}, $$

    with baseline $P_b$ (``baseline``), coefficients $c_k$ (``coefficients``) and maps
    $M_{ki}$ (``maps``, ``[k, nodes]``: say T1w/T2w myelin, the principal FC gradient or
    the in-strength, usually z-scored, see ``nd.maps``). Fit the coefficients (and the
    baseline) instead of one value per region: ``where=lambda n: (n.dynamics.I_o.baseline,
    n.dynamics.I_o.coefficients)``.

    **Arguments**: ``baseline`` (a scalar), ``maps`` ``[k, nodes]`` (or one map
    ``[nodes]``), ``coefficients`` ``[k]`` (default zeros: the homogeneous model),
    ``names`` of the maps (static, for reports; default ``map0, map1, ...``),
    ``relative`` (static, default ``True``): the coefficients scale the baseline, or add
    to it (for parameters whose natural baseline is 0, such as the log-gains of
    ``nd.InputScaling``: ``InputScaling(w, MapParameter(0.0, maps, relative=False))``).

    **Raises**: ``ValueError`` when the maps are not finite real ``[k, nodes]``, or the
    coefficients or names do not match their number.
    """

    baseline: Scalar
    coefficients: Float[Array, " k"]
    maps: Float[Array, "k nodes"]
    names: tuple[str, ...] = eqx.field(static=True)
    relative: bool = eqx.field(static=True)

    def __init__(self, baseline, maps, coefficients=None, names=None, relative=True):
        m = np.asarray(maps)
        if m.ndim == 1:
            m = m[None]
        if m.ndim != 2 or not np.issubdtype(m.dtype, np.number) or np.iscomplexobj(m):
            raise ValueError(f"MapParameter maps must be real [k, nodes], got shape "
                             f"{m.shape} of dtype {m.dtype}.")
        if not np.all(np.isfinite(m)):
            raise ValueError("MapParameter maps must be finite (NaN or inf found).")
        k = m.shape[0]
        self.maps = jnp.asarray(m, dtype=float)
        self.baseline = baseline
        self.coefficients = (jnp.zeros(k) if coefficients is None else
                             jnp.asarray(coefficients, dtype=float))
        self.names = tuple(f"map{i}" for i in range(k)) if names is None else tuple(names)
        self.relative = bool(relative)

    def __check_init__(self):
        k = self.maps.shape[0]
        if jnp.shape(self.coefficients) != (k,):
            raise ValueError(f"MapParameter coefficients must have shape ({k},) for {k} "
                             f"map(s), got {jnp.shape(self.coefficients)}.")
        if len(self.names) != k:
            raise ValueError(f"MapParameter names must name the {k} map(s), got "
                             f"{self.names}.")
        if jnp.ndim(self.baseline) != 0:
            raise ValueError("MapParameter baseline must be a scalar, got shape "
                             f"{jnp.shape(self.baseline)}.")

    def value(self) -> Float[Array, " nodes"]:
        offset = self.coefficients @ self.maps
        return self.baseline * (1.0 + offset) if self.relative else self.baseline + offset
