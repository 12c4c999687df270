"""The ``netdyn`` command line, as ``netdyn.cli.main``: ``nd.cli.main(["fit", "--out",
"run"])`` runs ``netdyn fit --out run`` in this process and returns its exit status.

One concern a module: ``_parser`` (options and help), ``_data`` (files read),
``_model`` (the models offered, ``--fit`` and ``--remat``), ``_checks`` (numeric
options), ``_fit_command`` (the command), ``_report`` (what is written and printed),
``_plot`` (the figure), ``_main`` (the entry point and its error handling).
"""

from ._main import main as main

__all__ = ["main"]
