"""Checkpoint wrappers for the remat strategies."""

import functools

import jax


def checkpointer(save: tuple[str, ...] = ()):
    """``jax.checkpoint`` saving only the values tagged with the names in ``save``."""
    if save:
        policy = jax.checkpoint_policies.save_only_these_names(*save)
    else:
        policy = jax.checkpoint_policies.nothing_saveable
    return functools.partial(jax.checkpoint, policy=policy, prevent_cse=False)


def check_block(name: str, value) -> int:
    """Trace-time check of a block size: a positive integer."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer number of steps, got {value!r}.")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}.")
    return value


STAGES = ("recompute", "save")


def check_stages(name: str, value) -> str:
    """Trace-time check of a ``stages``: one of ``STAGES``."""
    if value not in STAGES:
        raise ValueError(f"{name} must be 'recompute' or 'save', got {value!r}.")
    return value


def check_unroll(name: str, value) -> int | None:
    """Trace-time check of an ``unroll``: a positive integer, or ``None`` (the default)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"{name} must be an integer number of steps per loop iteration (or None for "
            f"the default), got {value!r}."
        )
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}.")
    return value
