"""The ``netdyn`` command line (public as ``netdyn.cli``).

One concern a module: ``_parser`` (options and help), ``_data`` (files read),
``_model`` (the models offered, ``--fit`` and ``--remat``), ``_checks`` (numeric
options), ``_plan`` (what a fit is made of, built once), ``_fit_command`` (the command),
``_report`` (what is written and printed), ``_plot`` (the figure), ``_main`` (the entry
point and its error handling).
"""
