"""Small linear dynamics, a test connectome and small RWW and Hopf networks shared by the
tests.

Linear node dynamics keep the NumPy references short and the trajectories bounded, so that
what a test sees is the coupling and the graph.
"""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np

import netdyn as nd

DT = 0.5


class AbstractRelax(nd.AbstractDynamics):
    """Two unbounded states ``u``, ``v`` relaxing to zero from rest; the subclasses differ
    in how many coupling inputs drive them."""

    state_names: ClassVar[tuple[str, ...]] = ("u", "v")
    state_bounds: ClassVar[dict] = {}

    def initial_state(self, n_nodes):
        return jnp.zeros((2, n_nodes))


class Relax2(AbstractRelax):
    """du/dt = -u + c_0, dv/dt = -3 v / 2 + c_1 (two coupling inputs)."""

    coupled_variables: tuple[str, ...] = eqx.field(default=("u", "v"), static=True)
    n_coupling_inputs: ClassVar[int] = 2

    def vector_field(self, t, y, c):
        return jnp.stack([-y[0] + c[0], -1.5 * y[1] + c[1]])


class Relax1(AbstractRelax):
    """du/dt = -u + c_0, dv/dt = -v / 2 (one coupling input, two coupled variables)."""

    coupled_variables: tuple[str, ...] = eqx.field(default=("u", "v"), static=True)
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t, y, c):
        return jnp.stack([-y[0] + c[0], -0.5 * y[1]])


class Integrator(nd.AbstractDynamics):
    """dx/dt = c_0."""

    coupled_variables: tuple[str, ...] = eqx.field(default=("x",), static=True)
    state_names: ClassVar[tuple[str, ...]] = ("x",)
    state_bounds: ClassVar[dict] = {}
    n_coupling_inputs: ClassVar[int] = 1

    def vector_field(self, t, y, c):
        return c

    def initial_state(self, n_nodes):
        return jnp.zeros((1, n_nodes))


def is_jansen_rit(c):
    return isinstance(c, (nd.SigmoidalJansenRit, nd.DelayedSigmoidalJansenRit))


def connectome(n=6, seed=3):
    """Asymmetric weights with zeros; delays (ms) mixing 0, whole and fractional steps."""
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.05, 0.35, (n, n)) * (rng.random((n, n)) < 0.65)
    weights[0, 1], weights[1, 0] = 0.9, 0.0  # surely asymmetric
    steps = rng.integers(0, 7, (n, n)) + rng.choice([0.0, 0.1, 0.3, 0.7, 0.9], (n, n))
    edges = np.argwhere(weights > 0)[:3]
    steps[edges[:, 0], edges[:, 1]] = 0.0
    steps[0, 1] = 0.0  # a zero delay on an edge
    steps[2, 0] = 3.0  # a whole number of steps
    steps[1, 2] = 4.3
    delays = steps * DT
    return weights, delays


def graph(kind, weights, delays=None):
    """The ``"dense"`` or ``"sparse"`` graph of ``weights``, with ``delays`` when given."""
    if kind == "dense":
        return nd.DenseGraph(weights) if delays is None else nd.DelayGraph(weights, delays)
    if delays is None:
        return nd.SparseGraph.from_dense(weights)
    return nd.SparseDelayGraph.from_dense(weights, delays)


def random_history(rows, n, seed=4):
    """Random past states ``[rows, 2, n]`` of two variables, oldest first."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (rows, 2, n))


def rww(n=6, seed=0, sigma=0.00283, G=0.5, *, density=0.7, max_length=40.0,
        self_loops=False):
    """A small delayed, noisy Reduced Wong-Wang network on a random directed graph with
    zeros: weights U(0, 1) on about ``density`` of the pairs (none on the diagonal unless
    ``self_loops``), tract lengths U(5, ``max_length``) mm at 4 mm/ms (``sigma=None``: no
    noise)."""
    rng = np.random.default_rng(seed)
    weights = rng.random((n, n)) * (rng.random((n, n)) < density)
    if not self_loops:
        np.fill_diagonal(weights, 0.0)
    lengths = rng.uniform(5.0, max_length, (n, n))
    return nd.Network(
        dynamics=nd.ReducedWongWang(w=0.5, I_o=0.32),
        coupling=nd.DelayedLinear(G=G),
        graph=nd.DelayGraph.from_lengths(weights, lengths, speed=4.0),
        noise=None if sigma is None else nd.AdditiveNoise(sigma=sigma),
    )


def hopf(n, seed, *, G, a, omega, sigma, max_delay):
    """Stuart-Landau nodes (``SupHopf(a, omega)``) with delayed diffusive coupling on a
    random dense directed graph without self-connections: weights U(0, 1)
    ``[target, source]``, delays U(1, ``max_delay``) ms, additive noise ``sigma``."""
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.0, 1.0, (n, n))
    np.fill_diagonal(weights, 0.0)
    delays = rng.uniform(1.0, max_delay, (n, n))
    return nd.Network(
        dynamics=nd.SupHopf(a=a, omega=omega),
        coupling=nd.DelayedDifference(G=G),
        graph=nd.DelayGraph(weights, delays),
        noise=nd.AdditiveNoise(sigma=sigma),
    )


REMAT_NODES = 8


def remat_network():
    """The network the remat tests share: ``REMAT_NODES`` Reduced Wong-Wang nodes with
    self-loops, delays up to 15 ms at dt = 1 ms, G = 0.6."""
    return rww(REMAT_NODES, seed=7, G=0.6, density=0.6, max_length=60.0, self_loops=True)
