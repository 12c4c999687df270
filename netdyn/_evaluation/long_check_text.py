"""``nd.long_check``'s result in words: the change of the loss at each point, the
verdict with the bounds or the flat range found (``long_check_text``), and what it
cautions against (``long_check_caution``), as ``netdyn fit`` prints them."""

from collections.abc import Sequence


def long_check_text(check: dict) -> str:
    """``nd.long_check``'s result in words, as ``netdyn fit`` prints it: the change of the
    loss at each factor of each value (mean over the sets), the re-levelled G of a profile
    and the verdict, e.g. ``"change of the loss at the held-out length at 0.8x and 1.25x
    each fitted value, from 0.8 at the fit (mean over 2 held-out sets, each with its own
    noise; 4 s): coupling.G +0.129 / +0.102, flat within this length's noise"``."""
    parts = []
    for name, p in check["parameters"].items():
        outer = "".join(f" ({f:g}x: {r:+.3g})" for f, r in
                        zip(p.get("outer_factors") or (), p.get("outer_rise") or ()))
        profile = ("" if not p.get("G") else
                   f" (G re-levelled to {p['G'][0]:.4g} / {p['G'][1]:.4g})")
        parts.append(f"{name} {p['rise'][0]:+.3g} / {p['rise'][1]:+.3g}{outer}{profile}"
                     f"{_verdict_text(p)}")
    sets = len(next(iter(check["parameters"].values()))["rise_each"][0])
    spread = f"mean over {sets} held-out sets, each with its own noise"
    factors = " and ".join(f"{f:g}x" for f in check["factors"])
    return (f"change of the loss at the held-out length at {factors} each fitted value, from "
            f"{check['loss_at_fit']:.4g} at the fit ({spread}; {check['seconds']:.0f} s): "
            f"{'; '.join(parts)}")


def _verdict_text(p: dict) -> str:
    """One parameter's verdict in words, with the values that bound it or the range over
    which it is flat (when the outer factors were looked at)."""
    lo, hi = p.get("bounds") or (None, None)
    values = list(p.get("values") or ()) + list(p.get("outer_values") or ())
    off = [v for v, s in zip(values, p.get("sides") or ()) if s == "higher off the level"]
    off = "" if not off else (f"; higher at {', '.join(f'{v:.4g}' for v in off)} but off the "
                              "FC level there (no bound)")
    if p["verdict"] == "flat":
        span = flat_span(p)
        return ", flat within this length's noise" + (
            "" if span is None else f" from {span[0]:.4g} to {span[1]:.4g}") + off
    if p["verdict"] in ("bounded above", "bounded below", "minimum"):
        return _bound_text(p, lo, hi) + off
    return f", {p['verdict']}: the fit is off"


def _bound_text(p: dict, lo, hi) -> str:
    """A bounded verdict (``"minimum"``, ``"bounded above"``, ``"bounded below"``) in
    words, with its bounds where the outer factors were looked at."""
    if p["verdict"] == "minimum":
        return ", a minimum" + ("" if not p.get("outer_factors") else
                                f" between {lo:.4g} and {hi:.4g}")
    if p["verdict"] == "bounded above":
        return f", higher at {hi:.4g}: bounded above at this length, flat below"
    return f", higher at {lo:.4g}: bounded below at this length, flat above"


def flat_span(p: dict) -> tuple[float, float] | None:
    """The range of values over which a ``"flat"`` parameter ``p`` of ``nd.long_check``'s
    result was found flat: the fitted value and the points flat there, the outer factors'
    included (``None`` for a result without outer points)."""
    if not p.get("outer_factors"):
        return None
    values = list(p["values"]) + list(p["outer_values"])
    flat = [v for v, s in zip(values, p.get("sides") or ["flat"] * len(values)) if s == "flat"]
    flat += [p["value"]] if "value" in p else []
    return min(flat), max(flat)


def long_check_caution(check: dict, unconstrained: Sequence[str] = ()) -> str | None:
    """What ``nd.long_check``'s result ``check`` cautions against, in words (``None`` when
    nothing): a value whose loss at the held-out length is lower away from the fit (the
    fit's short, noisy loss missed its minimum), and a value among ``unconstrained`` (those
    the error bars, ``nd.uncertainty``, gave no interval) that the long check does not find
    flat: simulations as long as the held-out check constrain it."""
    params = check["parameters"]
    off = [f"{n} ({p['verdict']})" for n, p in params.items() if p["verdict"].startswith("lower")]
    missed = [n + ("" if p["verdict"] == "minimum" else f" ({p['verdict']})")
              for n, p in params.items() if n in set(unconstrained)
              and p["verdict"] != "flat" and not p["verdict"].startswith("lower")]
    parts = []
    if off:
        parts.append(f"at the held-out length the loss is lower away from the fitted "
                     f"{', '.join(off)}: the fit's short, noisy loss missed its minimum")
    if missed:
        parts.append(f"{', '.join(missed)}: unresolved by the fit's loss, but simulations as "
                     "long as the held-out check constrain "
                     f"{'it' if len(missed) == 1 else 'them'}")
    return "; ".join(parts) or None


def bounds_text(bounds) -> str | None:
    """The long check's ``bounds`` (``[lower, upper]``, ``None`` where open) in words:
    ``"between A and B"``, ``"below B"``, ``"above A"``; ``None`` without either."""
    lo, hi = bounds or (None, None)
    if lo is not None and hi is not None:
        return f"between {lo:.4g} and {hi:.4g}"
    if hi is not None:
        return f"below {hi:.4g}"
    return None if lo is None else f"above {lo:.4g}"
