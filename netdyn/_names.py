"""State-variable names given as one string, a sequence of strings, or ``None``."""

import difflib


def as_names(value, what: str) -> tuple[str, ...] | None:
    """``value`` as a tuple of names; a string is always *one* name, ``None`` stays ``None``
    (all variables). ``what`` names the argument in the error (e.g. ``"noise apply_to"``)."""
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    try:
        names = tuple(value)
    except TypeError:
        names = None
    if not names or not all(isinstance(v, str) for v in names):
        raise ValueError(
            f"{what} must be a state variable name, a non-empty sequence of names, or None "
            f"(all variables), got {value!r}."
        )
    return names


def suggested_variable(name: str | None, dynamics) -> str:
    """The state variable of ``dynamics`` to suggest instead of ``name``: the most similar
    state name (``difflib``'s ratio at least 0.5, a coupled variable first on ties), else
    the first coupled variable, the one a neural observation (BOLD) usually watches. With
    ``name=None``, the first coupled variable."""
    coupled = tuple(dynamics.coupled_variables)
    if name is not None:
        scored = [
            (difflib.SequenceMatcher(None, name.lower(), s.lower()).ratio(), s in coupled, s)
            for s in dynamics.state_names
        ]
        best = max(scored, key=lambda x: (x[0], x[1]), default=None)
        if best is not None and best[0] >= 0.5:
            return best[2]
    return coupled[0] if coupled else dynamics.state_names[0]
