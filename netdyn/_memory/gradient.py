"""What a gradient costs in memory: compiled figures and saved residuals."""

import dataclasses
from collections import Counter

import jax
import numpy as np


@dataclasses.dataclass(frozen=True)
class GradientMemory:
    """Memory of ``jax.value_and_grad(fn)`` at given arguments.

    - ``temp_bytes``: XLA's compiled temporary memory (``memory_analysis()``), the
      deterministic figure that remat strategies reduce.
    - ``argument_bytes``, ``output_bytes``: compiled argument and output sizes.
    - ``residual_bytes``: total size of the residuals that reverse mode keeps between the
      forward and the backward pass (``jax.vjp``'s saved values).
    - ``residuals``: ``{"dtype[shape]": count}`` of those residuals, largest first.
    """

    temp_bytes: int
    argument_bytes: int
    output_bytes: int
    residual_bytes: int
    residuals: dict[str, int]

    def __str__(self) -> str:
        mb = 1e-6
        lines = [
            f"compiled temp memory: {self.temp_bytes * mb:.2f} MB",
            f"saved residuals: {self.residual_bytes * mb:.2f} MB in "
            f"{sum(self.residuals.values())} arrays",
        ]
        lines += [f"  {count} x {kind}" for kind, count in list(self.residuals.items())[:8]]
        return "\n".join(lines)


def _describe(aval) -> str:
    return f"{aval.dtype.name}{list(aval.shape)}"


def gradient_memory(fn, *args) -> GradientMemory:
    """Report the memory of ``jax.value_and_grad(fn)(*args)`` (``fn`` returns a scalar).

    Compiles the gradient once (nothing is run) and lists the residuals it saves. Compare
    remat strategies by building ``fn`` with each, e.g.
    ``nd.gradient_memory(lambda G: loss(G, nd.Uniform(1000)), 0.5).temp_bytes``.
    """
    compiled = jax.jit(jax.value_and_grad(fn)).lower(*args).compile()
    analysis = compiled.memory_analysis()
    residuals = jax.eval_shape(lambda *a: jax.tree.leaves(jax.vjp(fn, *a)[1]), *args)
    sizes = [int(np.prod(r.shape)) * r.dtype.itemsize for r in residuals]
    counts = Counter(_describe(r) for r in residuals)
    by_size = dict(
        sorted(counts.items(), key=lambda kv: -kv[1] * _nbytes(kv[0], residuals))
    )
    return GradientMemory(
        temp_bytes=int(analysis.temp_size_in_bytes),
        argument_bytes=int(analysis.argument_size_in_bytes),
        output_bytes=int(analysis.output_size_in_bytes),
        residual_bytes=int(sum(sizes)),
        residuals=by_size,
    )


def _nbytes(kind: str, residuals) -> int:
    for r in residuals:
        if _describe(r) == kind:
            return int(np.prod(r.shape)) * r.dtype.itemsize
    return 0
