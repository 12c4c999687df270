"""``fit_optimizer``: Adam with a cosine-decayed learning rate, per-leaf step scales and
``backtrack``, the optimizer of ``netdyn fit``; ``scale_updates``, the per-leaf scales."""

import functools

import jax
import optax

from .backtrack import backtrack


def scale_updates(scales: tuple[float, ...]) -> optax.GradientTransformation:
    """Multiply the update of leaf ``i`` (in ``jax.tree.leaves`` order) by ``scales[i]``:
    after Adam, which moves every leaf by about its learning rate per step, a leaf's share
    of the learning rate."""

    def update(updates, state, params=None):
        leaves, treedef = jax.tree.flatten(updates)
        if len(leaves) != len(scales):
            raise ValueError(f"scale_updates: {len(scales)} scales for {len(leaves)} leaves.")
        return jax.tree.unflatten(treedef, [u * s for u, s in zip(leaves, scales)]), state

    return optax.GradientTransformation(lambda params: optax.EmptyState(), update)


@functools.cache
def fit_optimizer(lr: float, steps: int, redraw: bool = False,
                  scales: tuple[float, ...] | None = None) -> optax.GradientTransformation:
    r"""Adam (Kingma & Ba 2015) with the learning rate cosine-decayed from ``lr`` to
    ``lr / 10`` over ``steps``,

    $$\eta_t = \eta \left(0.1 + 0.9 \cdot \tfrac12 \left(1 + \cos \frac{\pi t}{T}\right)\right),
      \quad t \le T,$$

    each leaf's update times ``scales[i]`` (``scale_updates``; ``None``: all 1), and, with
    one fixed noise key (``redraw=False``, as ``nd.fit``'s ``redraw``), wrapped in
    ``backtrack``: a step that raises the loss is taken back and retried at half the
    length. With new noise every step (``redraw=True``), the losses of consecutive steps
    are not comparable, and no step is taken back. The optimizer of ``netdyn fit``.

    Full steps while far from the optimum, then small ones, so that Adam's momentum
    settles instead of overshooting a steep FC-r landscape; taking back the steps that
    raise the loss keeps a fit of G in the band of good values
    (``benchmarks/fit_rww.md``). One instance per set of arguments (cached): repeated
    fits in one process reuse their compiled step.
    """
    inner = optax.adam(optax.cosine_decay_schedule(lr, steps, alpha=0.1))
    if scales is not None:
        inner = optax.chain(inner, scale_updates(scales))
    return inner if redraw else backtrack(inner)
