"""The loss contract: what ``nd.fit`` and the statistics (``nd.uncertainty``,
``nd.identifiability``, ``nd.local_profile``, ``nd.check_gradient``) ask of a loss."""

import abc
import dataclasses
from typing import Any

import equinox as eqx
import jax.numpy as jnp
import optax
from jaxtyping import Array, Float

from .._observation._stats import upper_triangle
from .._observation.summary import fc_summary

Metrics = dict[str, Float[Array, ""]]


class AbstractLoss(eqx.Module):
    r"""A loss of a model: ``loss(model, key) -> (value, metrics)``.

    Any callable of that shape works with ``nd.fit``; an ``AbstractLoss`` also tells the
    statistics what they need without their knowing its class:

    - ``stochastic`` (class variable): whether the value depends on the noise ``key``
      (a simulated loss) or not (an analytic one, which ignores ``key``). A deterministic
      loss has no noise part in its error bars.
    - ``residuals(model, key)``: the model's side of the comparison with data as one
      vector (for an FC loss, the FC's upper triangle): ``nd.identifiability`` takes its
      Gauss-Newton information $J^\top J$ from it.
    - ``curvature_loss()``: the loss whose curvature ``nd.uncertainty`` and
      ``nd.local_profile`` take (same minimiser; e.g. a root mean square squared).
    """

    stochastic: eqx.AbstractClassVar[bool]

    @abc.abstractmethod
    def __call__(self, model, key) -> tuple[Float[Array, ""], Metrics]:
        """``(value, metrics)`` of ``model`` with noise ``key``."""

    @abc.abstractmethod
    def residuals(self, model, key) -> Float[Array, " residuals"]:
        """The model's side of the comparison, one vector."""

    @abc.abstractmethod
    def curvature_loss(self) -> Any:
        """The loss (same minimiser) whose Hessian the error bars use."""


class _Squared(eqx.Module):
    """A loss squared: an rmse's mean square (same minimiser, smooth curvature)."""

    loss: AbstractLoss

    def __call__(self, model, key):
        value, metrics = self.loss(model, key)
        return value * value, metrics


class AbstractChainedLoss(AbstractLoss):
    r"""A loss that ``nd.fit`` evaluates along persistent chains: it carries a state (the
    *carry*) from one step to the next, e.g. the end states of simulated runs from which
    the next step's runs continue (``nd.Chained``).

    - ``start(model, key)``: the carry before the first step (no gradient flows into it).
    - ``continue_from(model, key, carry)``: ``(value, metrics, next carry)``; the fit
      differentiates the value with respect to the model, the carry held fixed, and keeps
      the next carry only from a step whose loss and gradient are finite.
    - Called as a plain loss, ``(model, key) -> (value, metrics)``, it is evaluated
      without a carry (the statistics use that).
    """

    @abc.abstractmethod
    def start(self, model, key) -> Any:
        """The carry before the first step."""

    @abc.abstractmethod
    def continue_from(self, model, key, carry) -> tuple[Float[Array, ""], Metrics, Any]:
        """``(value, metrics, next carry)`` of ``model`` with noise ``key`` from ``carry``."""


class AbstractFcLoss(AbstractLoss):
    r"""A loss comparing a model's FC $F$ with a target FC $F^*$ (``nd.FcLoss``: the FC of
    simulated signals; ``nd.LinearFcLoss``: the analytic FC). Over the upper triangles
    ($i < j$):

    $$ e = \sqrt{\operatorname{mean}_{i<j}(F_{ij} - F^{*}_{ij})^2}, \quad
       r = \operatorname{corr}_{i<j}(F_{ij}, F^{*}_{ij}), \quad
       \Delta = \operatorname{mean}_{i<j} F_{ij} - \operatorname{mean}_{i<j} F^{*}_{ij}, $$

    and the value is $e$ (``metric="rmse"``), $1 - r$ (``"1-r"``: the pattern only),
    $1 - r + |\Delta|$ (``"1-r+mean"``) or $1 - r + h_\delta(\Delta)$ (``"1-r+huber"``,
    Huber's function of width $\delta$ = ``level_width``, divided by $\delta$:
    $\Delta^2 / 2\delta$ within $\delta$ of the target level, $|\Delta| - \delta/2$
    beyond). The metrics hold ``fc_r``, ``rmse``, ``mean_fc`` and ``saturation`` (the
    fraction of pairs with $F_{ij} > 0.9$).
    """

    target: eqx.AbstractVar[Float[Array, "nodes nodes"]]
    metric: eqx.AbstractVar[str]
    level_width: eqx.AbstractVar[float]

    @abc.abstractmethod
    def model_fc(self, model, key) -> Float[Array, "nodes nodes"]:
        """The FC the loss compares with ``target``."""

    @abc.abstractmethod
    def evaluate(
        self, model, key
    ) -> tuple[Float[Array, ""], Metrics, Float[Array, "nodes nodes"]]:
        """``(value, metrics, model FC)`` from one computation: the loss's own call and
        ``model_fc`` together (one simulation, or one analytic FC, for both)."""

    @abc.abstractmethod
    def fitted_to(self, runs) -> "AbstractFcLoss":
        """The same loss with its targets made from other empirical runs (``runs``:
        ``[runs, samples, nodes]`` or a list of ``[samples, nodes]``): the FC target
        ``nd.runs_fc(runs)``, and any other target the loss has (the FCD's) from the same
        runs. Leave-one-run-out error bars (``nd.leave_one_run_out``) are made of these."""

    def residuals(self, model, key) -> Float[Array, " pairs"]:
        """The upper triangle of ``model_fc``."""
        return upper_triangle(self.model_fc(model, key), k=1)

    def curvature_loss(self) -> Any:
        """This loss, squared for ``metric="rmse"``: the root of a mean square concentrates
        its curvature at each noise key's own minimum (measured on a noisy linear network:
        the fit key's Hessian was 3.5x the mean over fresh keys, and 95 % intervals held
        the truth 0.887 of the time; squared, 0.963)."""
        return _Squared(self) if self.metric == "rmse" else self

    def replace(self, **changes):
        """A copy with some settings changed, e.g. ``loss.replace(target=other_fc)``."""
        return dataclasses.replace(self, **changes)

    def loss_of_fc(self, f: Float[Array, "nodes nodes"]) -> tuple[Float[Array, ""], Metrics]:
        """``(value, metrics)`` of a model FC ``f`` against the target."""
        metrics = fc_summary(f, self.target)
        if self.metric == "rmse":
            loss = metrics["rmse"]
        elif self.metric == "1-r":
            loss = 1.0 - metrics["fc_r"]
        else:
            gap = metrics["mean_fc"] - jnp.mean(upper_triangle(self.target, k=1))
            # optax's Huber is delta (|x| - delta / 2) beyond delta: divided by delta, slope 1.
            term = (jnp.abs(gap) if self.metric == "1-r+mean" else
                    optax.losses.huber_loss(gap, delta=self.level_width) / self.level_width)
            loss = 1.0 - metrics["fc_r"] + term
        return loss, metrics


@eqx.filter_jit
def evaluate_compiled(loss_fn: AbstractFcLoss, model, key):
    """``loss_fn.evaluate(model, key)`` as one compiled program, shared by every caller:
    the start's scan of G and the evaluation of the fitted model (``netdyn fit``) compile
    it once for both when their models have the same structure (the analytic FC's program
    took 11-12 s to compile on 80 regions, 2 cores)."""
    return loss_fn.evaluate(model, key)
