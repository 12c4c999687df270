r"""The analytic FC of a network at a stable fixed point: linearised network and BOLD,
stationary covariance by the Lyapunov equation."""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._monitor._base import AbstractMonitor
from .._monitor.bold import Bold
from .._monitor.raw import Raw
from .._monitor.temporal_average import TemporalAverage
from .._names import suggested_variable
from .._network import Network
from .._observation._stats import correlation_of_covariance
from .._parameterisation._base import resolve_parameters
from .fixed_point import Drift, fixed_point
from .lyapunov import (
    Method,
    block_lyapunov_residual,
    converged,
    lyapunov_residual,
    solve_block_lyapunov,
    solve_lyapunov,
)
from .stability import spectral_abscissa

MS_PER_S = 1000.0  # the Balloon's constants are per second, the networks' per ms


class LinearFc(eqx.Module):
    r"""What ``nd.linear_fc`` computed.

    - ``fc``: the analytic FC ``[nodes, nodes]`` of the monitored signal.
    - ``covariance``: the signal's stationary covariance ``[nodes, nodes]`` (its units
      squared; proportional to the noise variance).
    - ``fixed_point``: the state $y^*$ ``[states, nodes]`` the network was linearised at.
    - ``abscissa``: the spectral abscissa $\max \operatorname{Re} \lambda(A_n)$ of the
      neural Jacobian, per ms: negative when $y^*$ is stable; $-1/\text{abscissa}$ is the
      slowest mode's time constant (ms). Near 0 the linear picture fails (variances grow
      without the bound that the nonlinearity sets).
    - ``residual``: $\max_i |F_i(y^*)|$, the drift left at the fixed point (per ms).
    - ``lyapunov_residual``: the Lyapunov equation's residual $\|A S + S A^\top + Q\|$
      relative to the size of its terms (largest over the blocks): about the rounding
      error when the solve succeeded.
    - ``jacobian``: the neural Jacobian $A_n$ ``[states * nodes, states * nodes]``
      (state-major order: row ``s * nodes + i`` is state ``s`` of node ``i``).
    """

    fc: Float[Array, "nodes nodes"]
    covariance: Float[Array, "nodes nodes"]
    fixed_point: Float[Array, "states nodes"]
    abscissa: Float[Array, ""]
    residual: Float[Array, ""]
    lyapunov_residual: Float[Array, ""]
    jacobian: Float[Array, "n n"]


def _monitored_row(monitor: AbstractMonitor, network: Network) -> int:
    names = network.dynamics.state_names

    def suggest(name):  # one of the model's own names, for the messages
        return (suggested_variable(name, network.dynamics),)

    kind = type(monitor).__name__
    if not isinstance(monitor, (Bold, Raw, TemporalAverage)):
        raise ValueError(
            f"linear_fc: monitor must be nd.Bold, nd.Raw or nd.TemporalAverage, got {kind} "
            "(nd.HrfBold: use nd.Bold, whose Balloon-Windkessel model linearises exactly).")
    variables = monitor.variables if monitor.variables is not None else names
    if len(variables) != 1:
        raise ValueError(
            f"linear_fc: the {kind} monitor must watch exactly one state variable, got "
            f"{tuple(variables)}; pass e.g. variables={suggest(None)!r} "
            f"(the model's state variables are {names}).")
    if variables[0] not in names:
        raise ValueError(f"linear_fc: the {kind} monitor watches {variables[0]!r}, which is "
                         f"not a state variable of the model ({names}); did you mean "
                         f"variables={suggest(variables[0])!r}?")
    return names.index(variables[0])


def _check_network(network: Network) -> None:
    if not isinstance(network, Network):
        raise ValueError(f"linear_fc: network must be an nd.Network, got {type(network).__name__}.")
    if network.noise is None:
        raise ValueError("linear_fc: the network has no noise (noise=None): its stationary "
                         "covariance is zero and FC undefined; give it e.g. nd.AdditiveNoise.")
    if network.stimuli:
        raise ValueError("linear_fc: the network has a stimulus; the analytic FC is that of "
                         "the stationary, unstimulated network (stimulus=None).")


def _noise_covariance(network: Network, y: Float[Array, "states nodes"]) -> Float[Array, " n"]:
    """The diagonal of $Q = g(y^*) g(y^*)^\\top$ on the flattened state (the noise of
    ``nd.simulate``: independent increments per row and node, variance per ms)."""
    noise = network.noise
    rows = noise.rows(network.dynamics.state_names)
    idx = jnp.asarray(rows)
    g = noise.diffusion(y[idx])
    q = jnp.zeros_like(y).at[idx].set(g * g)
    return q.reshape(-1)


