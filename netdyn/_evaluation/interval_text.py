"""A fit's error bars in words: the ``uncertainty`` of its report (``nd.Uncertainty.as_dict``
in the units of the fit's options, with the noise keys and subjects it used and G's
profile: ``params.json`` of ``netdyn fit``), and the intervals read from it."""

from collections.abc import Sequence

from .long_check_text import bounds_text, flat_span

# What is said of a value without an interval whose long check is flat too: the fit's
# short loss and simulations as long as the held-out check agree (measured on rww's sigma
# along the level: benchmarks/sigma_long.md, recovery.md).
AGREED_FLAT = ("not constrained by the FC here: flat along it at the fit's length and at "
               "the held-out length (the long check below)")


def _unresolved_text(p: dict | None, unresolved: str) -> str:
    """Why a value has no interval: flat at the held-out length too (``AGREED_FLAT``, with
    the range looked at), or unresolved by the fit's loss (``unresolved``) and, where the
    long check ``p`` (one parameter of ``nd.long_check``'s result) found the loss higher
    there, the bounds it found."""
    if p is None:
        return unresolved
    if p.get("verdict") == "flat":
        span = flat_span(p)
        return AGREED_FLAT if span is None else AGREED_FLAT.replace(
            " (the long check", f" from {span[0]:.4g} to {span[1]:.4g} (the long check")
    bound = bounds_text(p.get("bounds"))
    return unresolved if bound is None else f"{unresolved}; the held-out length bounds it: {bound}"


def has_interval(name: str, u: dict | None) -> bool:
    """Whether the report's ``uncertainty`` gave ``name`` an interval (its curvature seen)."""
    if not u or not u.get("valid") or name not in u["names"]:
        return False
    return bool(u["constrained"][u["names"].index(name)])


def G_interval(u: dict | None) -> tuple[float, float, float] | None:
    """The fitted G and its interval, ``(G, lower, upper)``, from the report's
    ``uncertainty``; ``None`` when G has none."""
    if not has_interval("coupling.G", u):
        return None
    i = u["names"].index("coupling.G")
    return u["values"][i], u["lower"][i], u["upper"][i]


def profile_text(p: dict) -> str:
    """G's profile in words: the loss's rise over the quadratic model's at each point."""
    pairs = [(f, r) for f, r in zip(p["steps"], p["rise_ratio"]) if r is not None]
    at = ", ".join(f"{f:+g}" for f, _ in pairs)
    ratios = ", ".join(f"{r:.2g}" for _, r in pairs)
    return (f"profile of G ({len(p['G'])} points, {p['seconds']:.0f} s; fit.png): the "
            "loss's rise from the fit over that of the quadratic model the interval rests "
            f"on (1 where it holds), at {at} half-widths of the interval: {ratios}")


def _label(name: str, map_names: Sequence[str]) -> str:
    """A coefficient along a map named by its map: ``....coefficients[1] (fc-gradient)``."""
    base, _, index = name.partition("[")
    if base.endswith(".coefficients") and index[:-1].isdigit():
        k = int(index[:-1])
        if k < len(map_names):
            return f"{name} ({map_names[k]})"
    return name


def uncertainty_text(u: dict | None, map_names: Sequence[str] = (),
                     long_check: dict | None = None) -> str | None:
    """The intervals of the report's ``uncertainty`` in one sentence (or why there are
    none; ``None`` without ``u``); a map's coefficient whose interval holds 0 is said to
    be so (the data do not tell it from a flat map). A value without an interval is "not
    resolved by the fit's loss" (``u["unresolved"]``) unless ``long_check`` (the
    report's, ``nd.long_check``) found it flat at the held-out length too: then both agree
    that the FC does not constrain it (``AGREED_FLAT``)."""
    if u is None:
        return None
    if "skipped" in u:
        return f"parameter intervals skipped ({u['skipped']})."
    if not u["valid"]:
        return f"no parameter intervals: {u['note']} ({u['seconds']:.0f} s)."
    checked = (long_check or {}).get("parameters") or {}
    parts = []
    for name, v, lo, hi, ok in zip(u["names"], u["values"], u["lower"], u["upper"],
                                   u["constrained"]):
        label = _label(name, map_names)
        zero = " (holds 0: no evidence for the map)" if (
            ok and label != name and lo <= 0 <= hi) else ""
        why = _unresolved_text(checked.get(name), u.get("unresolved", "not constrained"))
        parts.append(f"{label} {v:.4g} [{lo:.4g}, {hi:.4g}]{zero}" if ok else
                     f"{label} {v:.4g} ({why}: no interval)")
    sources = [f"noise over {u['noise_keys']} keys"] if u["noise_keys"] else []
    if u["runs_left_out"]:
        sources.append(f"leaving out each of the {len(u['runs_left_out'])} training subjects")
    sloppy = ("; barely constrained: " + "; ".join(u["sloppy"])) if u["sloppy"] else ""
    profile = "" if u.get("profile") is None else "; " + profile_text(u["profile"])
    return (f"{100 * u['level']:.0f} % intervals ({', '.join(sources)}; "
            f"{u['seconds']:.0f} s): {', '.join(parts)}{sloppy}{profile}.")
