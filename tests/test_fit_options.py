"""``fit_multistart`` takes ``fit``'s loop options as keywords: the same names and checks,
and Python's own ``TypeError`` for a keyword that is not one of them."""

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
import pytest

import netdyn as nd


class Toy(eqx.Module):
    y: jax.Array


def _loss(m, key):
    return (m.y - 3.0) ** 2


def _multistart(**kw):
    return nd.fit_multistart(Toy(jnp.asarray(0.0)), _loss, optax.sgd(0.1),
                             where=lambda m: m.y, starts=jnp.array([0.0, 1.0]), **kw)


def test_options_are_checked_as_in_fit(no_type_hook):
    with pytest.raises(TypeError, match=r"fit_multistart\(\) got an unexpected keyword "
                                        r"argument 'keep'"):
        _multistart(steps=2, keep="best")
    with pytest.raises(TypeError, match=r"fit_multistart\(\) missing .* 'steps'"):
        _multistart()
    with pytest.raises(ValueError, match="Checkpoint every must be an integer >= 1"):
        _multistart(steps=2, checkpoint=nd.Checkpoint("c.eqx", every=0))
    with pytest.raises(ValueError, match="checkpoint must be an nd.Checkpoint, a file path"):
        _multistart(steps=2, checkpoint=3)
    with pytest.raises(ValueError, match="Checkpoint resume must be True or False"):
        nd.Checkpoint("c.eqx", resume="yes")
    with pytest.raises(ValueError, match="devices must not be empty"):
        _multistart(steps=2, devices=[])


def test_options_reach_the_loop():
    rows = []
    _, h = _multistart(steps=3, bounds=nd.Interval(-1.0, 2.0), callback=rows.append)
    assert [r["step"] for r in rows] == [0, 1, 2]
    assert h.params["y"].shape == (3, 2) and (h.params["y"] < 2.0).all()
