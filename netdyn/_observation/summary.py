"""What a modeller looks at in a simulated FC next to the empirical one."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import ArrayLike
from ._stats import upper_triangle
from .losses import fc_correlation, rmse

SATURATED = 0.9
"""FC above which a pair counts as saturated in ``fc_summary``."""


@eqx.filter_jit
def fc_summary(f: ArrayLike, target: ArrayLike) -> dict[str, Float[Array, ""]]:
    r"""Pattern, level and saturation of a simulated FC ``f`` against ``target``, over the
    upper triangles ($i < j$) of the ``[nodes, nodes]`` matrices:

    - ``fc_r``: Pearson $r$ between the triangles (the pattern, ``fc_correlation``);
    - ``rmse``: their root-mean-square difference (``rmse``);
    - ``mean_fc``: $\operatorname{mean}_{i<j} f_{ij}$, the level, to set beside the
      target's (an FC far above it usually means a shared slow signal, e.g. a transient);
    - ``saturation``: the fraction of pairs with $f_{ij} > 0.9$ (empirical resting-state FC
      has almost none; a saturated FC is not a credible fit whatever its $r$).

    Differentiable in ``f`` (except ``saturation``, a count).
    """
    f, target = jnp.asarray(f), jnp.asarray(target)
    if f.ndim != 2 or f.shape != target.shape or f.shape[0] != f.shape[1]:
        raise ValueError(
            f"fc_summary needs two square FC matrices of one shape, got {f.shape} and "
            f"{target.shape}."
        )
    values = upper_triangle(f, k=1)
    return {
        "fc_r": fc_correlation(f, target),
        "rmse": rmse(f, target),
        "mean_fc": jnp.mean(values),
        # NaN for a non-finite FC: never a plausible 0 % for a diverged simulation.
        "saturation": jnp.where(jnp.all(jnp.isfinite(values)),
                                jnp.mean((values > SATURATED).astype(values.dtype)), jnp.nan),
    }
