"""Statistics of a fitted model, in one namespace (the same objects as the top-level
names: ``nd.inference.uncertainty`` is ``nd.uncertainty``).

- ``check_gradient`` (``GradientCheck``): a loss's gradient against central finite
  differences, before a fit relies on it.
- ``identifiability`` (``Identifiability``): the loss's Hessian and Gauss-Newton
  information at the fit, their spectra and sloppy directions.
- ``uncertainty`` (``Uncertainty``): error bars from the noise (sandwich) and the data
  (jackknife over runs, with the losses of ``leave_one_run_out``), with intervals.
- ``local_profile`` and ``profile`` (``Profile``): the loss along one parameter with the
  others re-optimized (by the Hessian's Newton step near the fit, or by fits);
  ``interval_profile``: ``local_profile`` across an interval of ``uncertainty``.

Each takes ``loss_fn, model, where`` and ``bounds`` as ``nd.fit`` does and works in the
fit's coordinates (a bounded leaf through its unconstrained value), and asks of the loss
only the contract of ``nd.AbstractLoss`` (``stochastic``, ``residuals``,
``curvature_loss``).
"""

from ._inference.check_gradient import (
    GradientCheck as GradientCheck,
    check_gradient as check_gradient,
)
from ._inference.identifiability import (
    Identifiability as Identifiability,
    identifiability as identifiability,
)
from ._inference.leave_one_out import leave_one_run_out as leave_one_run_out
from ._inference.profile import (
    Profile as Profile,
    interval_profile as interval_profile,
    local_profile as local_profile,
    profile as profile,
)
from ._inference.uncertainty import Uncertainty as Uncertainty, uncertainty as uncertainty

__all__ = ["GradientCheck", "Identifiability", "Profile", "Uncertainty", "check_gradient",
           "identifiability", "interval_profile", "leave_one_run_out", "local_profile",
           "profile", "uncertainty"]