def _balloon_blocks(bold: Bold, x: Float[Array, " nodes"]):
    """Per node $i$: the Balloon's Jacobian $H_i$ (4x4, per ms) at its fixed point for the
    steady drive, the input column $k_i$ (``d(ds/dt)/dx``, per ms) and the BOLD signal's
    gradient $c_i$ (4)."""
    z, z_dot = jax.jvp(bold.neural_input, (x,), (jnp.ones_like(x),))
    h = bold.fixed_point(z).astype(x.dtype)
    eye = jnp.eye(4, dtype=x.dtype)

    def along(e):
        tangent = jnp.broadcast_to(e[:, None], h.shape)
        dh = jax.jvp(lambda u: bold.vector_field(u, z), (h,), (tangent,))[1]
        dsignal = jax.jvp(bold.signal, (h,), (tangent,))[1]
        return dh, dsignal

    dh, dsignal = jax.vmap(along)(eye)  # [4 (column), 4 (row), nodes], [4, nodes]
    blocks = jnp.transpose(dh, (2, 1, 0)) / MS_PER_S  # [nodes, row, column]
    dz = jax.jvp(lambda u: bold.vector_field(h, u), (z,), (jnp.ones_like(z),))[1]
    k = (dz * z_dot[None]).T / MS_PER_S  # [nodes, 4]
    return blocks, k, dsignal.T


def _float_dtype(network: Network):
    leaves = [x for x in jax.tree.leaves(network) if eqx.is_inexact_array(x)]
    return jnp.result_type(*leaves) if leaves else jnp.result_type(float)


def analytic_fc(network: Network, monitor: AbstractMonitor, *, initial=None,
                method: Method = "eig") -> LinearFc:
    """``linear_fc`` without its runtime checks (the losses apply their own barrier),
    compiled as one program (run op by op, the fixed point, Jacobian and Lyapunov solves
    of 80 regions take seconds instead of milliseconds)."""
    return _compiled_analytic_fc(network, monitor, initial, method)


@eqx.filter_jit
def _compiled_analytic_fc(network: Network, monitor: AbstractMonitor, initial,
                          method: Method) -> LinearFc:
    _check_network(network)
    row = _monitored_row(monitor, network)
    network = resolve_parameters(network)
    drift = Drift(network)
    s, n = drift.shape
    y0 = network.dynamics.initial_state(n) if initial is None else jnp.asarray(initial)
    if y0.shape != (s, n):
        raise ValueError(f"linear_fc: initial must have shape (states, nodes) = {(s, n)}, "
                         f"got {y0.shape}.")
    y = fixed_point(drift, y0.reshape(-1).astype(_float_dtype(network)))
    a_n = jax.jacfwd(drift)(y)
    q_n = jnp.diag(_noise_covariance(network, y.reshape(s, n)))
    state = y.reshape(s, n)
    if isinstance(monitor, Bold):
        blocks, k_nodes, c = _balloon_blocks(monitor, state[row])
        k = jnp.zeros((n, 4, s * n), y.dtype).at[jnp.arange(n), :, row * n + jnp.arange(n)].set(
            k_nodes).reshape(4 * n, s * n)
        cov = solve_block_lyapunov(a_n, k, blocks, q_n, method)
        covariance = jnp.einsum("ia,iajb,jb->ij", c, cov.hh.reshape(n, 4, n, 4), c)
        residual = block_lyapunov_residual(a_n, k, blocks, q_n, cov)
    else:
        full = solve_lyapunov(a_n, q_n, method)
        covariance = full[row * n:(row + 1) * n, row * n:(row + 1) * n]
        residual = lyapunov_residual(a_n, q_n, full)
    covariance = 0.5 * (covariance + covariance.T)
    return LinearFc(fc=correlation_of_covariance(covariance), covariance=covariance,
                    fixed_point=state, abscissa=spectral_abscissa(a_n),
                    residual=jnp.max(jnp.abs(drift(y))), lyapunov_residual=residual,
                    jacobian=a_n)


def solved(result: LinearFc) -> tuple[Array, Array]:
    """Whether the fixed point was found and whether the Lyapunov solve succeeded (both
    judged against the rounding error of the result's dtype)."""
    eps = jnp.finfo(result.fc.dtype).eps
    scale = 1.0 + jnp.max(jnp.abs(result.fixed_point))
    found = result.residual <= 1e-3 * jnp.sqrt(eps) * scale
    return found, converged(result.lyapunov_residual)


