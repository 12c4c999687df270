"""A checkpoint written by an earlier netdyn still resumes: the file format and what
identifies a fit (names, shapes, transforms' names, key) outlive refactors of the code.

``fixtures/checkpoint_before_rooms.ckpt`` was written by netdyn at commit f100fbc (before
the fitting code was split into its rooms) by ``_fit(steps=3)`` below, with
``checkpoint=`` that file (its weights ``W`` then written ``jnp.arange(1, 4)``, the same
product). Resumed to 6 steps, the fit must equal an uninterrupted one.
"""

import shutil
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import netdyn as nd

FIXTURE = Path(__file__).parent / "fixtures" / "checkpoint_before_rooms.ckpt"


class Toy(eqx.Module):
    x: jax.Array
    y: float


C, W = jnp.array([0.3, 0.6, 0.95]), jnp.array([1.0, 2.0, 3.0])


def _loss(m, key):
    value = jnp.sum((m.x - C) ** 2 * W) + (m.y - 4.0) ** 2 + 0.3 * m.x[0] * m.y
    return value, {"yy": m.y}


def _fit(steps, **kw):
    # Bounded leaves, so that the transforms are part of the fit's identity.
    return nd.fit(Toy(jnp.array([0.2, 0.5, 0.9]), 2.0), _loss, optax.adam(0.05),
                  where=lambda m: (m.x, m.y), bounds=(nd.Interval(0.0, 1.0), nd.Positive()),
                  key=jax.random.key(1), steps=steps, **kw)


def test_a_checkpoint_of_an_earlier_version_resumes_bit_for_bit(tmp_path):
    path = tmp_path / "fit.ckpt"
    shutil.copy(FIXTURE, path)
    assert nd.saved_steps(path) == (3, 3)
    resumed, history = _fit(6, checkpoint=nd.Checkpoint(path, resume=True))
    whole, expected = _fit(6)
    assert np.array_equal(resumed.x, whole.x) and float(resumed.y) == float(whole.y)
    assert np.array_equal(history.loss, expected.loss)
    for name in ("x", "y"):
        assert np.array_equal(history.params[name], expected.params[name])
    assert nd.saved_steps(path) == (6, 6)
