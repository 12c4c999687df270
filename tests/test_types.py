"""The short type aliases of ``_custom_types``: brief in ``help()``, still checked at run
time by jaxtyping + beartype (the import hook of ``conftest.py``)."""

import inspect
import pydoc

import equinox as eqx
import jax
import jax.numpy as jnp
import jaxtyping
import pytest

import netdyn as nd


@pytest.mark.parametrize("cls", [nd.ReducedWongWang, nd.ReducedWongWangExcInh, nd.Bold,
                                 nd.DelayGraph, nd.SparseDelayGraph, nd.RegionalDeviation])
def test_signatures_print_alias_names(cls):
    signature = str(inspect.signature(cls))
    assert "Union[" not in signature and "jaxlib" not in signature, signature
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    assert max(len(line) for line in text.splitlines()) < 600


def test_parameter_signature_reads_param():
    parameter = inspect.signature(nd.ReducedWongWang).parameters["a"]
    assert str(parameter) == "a: Param = 0.27"


@pytest.mark.parametrize("value", [0.3, [0.1, 0.2, 0.3], jnp.ones(3),
                                   nd.RegionalDeviation(0.3, jnp.zeros(3)),
                                   nd.MapParameter(0.3, jnp.ones((1, 3)))])
def test_param_accepts(value):
    assert nd.ReducedWongWang(I_o=value).I_o is value


@pytest.mark.parametrize("value", ["0.3", None, object(), jnp.array([1, 2])])
def test_param_is_still_checked(value):
    with pytest.raises(jaxtyping.TypeCheckError):
        nd.ReducedWongWang(I_o=value)


def test_scalar_and_arraylike_are_still_checked():
    with pytest.raises(jaxtyping.TypeCheckError):
        nd.RegionalDeviation(jnp.ones(2), jnp.zeros(2))
    with pytest.raises(jaxtyping.TypeCheckError):
        nd.DelayGraph("weights", "delays")
    with pytest.raises(jaxtyping.TypeCheckError):
        nd.ReducedWongWang().vector_field(jnp.ones(2), jnp.full((1, 3), 0.3), jnp.zeros((1, 3)))


def test_tree_at_and_grad_through_a_param():
    model = eqx.tree_at(lambda m: m.I_o, nd.ReducedWongWang(),
                        nd.RegionalDeviation(0.3, jnp.zeros(3)))
    assert isinstance(model.I_o, nd.RegionalDeviation)

    def drift(a):
        y = jnp.full((1, 3), 0.3)
        return jnp.sum(nd.ReducedWongWang(a=a).vector_field(0.0, y, jnp.zeros((1, 3))))

    eps = 1e-6
    assert jnp.isclose(jax.grad(drift)(0.27), (drift(0.27 + eps) - drift(0.27 - eps)) / (2 * eps),
                       rtol=1e-6)
