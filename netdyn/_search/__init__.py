"""Searches that need no gradient: a grid of parameter values evaluated in batches
across devices (``sweep``), and the level search over one parameter."""
