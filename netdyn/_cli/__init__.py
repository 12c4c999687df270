"""The ``netdyn`` command line (public as ``netdyn.cli``).

One concern a module: ``_parser`` (options) and ``_help`` (its description), ``_defaults``
(the defaults that depend on other options: ``--engine auto``, ``--quick``), ``_data``
(files read), ``_model`` (the models offered, ``--fit`` and ``--remat``), ``_checks``
(numeric options), ``_plan`` (what a fit is made of, built once), ``_fit_command`` (the
command), ``_evaluation`` (the fitted model's own FC and the held-out check),
``_report`` (what is written and printed), ``_plot`` (the figure), ``_load`` (a finished
fit back in Python), ``_main`` (the entry point and its error handling).
"""
