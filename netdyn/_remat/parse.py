"""``parse_remat``: a remat strategy from a short text, as ``netdyn fit --remat`` takes it."""

from ._base import AbstractRemat
from .multilevel import MultiLevel
from .nested import Nested
from .no_remat import NoRemat
from .uniform import Uniform

FORMS = "none, uniform:K, nested:K1,K2 or multilevel:B, each optionally followed by +save"


def parse_remat(spec: str) -> AbstractRemat:
    """The strategy that ``spec`` names: ``"none"`` (``NoRemat()``), ``"uniform:K"``
    (``Uniform(K)``), ``"nested:K1,K2"`` (``Nested(K1, K2)``) or ``"multilevel:B"``
    (``MultiLevel(B)``; ``"multilevel"`` alone: ``MultiLevel(16)``); with ``"+save"``
    after it, the strategy keeps the solver stages (``stages="save"``, e.g.
    ``"uniform:1000+save"``: see ``AbstractRemat``).

    **Raises** ``ValueError`` that starts with ``repr(spec)``: another form, or numbers
    the strategy refuses.
    """
    base, plus, option = spec.partition("+")
    if plus and option != "save":
        raise ValueError(f"{spec!r}: expected {FORMS}.")
    stages = "save" if plus else "recompute"
    kind, _, arg = base.partition(":")
    try:
        if kind == "none" and not arg:
            return NoRemat(stages=stages)
        if kind == "uniform":
            return Uniform(int(arg), stages=stages)
        if kind == "nested":
            return Nested(*(int(a) for a in arg.split(",")), stages=stages)
        if kind == "multilevel":
            return MultiLevel(int(arg) if arg else 16, stages=stages)
    except ValueError as e:
        raise ValueError(f"{spec!r}: {e}") from None
    raise ValueError(f"{spec!r}: expected {FORMS}.")
