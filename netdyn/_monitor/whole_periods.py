"""Durations of whole monitor periods: what ``simulate`` accepts as ``t1 - t0`` for a
monitor (``nd.whole_periods``)."""

import math
from typing import Literal

from .._validate import number, one_of

# A duration within this relative distance of a whole number of periods is one: the same
# tolerance as simulate's checks of whole steps and periods.
_TOLERANCE = 1e-9


def whole_periods(
    duration: float, period: float, *, rounding: Literal["nearest", "down", "up"] = "nearest"
) -> float:
    r"""A duration (ms) rounded to a whole number of periods (ms), at least one.

    ``simulate`` needs ``t1 - t0`` to be a whole number of every monitor's period (a
    BOLD sample covers one repetition time): with a 720 ms TR, 60 000 ms is 83.3 periods
    and is refused, while ``whole_periods(60_000.0, 720.0)`` gives 59 760 ms (83
    periods; ``rounding="up"``: 60 480 ms). The result is

    $$ T' = n P, \qquad n = \max\big(1, [T / P]\big), $$

    where $[\cdot]$ is the nearest integer (halves up), $\lfloor\cdot\rfloor$ for
    ``rounding="down"`` or $\lceil\cdot\rceil$ for ``"up"``. A duration within $10^{-9}$
    (relative) of a whole number of periods counts as that number, as in ``simulate``. For
    several monitors, round to the least common multiple of their periods (e.g. 720 and
    1000 ms: ``whole_periods(T, 18_000.0)``). ``period`` must itself be a whole number of
    steps ``dt`` for ``simulate`` to accept it.

    **Arguments**:

    - ``duration``: the wanted duration in ms (> 0).
    - ``period``: the monitor's period in ms (> 0), e.g. ``nd.Bold(period=720.0).period``.
    - ``rounding``: ``"nearest"`` (default), ``"down"`` or ``"up"``.

    **Returns**: the duration in ms, a float.

    ```python
    t1 = nd.whole_periods(60_000.0, 720.0)        # 59760.0
    sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=t1, dt=1.0,
                      monitors={"bold": nd.Bold(period=720.0)}, key=key)
    ```
    """
    duration = number("whole_periods(duration)", duration, low=0.0, low_open=True, unit=" ms")
    period = number("whole_periods(period)", period, low=0.0, low_open=True, unit=" ms")
    rounding = one_of("whole_periods(rounding)", rounding, ("nearest", "down", "up"))
    ratio = duration / period
    if not math.isfinite(ratio):
        raise ValueError(
            f"whole_periods: the duration ({duration} ms) is not a finite number of periods "
            f"of {period} ms."
        )
    n = round(ratio)
    if abs(n - ratio) > _TOLERANCE * max(1.0, ratio):
        n = {"nearest": math.floor(ratio + 0.5), "down": math.floor(ratio),
             "up": math.ceil(ratio)}[rounding]
    return max(1, n) * period

