"""``nd.Chained``: a simulated loss whose runs continue from where the previous
evaluation's ended (persistent chains), so that a fit pays the long burn-in once."""

import dataclasses
from typing import Any, ClassVar

import equinox as eqx
from jaxtyping import Array, Float

from .._custom_types import Key
from .._solution import SimulationState
from .._validate import number
from ._base import AbstractChainedLoss, Metrics
from ._runs import burn_in_length, burnt_in, frozen, measured_run, over_realisations
from .fc_loss import FcLoss


class Chained(AbstractChainedLoss):
    r"""``loss`` (an ``nd.FcLoss``) evaluated along persistent chains: in ``nd.fit``, each
    step's runs start from the end states of the previous step's runs (one chain per
    realisation) after a short ``burn_in``, instead of from the initial state after the
    loss's full burn-in.

    ``nd.fit(net, nd.Chained(loss, burn_in=14_400.0), ...)``. Before the first step the
    fit runs ``loss``'s full burn-in once (``start``, forward only); at every step
    (``continue_from``) each realisation simulates ``burn_in`` ms from its chain's state
    with the step's noise key, then the measured run of ``loss.duration`` ms, and the
    run's end state becomes the chain's state for the next step (kept in the fit's state
    and its checkpoint; a step whose loss or gradient is not finite leaves the chains
    where they were). Per step, ``burn_in + duration`` ms are simulated instead of
    ``loss.burn_in + duration``. The runs continue each chain's noise stream, so even with
    ``nd.fit``'s fixed key (no ``redraw``) every step sees new noise.

    **What the gradient leaves out.** It flows through this step's ``burn_in`` and run
    (with ``loss.burn_in_gradient``), not into the chain's state: the chain's start,
    drawn near the stationary state of the previous step's parameters, is held fixed.
    The exact gradient of the stationary objective also contains how the parameters move
    that state, which fades with the system's memory against ``burn_in``; the loss's own
    gradient, through its full burn-in from the initial state, keeps it. Near a
    bifurcation memory is long (see ``nd.FcLoss``, ``burn_in_gradient``): check the
    chained gradient against the loss's own (``nd.check_gradient`` on both, along the
    fit's directions) before relying on a short ``burn_in``.

    Outside a fit, ``Chained(loss, ...)(model, key)`` is ``loss(model, key)``: the
    statistics (``nd.uncertainty``, held-out scores) see the loss itself.

    **Arguments**: ``loss``: an ``nd.FcLoss``; ``burn_in``: ms simulated from each
    chain's state before the measured run at every step (>= 0, rounded up to whole
    monitor periods).
    """

    stochastic: ClassVar[bool] = True
    loss: FcLoss
    burn_in: float = eqx.field(static=True)

    def __init__(self, loss: FcLoss, *, burn_in: float):
        if not isinstance(loss, FcLoss):
            raise ValueError(f"Chained loss must be an nd.FcLoss, got {type(loss).__name__}.")
        self.loss = loss
        self.burn_in = burn_in_length(loss, number("Chained burn_in", burn_in, low=0.0,
                                                  unit=" ms"))

    def __call__(self, model, key) -> tuple[Float[Array, ""], Metrics]:
        """``loss(model, key)``: one evaluation from the initial state."""
        return self.loss(model, key)

    def residuals(self, model, key) -> Float[Array, " pairs"]:
        """``loss.residuals``."""
        return self.loss.residuals(model, key)

    def curvature_loss(self) -> Any:
        """``loss.curvature_loss()``."""
        return self.loss.curvature_loss()

    def start(self, model, key: Key | None) -> SimulationState:
        """Each realisation's state after ``loss.burn_in`` ms from the initial state (noise
        as ``loss.signals``: ``fold_in(key, b)``), stacked on a leading axis: the chains'
        first states. Forward only."""
        loss = self.loss
        network = frozen(loss.prepared(model, key))
        burn_in = loss.burn_in_simulated

        def run(k):
            return dataclasses.replace(burnt_in(loss, network, k, None, burn_in), t=None)

        return frozen(over_realisations(loss.realisations, run, key))

    def continue_from(self, model, key: Key | None, carry: SimulationState
                      ) -> tuple[Float[Array, ""], Metrics, SimulationState]:
        """``(value, metrics, next carry)``: the loss of the runs that start from the
        chains' states ``carry`` (as ``start`` returns them) after ``burn_in`` ms with noise
        ``key``; the next carry, their end states, carries no gradient."""
        loss = self.loss
        network = loss.prepared(model, key)
        # Every chain has run the same steps: one step count for all, outside the vmap
        # over realisations. Batched, it would turn the loop's conditionals on it (the
        # CPU loop's ``materialise``, a monitor's ``advance``) into selects of both
        # branches: the continued runs measured 2.5x slower than fresh ones.
        step = carry.step.reshape(-1)[0]

        def run(k, s):
            return measured_run(loss, network, k, dataclasses.replace(s, step=step),
                                self.burn_in)

        x, ends = over_realisations(loss.realisations, run, key, frozen(carry))
        value, metrics, _ = loss.score(x)
        return value, metrics, frozen(ends)