def linear_fc(network: Network, monitor: AbstractMonitor, *, initial=None,
              method: Method = "eig") -> LinearFc:
    r"""The analytic (linear-noise) FC of ``network`` as ``monitor`` would record it.

    Near a stable fixed point $y^*$ with small noise, the network is the linear SDE
    $du = A u\,dt + B\,dW$; the stationary covariance $S$ of its states solves the
    Lyapunov equation $A S + S A^\top + B B^\top = 0$, and the FC is the correlation of
    the monitored signal's covariance. Steps:

    1. parameterisations resolved as ``nd.simulate`` resolves them (``nd.MapParameter``,
       ``nd.FeedbackInhibition``, ...);
    2. the fixed point $y^*$ of the delay-free drift that the flow from ``initial``
       (default: the model's initial state) relaxes to, with implicit derivatives;
    3. $A_n = \partial F / \partial y$ at $y^*$ (automatic differentiation of the model's
       own vector field and couplings), $B B^\top = \operatorname{diag} g(y^*)^2$ from the
       network's noise (per ms, as ``nd.simulate``'s increments);
    4. for ``nd.Bold``: each region's Balloon-Windkessel model linearised at its own fixed
       point for the steady drive $z^* = \lambda (x^* - x_0)$ (per second, divided by
       1000), driven by the monitored variable's deviation, and the BOLD signal
       linearised there; the joint covariance by ``block_lyapunov`` (neural block, then
       each region's 4x4 hemodynamic block). For ``nd.Raw`` / ``nd.TemporalAverage`` of
       one state variable: that variable's block of the neural covariance (the average
       over a period, short against the covariance's time scales, is neglected).

    A uniform noise amplitude cancels in a correlation: in this approximation FC does
    not depend on ``sigma`` (only on ratios between noise amplitudes), so FC alone cannot
    identify it here. **Delays are ignored**: measured against simulations
    (``benchmarks/linear_fc.md``, two-population Wong-Wang with feedback inhibition on
    the embedded connectome), the simulated FCs with and without delays correlate 1.000
    at G = 0.45, while near the instability (G = 0.53) delays change the simulated mean FC
    (0.52 with, 0.40 without). The same benchmark measures where the linear picture holds:
    there, the analytic FC agrees with 30 minutes of simulated BOLD as closely as the
    simulation's sampling noise allows, and its level within 0.01 while the slowest mode
    decays within about 1 s. Sampling at the TR does not change a stationary covariance.

    **Arguments**: ``network`` (an ``nd.Network`` with noise and no stimulus),
    ``monitor`` (``nd.Bold``, ``nd.Raw`` or ``nd.TemporalAverage`` watching one
    variable), ``initial`` (``[states, nodes]``, where the search of the fixed point
    starts: the stable fixed point the flow from there relaxes to is used; with
    ``nd.FeedbackInhibition``, if the balanced state is unstable that is another state,
    whose rates are not the target's: check ``fixed_point``), ``method`` (``"eig"``:
    eigendecompositions, fast on a CPU; ``"doubling"``: matrix products only, for
    accelerators and for Jacobians that cannot be diagonalised; see ``nd.lyapunov``).

    **Returns** a ``LinearFc`` (``fc``, ``covariance``, ``fixed_point``, ``abscissa``,
    ``residual``, ``lyapunov_residual``, ``jacobian``). Differentiable to every order
    (reverse and forward mode) through the fixed point, the Jacobian and the Lyapunov
    solves (whose own derivatives are further solves), except the stability check's
    abscissa, whose second derivatives are approximate.

    **Raises**: ``ValueError`` at trace time for a network without noise or with a
    stimulus, a monitor of another kind or watching other than one variable, an
    ``initial`` of the wrong shape; at run time (``eqx.error_if``) when the fixed point
    was not found or is not stable (abscissa >= 0): no stationary FC exists there; or when
    the Lyapunov solve failed (a relative residual above the square root of the dtype's
    machine epsilon).

    **References**: Gardiner, *Stochastic Methods* (4th ed., 2009), sec. 4.5.6 (the
    Ornstein-Uhlenbeck process's stationary covariance); Demirtas et al. (2019), Neuron
    101(6):1181-1194 (the same linearisation with the Balloon model, fitted without
    gradients); Friston et al. (2000), NeuroImage 12:466-477 (the Balloon model).
    """
    result = analytic_fc(network, monitor, initial=initial, method=method)
    found, exact = solved(result)
    fc = eqx.error_if(result.fc, ~found,
                      "linear_fc: the fixed point was not found (the drift left there exceeds "
                      "the tolerance); pass initial= closer to the state of interest.")
    fc = eqx.error_if(fc, ~(result.abscissa < 0),
                      "linear_fc: the fixed point is not stable (an eigenvalue of the Jacobian "
                      "has a real part >= 0): the network has no stationary fluctuations around "
                      "it; lower the coupling or move the parameters into the stable range.")
    fc = eqx.error_if(fc, ~exact,
                      "linear_fc: the Lyapunov solve did not converge (its residual is large): "
                      "the Jacobian is probably not diagonalisable (e.g. a feed-forward chain "
                      "of identical nodes); pass method='doubling'.")
    return eqx.tree_at(lambda r: r.fc, result, fc)
