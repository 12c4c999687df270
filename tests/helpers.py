"""Shared test helpers: parametrisation lists over the library's families, and
``tree_allclose``."""

import jax
import numpy as np

import netdyn as nd


def tree_allclose(a, b, *, rtol: float, atol: float) -> None:
    """Assert two PyTrees have one structure and leaves equal within ``rtol``/``atol``
    (``np.testing.assert_allclose`` leaf by leaf, shapes and dtypes included)."""
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape, x.dtype, y.dtype)
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)

ALL_DYNAMICS = [
    nd.ReducedWongWang(),
    nd.Generic2dOscillator(),
    nd.SupHopf(),
    nd.JansenRit(),
    nd.MontbrioPazoRoxin(),
    nd.Kuramoto(),
    nd.ReducedWongWangExcInh(),
    nd.LinearDynamics(),
    nd.WilsonCowan(),
    nd.LarterBreakspear(),
    nd.CoombesByrne2D(),
    # x1 and x2 start on their thresholds (0, -0.25): states drawn around the initial
    # state then reach the branches that slope and aa act on.
    nd.Epileptor(initial_x1=0.0, initial_x2=0.0),
    nd.Lorenz(),
]
"""One default instance of every dynamics."""

ALL_COUPLINGS = [
    nd.Linear(G=0.7, b=0.05),
    nd.DelayedLinear(G=0.7, b=0.05),
    nd.Difference(G=0.6),
    nd.DelayedDifference(G=0.6),
    nd.Sigmoidal(cmin=-0.5, cmax=1.5, midpoint=0.3, a=1.2, sigma=0.7),
    nd.DelayedSigmoidal(cmin=-0.5, cmax=1.5, midpoint=0.3, a=1.2, sigma=0.7),
    nd.SigmoidalJansenRit(G=0.8, cmin=0.1, cmax=1.1, midpoint=0.2, r=1.3),
    nd.DelayedSigmoidalJansenRit(G=0.8, cmin=0.1, cmax=1.1, midpoint=0.2, r=1.3),
    nd.KuramotoSine(G=0.9),
    nd.DelayedKuramotoSine(G=0.9),
    nd.HyperbolicTangent(G=0.4, b=1.2, midpoint=0.3, sigma=0.7),
    nd.DelayedHyperbolicTangent(G=0.4, b=1.2, midpoint=0.3, sigma=0.7),
]
"""Every coupling (instantaneous and delayed, nearest interpolation), with parameters that
make each term matter for states of order 1. Every coupling maps ``k`` coupled variables to
``k`` coupling inputs, except the Jansen-Rit ones, which need exactly 2 coupled variables
``(y1, y2)`` and give 1 input."""

ALL_REMATS = [
    ("NoRemat", lambda unroll: nd.NoRemat(unroll=unroll)),
    ("Uniform(7)", lambda unroll: nd.Uniform(7, unroll=unroll)),
    ("Uniform(250)", lambda unroll: nd.Uniform(250, unroll=unroll)),
    ("Nested(5,25,200)", lambda unroll: nd.Nested(5, 25, 200, unroll=unroll)),
    ("MultiLevel(3)", lambda unroll: nd.MultiLevel(3, unroll=unroll)),
    ("Policy(coupling)", lambda unroll: nd.Policy(("coupling",), unroll=unroll)),
    ("Policy(state,history,monitor)",
     lambda unroll: nd.Policy(("state", "history", "monitor"), block=30, unroll=unroll)),
    ("Auto", lambda unroll: nd.Auto(max_bytes=10**9, unroll=unroll)),
]
"""``(name, make)`` for every remat strategy, ``make(unroll)`` building it with that
``unroll`` (keyword-only on every strategy): block sizes that divide neither a monitor
period nor the run, and nested levels, so that unrolled scans meet remainders."""
