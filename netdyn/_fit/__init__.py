"""The optimisation loop: nd.fit, nd.fit_multistart, their step, history and options."""
