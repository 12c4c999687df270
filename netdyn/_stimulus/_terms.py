"""The stimuli of a network, checked once and added to the drift at every solver stage."""

import dataclasses

import jax
import jax.numpy as jnp

from .._custom_types import Scalar, State
from ._base import AbstractStimulus, check_stimuli


@dataclasses.dataclass(frozen=True)
class StimulusTerms:
    """The stimuli of one run and the state rows they drive.

    Built by ``simulate`` at trace time (``build`` checks the variables and shapes, and
    wraps the array parameters in runtime finiteness checks); ``add`` is called by the
    drift at every solver stage.
    """

    stimuli: tuple[AbstractStimulus, ...]
    rows: tuple[int, ...]
    n_nodes: int

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
        return cls(tuple(s.checked() for s in stimuli), tuple(rows), n_nodes)

    def add(self, t: Scalar, dy: State) -> State:
        """``dy`` plus every stimulus at time ``t`` on its row (``dy`` itself if none)."""
        for s, row in zip(self.stimuli, self.rows):
            dy = dy.at[row].add(s(t, self.n_nodes).astype(dy.dtype))
        return dy
