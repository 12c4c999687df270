"""Shared test helpers: parametrisation lists over the library's families."""

import netdyn as nd

ALL_DYNAMICS = [
    nd.ReducedWongWang(),
    nd.Generic2dOscillator(),
    nd.SupHopf(),
    nd.JansenRit(),
    nd.MontbrioPazoRoxin(),
    nd.Kuramoto(),
]
"""One default instance of every dynamics."""

ALL_COUPLINGS = [
    nd.Linear(G=0.7, b=0.05),
    nd.DelayedLinear(G=0.7, b=0.05),
    nd.Difference(G=0.6),
    nd.DelayedDifference(G=0.6),
    nd.Sigmoidal(cmin=-0.5, cmax=1.5, midpoint=0.3, a=1.2, sigma=0.7),
    nd.DelayedSigmoidal(cmin=-0.5, cmax=1.5, midpoint=0.3, a=1.2, sigma=0.7),
    nd.SigmoidalJansenRit(G=0.8, cmin=0.1, cmax=1.1, midpoint=0.2, r=1.3),
    nd.DelayedSigmoidalJansenRit(G=0.8, cmin=0.1, cmax=1.1, midpoint=0.2, r=1.3),
    nd.KuramotoSine(G=0.9),
    nd.DelayedKuramotoSine(G=0.9),
]
"""Every coupling (instantaneous and delayed, nearest interpolation), with parameters that
make each term matter for states of order 1. Every coupling maps ``k`` coupled variables to
``k`` coupling inputs, except the Jansen-Rit ones, which need exactly 2 coupled variables
``(y1, y2)`` and give 1 input."""
