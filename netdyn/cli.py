"""The ``netdyn`` command line from Python.

- ``main(["fit", "--out", "run"])`` runs ``netdyn fit --out run`` in this process and
  returns its exit status; ``main(["summary", "run"])`` prints what that fit found.
- ``plan(["fit", ...])`` builds what ``netdyn fit ...`` would fit (data, network, fitted
  parameters, losses, optimizer) without simulating, to continue in Python.
- ``load_fitted("run")`` gives back the network that ``netdyn fit --out run`` fitted (and
  its plan), to simulate or analyse further.
"""

from ._cli._main import main as main
from ._cli._plan import FitPlan as FitPlan, plan as plan
from ._cli._run_folder import load_fitted as load_fitted

__all__ = ["FitPlan", "load_fitted", "main", "plan"]
