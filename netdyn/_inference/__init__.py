"""Statistics of a fitted model: gradient checks, identifiability, uncertainty, profiles."""
