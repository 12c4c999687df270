import os

# Under pytest-xdist each core already runs a worker: one XLA:CPU thread per worker keeps
# the workers from oversubscribing the cores (about 10 % less wall time on 2 cores). Read
# when JAX starts its CPU backend, so it is set before anything runs.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ["XLA_FLAGS"] = " ".join(filter(None, (
        os.environ.get("XLA_FLAGS"),
        "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")))

import jax
import jaxtyping
import pytest
from jaxtyping import install_import_hook

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_dtype_promotion", "strict")
jax.config.update("jax_numpy_rank_promotion", "raise")

# Runtime shape checking of netdyn's annotations.
with install_import_hook("netdyn", "beartype.beartype"):
    import netdyn  # noqa: F401


@pytest.fixture
def getkey():
    """Fresh, deterministic PRNG keys for one test."""
    state = {"key": jax.random.key(5678)}

    def _getkey():
        state["key"], sub = jax.random.split(state["key"])
        return sub

    return _getkey


@pytest.fixture
def no_type_hook(monkeypatch):
    """The library's own checks as a user meets them: the runtime type check of the
    annotations that the test suite adds (jaxtyping + beartype) would stop a value of the
    wrong type (a string, ``None``, a float for an int, a value outside a ``Literal``)
    before them."""
    monkeypatch.setattr(jaxtyping.config, "jaxtyping_disable", True)
