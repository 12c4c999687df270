"""The ``netdyn`` command line (public as ``netdyn.cli``): it parses options, calls the
library and prints. What it computes is library work, public and tested there; its
modules, one concern each, and the path of a fit through them are drawn in
``docs/architecture.md`` ("The command line: ``netdyn fit``")."""
