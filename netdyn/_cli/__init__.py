"""The ``netdyn`` command line (public as ``netdyn.cli``): it parses options, calls the
library and prints. What it computes is library work, public and tested there
(``nd.presets.MODELS`` and ``nd.presets.select``, ``nd.maps.from_spec``,
``nd.datasets.read_matrix``, ``nd.parse_remat``, ``nd.fit_optimizer``, ``nd.scan_record``,
``nd.long_check``, ``nd.RunSettings``, ``nd.plot.fit_figure``, ...).

One concern a module: ``_parser`` (options), ``_options`` (their description, the defaults
that depend on other options: ``--engine auto``, ``--quick``; the checks of numeric
options), ``_data`` (files read, regional maps), ``_model`` (the models offered, ``--fit``
and ``--remat``), ``_plan`` (what a fit is made of, built once), ``_fit_command`` (the
command), ``_evaluation`` (the fitted model's own FC, the held-out and the long check),
``_uncertainty`` (error bars), ``_report`` (what is written and printed, ``netdyn
summary`` too), ``_run_folder`` (``--out``, ``--resume``, and ``load_fitted``: a finished
fit back in Python), ``_main`` (the entry point and its error handling).
"""
