"""The ``netdyn`` command line from Python.

- ``main(["fit", "--out", "run"])`` runs ``netdyn fit --out run`` in this process and
  returns its exit status; ``main(["summary", "run"])`` prints what that fit found.
- ``plan(["fit", ...])`` builds what ``netdyn fit ...`` would fit (data, network, fitted
  parameters, losses, optimizer) without simulating, to continue in Python.
"""

from ._cli._main import main as main
from ._cli._plan import FitPlan as FitPlan, plan as plan

__all__ = ["FitPlan", "main", "plan"]
