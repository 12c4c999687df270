"""``parse_remat``: a remat strategy from a short text, as ``netdyn fit --remat`` takes it."""

from ._base import AbstractRemat
from .multilevel import MultiLevel
from .nested import Nested
from .no_remat import NoRemat
from .uniform import Uniform


def parse_remat(spec: str) -> AbstractRemat:
    """The strategy that ``spec`` names: ``"none"`` (``NoRemat()``), ``"uniform:K"``
    (``Uniform(K)``), ``"nested:K1,K2"`` (``Nested(K1, K2)``) or ``"multilevel:B"``
    (``MultiLevel(B)``; ``"multilevel"`` alone: ``MultiLevel(16)``).

    **Raises** ``ValueError`` that starts with ``repr(spec)``: another form, or numbers
    the strategy refuses.
    """
    kind, _, arg = spec.partition(":")
    try:
        if kind == "none" and not arg:
            return NoRemat()
        if kind == "uniform":
            return Uniform(int(arg))
        if kind == "nested":
            return Nested(*(int(a) for a in arg.split(",")))
        if kind == "multilevel":
            return MultiLevel(int(arg) if arg else 16)
    except ValueError as e:
        raise ValueError(f"{spec!r}: {e}") from None
    raise ValueError(f"{spec!r}: expected none, uniform:K, nested:K1,K2 or multilevel:B.")
