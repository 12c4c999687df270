"""The fitted parameters: which leaves a fit trains, their bounds, and their flat
unconstrained coordinates."""
