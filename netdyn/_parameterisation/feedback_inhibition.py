"""Feedback inhibition control: regional inhibitory weights that balance excitation."""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._dynamics.reduced_wong_wang_exc_inh import ReducedWongWangExcInh
from .._functions import z_over_one_minus_exp
from ._base import AbstractNetworkParameterisation

# Bisection halves the bracket each time: 80 halvings take a bracket of width 60 below
# float64's resolution; float32 stops changing after about 30.
_BISECTIONS = 80


def _increasing_root(f, lo, hi):
    r"""The root of the elementwise increasing ``f`` in ``[lo, hi]`` by bisection, with
    derivatives by the implicit function theorem (``jax.lax.custom_root``):
    $\partial x^* = -\partial f / f'(x^*)$, so no derivative passes through the loop."""

    def solve(f, guess):
        def halve(_, bracket):
            a, b = bracket
            mid = 0.5 * (a + b)
            above = f(mid) > 0
            return jnp.where(above, a, mid), jnp.where(above, mid, b)

        a, b = jax.lax.fori_loop(0, _BISECTIONS, halve, (lo, hi))
        return 0.5 * (a + b)

    def tangent_solve(g, y):
        return y / g(jnp.ones_like(y))  # g is diagonal: elementwise f'(x*) times its input

    return jax.lax.custom_root(f, lo, solve, tangent_solve)


def steady_coupling_input(network, x: Float[Array, "k nodes"]) -> Float[Array, "inputs nodes"]:
    """The coupling input every node receives when the coupled variables hold the constant
    values ``x`` (delays then change nothing): the sum over the network's couplings of
    ``post(sum_j W_ij pre(x_i, x_j))``."""
    graph = network.graph
    total = 0.0
    for c in network.couplings:
        v = c.pre(graph.target_values(x), graph.source_values(x))
        total = total + c.post(graph.weighted_sum(v))
    return total


class FeedbackInhibition(AbstractNetworkParameterisation):
    r"""Feedback inhibition control (FIC) of a ``ReducedWongWangExcInh`` network: each region's
    inhibitory weight $J_i$ set so that, at the network's balanced steady state, its
    excitatory population fires at ``target_rate`` (Hz).

    Deco et al. (2014) tuned $J_i$ region by region in simulations until every rate was
    about 3 Hz; here the balanced state is solved directly (as in the mean-field
    derivations of Demirtas et al. 2019 and Herzog et al. 2022). With rate $r^*$, every
    region's
    $$ S_E^* = \frac{\gamma_E \tau_E r^*}{1 + \gamma_E \tau_E r^*}, \qquad
       x_E^* = H_E^{-1}(r^*), \qquad c_i^* = \text{the coupling input at } S_E \equiv S_E^*, $$
    $S_{I,i}^*$ the root of $S_I = \tau_I \gamma_I H_I(J_N S_E^* - S_I + W_I I_o + \lambda G
    J_N c_i^*)$, and
    $$ J_{i} = \frac{w_p J_N S_E^* + W_E I_o + G J_N c_i^* + I_{ext} - x_E^*}{S_{I,i}^*}. $$

    Put it in the model's ``J_i`` (``nd.ReducedWongWangExcInh(J_i=nd.FeedbackInhibition())``):
    every simulation then recomputes $J_i$ from the current parameters, and gradients
    pass through it (implicit differentiation of the two root solves), so a fit of $G$ or
    of regional maps keeps every region balanced. A region whose excitation is too weak to
    reach ``target_rate`` even without inhibition would need $J_i < 0$: a runtime error
    (``eqx.error_if``) says so. The margin is small with TVB's defaults: at $G = 0.5$ on
    the embedded HCP connectome, lowering $I_o$ by about 0.04 nA (10 %) in a weakly
    connected region gets there, so keep maps of $I_o$ within a few per cent.

    **Arguments**: ``target_rate`` (Hz, default 3).

    **References**: Deco, Ponce-Alvarez, Hagmann, Romani, Mantini, Corbetta (2014), J.
    Neurosci. 34(23):7886-7898; Demirtas et al. (2019), Neuron 101(6):1181-1194; Herzog,
    Pedreschi, Mediano et al. (2022), bioRxiv 2022.03.26 (fast feedback inhibition
    control).
    """

    target_rate: float = 3.0

    def value(self, network) -> Float[Array, " nodes"]:
        m = network.dynamics
        if not isinstance(m, ReducedWongWangExcInh):
            raise ValueError("FeedbackInhibition sets J_i of a ReducedWongWangExcInh model, got "
                             f"{type(m).__name__}.")
        if m.coupled_variables != ("S_e",):
            raise ValueError("FeedbackInhibition needs the coupling built from S_e only "
                             f"(coupled_variables=('S_e',)), got {m.coupled_variables}.")
        rate = jnp.asarray(self.target_rate, dtype=float)
        n = network.graph.n_nodes
        gamma_tau = m.gamma_e * m.tau_e * rate
        s_e = gamma_tau / (1.0 + gamma_tau)
        # H_E(x) = g(d (a x - b)) / d with g(z) = z / (1 - e^-z) increasing, g <= z + 1.
        y = m.d_e * rate
        z = _increasing_root(lambda z: z_over_one_minus_exp(z) - y, y - 61.0, y + 1.0)
        x_e = (z / m.d_e + m.b_e) / m.a_e
        c = steady_coupling_input(network, jnp.broadcast_to(s_e, (1, n)))[0]
        long_range = m.G * m.J_N * c
        drive_i = m.J_N * s_e + m.W_i * m.I_o + m.lamda * long_range
        # S_I = tau_I gamma_I H_I(drive - S_I): the right side falls as S_I grows.
        def balance(s_i):
            return s_i - m.tau_i * m.gamma_i * m.rate_i(drive_i - s_i)

        top = m.tau_i * m.gamma_i * m.rate_i(drive_i) * jnp.ones(n)
        s_i = _increasing_root(balance, jnp.zeros(n), top)
        excitation = m.w_p * m.J_N * s_e + m.W_e * m.I_o + long_range + m.I_ext
        J_i = (excitation - x_e) / s_i
        return eqx.error_if(
            J_i, jnp.any(J_i < 0),
            "FeedbackInhibition: some region's excitatory input is too weak to reach the "
            "target rate even without inhibition (its J_i would be negative); raise I_o, "
            "G or w_p there, or lower target_rate.")
