"""Searches that need no gradient: the level search over one parameter."""
