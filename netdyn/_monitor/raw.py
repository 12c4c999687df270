"""Raw (optionally subsampled) monitor."""

import equinox as eqx
from jaxtyping import Array, Float

from ._base import AbstractMonitor
from ._checks import check_warmup, to_variables


class Raw(AbstractMonitor):
    """The state itself, every step (``period=None``) or every ``period`` ms (subsampled:
    the state at the end of each period, as TVB's ``SubSample``).

    Sample ``k`` is the state at ``t0 + (k + 1) * period``. ``variables``: the watched
    state variables, one name (``"S"``) or a sequence of names; all when ``None``.
    """

    period: float | None = eqx.field(default=None, static=True)
    variables: tuple[str, ...] | None = eqx.field(
        default=None, static=True, converter=to_variables
    )
    warmup: float = eqx.field(default=0.0, static=True)

    def __check_init__(self):
        check_warmup(self)

    def init(self, y: Float[Array, "k nodes"], dt: float) -> Float[Array, "k nodes"]:
        return y

    def update(self, state, y: Float[Array, "k nodes"], dt: float) -> Float[Array, "k nodes"]:
        return y

    def emit(self, state, dt: float):
        return state, state

    def sample_offset(self, period: float, dt: float) -> float:
        return 0.0
