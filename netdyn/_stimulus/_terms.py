"""The stimuli of a network, checked once and added to the drift at every solver stage."""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import Scalar, State
from ._base import AbstractStimulus, check_stimuli


class StimulusTerms(eqx.Module):
    """The stimuli of one run and the state rows they drive.

    Built by ``simulate`` at trace time (``build`` checks the variables and shapes, and
    wraps the array parameters in runtime finiteness checks); ``add`` is called by the
    drift at every solver stage.
    """

    stimuli: tuple[AbstractStimulus, ...]
    rows: tuple[int, ...] = eqx.field(static=True)
    # Each stimulus's spatial pattern, built once: it does not change along the run, and
    # every solver stage of every step reads it. In the default float type (float64 with
    # x64), whose cast to the state's type gives what ``pattern(n_nodes, state dtype)``
    # gives.
    patterns: tuple[Float[Array, " nodes"], ...]

    @classmethod
    def build(cls, stimulus, state_names: tuple[str, ...], n_nodes: int) -> "StimulusTerms":
        """Check ``stimulus`` (``None``, one, or a tuple) against the network."""
        stimuli = check_stimuli(stimulus)
        rows = []
        for s in stimuli:
            rows.append(s.check(state_names, n_nodes))
            out = jax.eval_shape(lambda s: s(jnp.zeros(()), n_nodes), s)
            if out.shape != (n_nodes,):
                raise ValueError(f"{type(s).__name__} gives an input of shape {out.shape}, "
                                 f"expected [nodes] = ({n_nodes},).")
        stimuli = tuple(s.checked() for s in stimuli)
        dtype = jnp.result_type(float)
        patterns = tuple(s.pattern(n_nodes, dtype) for s in stimuli)
        return cls(stimuli, tuple(rows), patterns)

    def add(self, t: Scalar, dy: State) -> State:
        """``dy`` plus every stimulus at time ``t`` on its row (``dy`` itself if none)."""
        for s, row, pattern in zip(self.stimuli, self.rows, self.patterns):
            dy = dy.at[row].add(s.drive(t, pattern.astype(t.dtype)).astype(dy.dtype))
        return dy
