"""State-variable names given as one string, a sequence of strings, or ``None``."""


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
