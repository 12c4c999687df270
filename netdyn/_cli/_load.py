"""``load_fitted``: the network a finished ``netdyn fit`` fitted, back in Python."""

import argparse
import os
from pathlib import Path

import equinox as eqx
import jax

from .._network import Network
from .._persistence.strict_json import read_json_object
from ._plan import FitPlan, plan_options
from ._run_folder import MODEL, SETTINGS


def load_fitted(folder: str | os.PathLike) -> tuple[Network, FitPlan]:
    """The fitted network of the ``netdyn fit`` whose results are in ``folder``, and the
    plan of that fit (``nd.cli.plan`` of its options: data, losses, fitted leaves).

    The network's structure is rebuilt from ``folder/settings.json`` (the options, with
    the files they name read again) and its leaves are read from ``folder/model.eqx``
    (``eqx.tree_deserialise_leaves``), so ``nd.simulate(network, ...)`` continues from
    exactly what the command fitted. Turns on ``jax_enable_x64``, as the command does.
    A folder without a finished fit raises a ``ValueError`` that names the file.
    """
    folder = Path(folder)
    model = folder / MODEL
    if not model.is_file():
        raise ValueError(f"nd.cli.load_fitted: {model} does not exist; {folder} holds no "
                         "finished fit (the command writes it with params.json).")
    options = read_json_object(folder / SETTINGS, "nd.cli.load_fitted: ")["settings"]
    jax.config.update("jax_enable_x64", True)  # as the netdyn command does
    planned = plan_options(argparse.Namespace(command="fit", **options))
    return eqx.tree_deserialise_leaves(model, planned.network), planned
