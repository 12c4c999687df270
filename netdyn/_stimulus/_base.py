"""Abstract base of external stimuli."""

import abc
import dataclasses
import functools
import numbers

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import Param, Scalar
from .._validate import finite_array, is_concrete, number_lists_as_arrays


def array_field(owner: str, **kwargs):
    """A parameter field (``eqx.field``) whose list or tuple of numbers becomes an array at
    construction, before the checks, as an array given directly would be; ``owner`` names
    it in errors, e.g. ``"PulseTrain.width"``."""
    return eqx.field(converter=functools.partial(number_lists_as_arrays, owner=owner),
                     **kwargs)


def concrete_numbers(value) -> bool:
    """Whether ``value`` is a number or an array whose entries can be checked now (not a
    tracer, not a parameterisation that ``simulate`` resolves later)."""
    return isinstance(value, (numbers.Number, np.ndarray, np.generic, jax.Array)) and (
        is_concrete(value))


class AbstractStimulus(eqx.Module):
    r"""An external input added to the time derivative of one state variable (as TVB's
    stimuli):

    $$ \frac{dy_{v,i}}{dt} = f_{v}(t, y, c)_i + a\, s(t)\, p_i , $$

    for the stimulated variable $v$ (``variable``) of every region $i$, with $a$ the
    ``amplitude``, $s(t)$ the temporal profile of the concrete class and $p$ the spatial
    pattern over regions (``regions`` and ``weights``):

    - ``regions=None``: $p$ is ``weights`` broadcast to ``[nodes]`` (a scalar stimulates
      every region alike; a ``[nodes]`` array is a full pattern);
    - ``regions=(i, j, ...)``: $p$ is ``weights`` (a scalar or one weight per listed region)
      on those regions and zero elsewhere.

    $t$ is the global time (ms) of the solver stage, so Heun and RK4 see the stimulus at
    their intermediate times, and a run continued from ``sol.final`` with ``t0`` = the
    previous ``t1`` sees the stimulus where a single run would. A network holds one
    stimulus or a tuple of them (their inputs add up).

    Subclasses define the fields ``variable`` (static), ``amplitude``, ``regions``
    (static), ``weights`` and the methods ``profile`` and ``check_profile``.
    """

    variable: eqx.AbstractVar[str]
    amplitude: eqx.AbstractVar[Param]
    regions: eqx.AbstractVar[tuple[int, ...] | None]
    weights: eqx.AbstractVar[Param]

    def __check_init__(self):
        """Concrete array parameters (every field that is not static) must be real and
        finite; traced ones are checked when a run starts (``checked``)."""
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not field.metadata.get("static", False) and concrete_numbers(value):
                finite_array(f"{type(self).__name__}.{field.name}", value)

    @abc.abstractmethod
    def profile(self, t: Scalar) -> Float[Array, ""] | Float[Array, " nodes"]:
        """The temporal profile $s(t)$ at time ``t`` (ms), without the amplitude: a scalar
        (or ``[nodes]`` for profiles that differ between regions)."""

    def pattern(self, n_nodes: int, dtype=float) -> Float[Array, " nodes"]:
        """The spatial pattern $p$ over the ``n_nodes`` regions."""
        weights = jnp.asarray(self.weights, dtype)
        if self.regions is None:
            return jnp.broadcast_to(weights, (n_nodes,))
        index = np.asarray(self.regions, dtype=np.int64)
        return jnp.zeros((n_nodes,), dtype).at[index].set(weights)

    def __call__(self, t: Scalar, n_nodes: int) -> Float[Array, " nodes"]:
        r"""The input $a\, s(t)\, p$ to the stimulated variable of the ``n_nodes`` regions.

        Computed in the floating-point type of ``t`` (the state's), whatever the
        parameters' own types.
        """
        t = jnp.asarray(t)
        if not jnp.issubdtype(t.dtype, jnp.floating):
            t = t.astype(float)
        return self.drive(t, self.pattern(n_nodes, t.dtype))

    def drive(self, t: Scalar, pattern: Float[Array, " nodes"]) -> Float[Array, " nodes"]:
        r"""$a\, s(t)\, p$ for a floating-point ``t`` and a ``pattern`` $p$ in its type
        (``pattern(n_nodes, t.dtype)``, which the time loop builds once, not per stage)."""
        return jnp.asarray(self.amplitude, t.dtype) * self.profile(t) * pattern

    def check(self, state_names: tuple[str, ...], n_nodes: int) -> int:
        """Trace-time checks against a network; returns the row of the stimulated variable."""
        name = type(self).__name__
        if self.variable not in state_names:
            raise ValueError(
                f"{name}.variable {self.variable!r} is not a state variable of the dynamics; "
                f"state variables are {state_names}."
            )
        shape = jnp.shape(self.amplitude)
        if shape != ():
            raise ValueError(
                f"{name}.amplitude must be a scalar, got shape {shape} (use weights for a "
                "pattern over regions)."
            )
        shape = jnp.shape(self.weights)
        if self.regions is None:
            if shape not in ((), (n_nodes,)):
                raise ValueError(
                    f"{name}.weights has shape {shape}; with regions=None it must be a "
                    f"scalar or [nodes] = ({n_nodes},)."
                )
        else:
            bad = [r for r in self.regions if not -n_nodes <= r < n_nodes]
            if bad:
                raise ValueError(
                    f"{name}.regions {bad} out of range for a network of {n_nodes} nodes."
                )
            if len(set(r % n_nodes for r in self.regions)) != len(self.regions):
                raise ValueError(f"{name}.regions {self.regions} lists a region twice.")
            if shape not in ((), (len(self.regions),)):
                raise ValueError(
                    f"{name}.weights has shape {shape}; with regions={self.regions} it must "
                    f"be a scalar or one weight per region, ({len(self.regions)},)."
                )
        self.check_profile(n_nodes)
        self._check_real()
        return state_names.index(self.variable)

    def _check_real(self) -> None:
        """A complex parameter (its dtype is known at trace time, even for a traced or
        edited value) is a ``ValueError``: its imaginary part would be dropped."""
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.metadata.get("static", False) or value is None:
                continue
            dtype = jnp.result_type(value)
            if jnp.issubdtype(dtype, jnp.complexfloating):
                raise ValueError(f"{type(self).__name__}.{field.name} must be real, got a "
                                 f"complex value ({dtype}).")

    @abc.abstractmethod
    def check_profile(self, n_nodes: int) -> None:
        """Trace-time checks of the profile's own fields against a network of ``n_nodes``
        regions: a ``ValueError`` naming the field and its shape."""

    def checked(self) -> "AbstractStimulus":
        """The stimulus with runtime checks (``eqx.error_if``) that its array parameters
        are finite: a NaN amplitude stops the run with a message naming the field."""
        out = self
        for field in dataclasses.fields(self):
            if field.metadata.get("static", False):
                continue
            value = getattr(self, field.name)
            if value is None or not jnp.issubdtype(jnp.result_type(value), jnp.inexact):
                continue
            value = jnp.asarray(value)
            value = eqx.error_if(
                value,
                ~jnp.all(jnp.isfinite(value)),
                f"{type(self).__name__}.{field.name} is not finite (NaN or infinite).",
            )
            out = eqx.tree_at(lambda s, n=field.name: getattr(s, n), out, value)
        return out


def check_stimuli(stimulus) -> tuple[AbstractStimulus, ...]:
    """``stimulus`` (``None``, one ``AbstractStimulus`` or a tuple) as a tuple, checked."""
    if stimulus is None:
        return ()
    stimuli = stimulus if isinstance(stimulus, tuple) else (stimulus,)
    for s in stimuli:
        if not isinstance(s, AbstractStimulus):
            raise ValueError(
                f"stimulus must be an AbstractStimulus, a tuple of them or None, got "
                f"{type(s).__name__}."
            )
    return stimuli
