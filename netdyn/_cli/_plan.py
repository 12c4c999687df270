"""``plan``: what ``netdyn fit`` would fit, built from its command line without simulating."""

import argparse
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import optax

from .._fit.optimizer import fit_optimizer
from .._loss._base import AbstractFcLoss
from .._loss.fc_loss import FcLoss
from .._loss.linear_fc_loss import LinearFcLoss
from .._network import Network
from .._observation.runs import pooled_fcd_values
from .._remat.parse import parse_remat
from .._solver.heun import Heun
from ._data import FitData, RegionMaps, load_data, read_maps
from ._model import network, selection
from ._options import check_numbers, fill_defaults, naming
from ._parser import build_parser


class FitPlan(NamedTuple):
    """The pieces of a ``netdyn fit`` run, as ``nd.cli.plan`` builds them.

    - ``options``: the parsed command line (``argparse.Namespace``; defaults filled in).
    - ``data``: the connectome, the FC fitted and the runs (training and test).
    - ``network``: the ``nd.Network`` at the start (G, sigma in the library's units), with
      the fitted parameters as arrays.
    - ``where``, ``bounds``: the fitted leaves and their bounds, as for ``nd.fit``.
    - ``maps``: the regional maps of ``NAME:maps`` parameters (``None`` without).
    - ``loss``: the fit's loss (``--engine``: an ``nd.FcLoss`` or an ``nd.LinearFcLoss``).
    - ``simulated_loss``, ``heldout_loss``: the ``nd.FcLoss`` of the fit's settings (the
      fit's own loss with ``--engine simulation``; the fitted model's simulated scores on
      the training FC) and of the held-out check.
    - ``step_scales``: each fitted leaf's share of the learning rate (``None``: all 1).
    - ``optimizer``: the Optax optimizer of the fit.
    """

    options: argparse.Namespace
    data: FitData
    network: Network
    where: Any
    bounds: tuple
    maps: RegionMaps | None
    loss: AbstractFcLoss
    simulated_loss: FcLoss
    heldout_loss: FcLoss
    step_scales: tuple[float, ...] | None
    optimizer: optax.GradientTransformation


def plan(argv: Sequence[str]) -> FitPlan:
    """What ``netdyn fit`` would fit for the command line ``argv`` (starting with
    ``"fit"``), without simulating or writing anything: ``nd.cli.plan(["fit", "--model",
    "hopf"]).network`` is the network the command starts from; continue in Python from
    there (``nd.fit(plan.network, plan.loss, plan.optimizer, where=plan.where, ...)``).

    Turns on ``jax_enable_x64`` for the process, as the command does. Bad options raise a
    ``ValueError`` naming the option (the command prints it as its one-line error).
    """
    args = build_parser().parse_args(list(argv))
    jax.config.update("jax_enable_x64", True)  # as the netdyn command does
    return plan_options(args)


def plan_options(args: argparse.Namespace) -> FitPlan:
    """``plan`` from parsed options (``netdyn fit`` itself starts here)."""
    if args.command != "fit":
        raise ValueError(f"nd.cli.plan: only the fit command has a plan, got {args.command!r}.")
    data = load_data(args)  # first: it sets --tr from the runs when not given
    fill_defaults(args)
    check_numbers(args)
    fcd_samples(args)
    with naming("--speed", "speed"):
        net, monitor = network(args, data.weights, data.lengths)  # built once
    maps = read_maps(args.maps, data.weights, data.target) if ":maps" in args.fit else None
    where, bounds, net = selection(args, net, maps)  # once
    with naming("--remat"):
        solver = Heun(remat=parse_remat(args.remat))
    with naming("--realisations", "FcLoss realisations"):
        simulated = FcLoss(data.target, solver, monitor, duration=args.duration, dt=args.dt,
                           metric=args.loss, burn_in=args.burn_in,
                           realisations=args.realisations,
                           burn_in_gradient=args.burn_in_gradient, **fcd_terms(args, data))
    loss = simulated if args.engine == "simulation" else LinearFcLoss(
        data.target, monitor, metric=args.loss)
    with naming("--heldout-realisations", "FcLoss realisations"):
        heldout = simulated.replace(duration=args.heldout_duration,
                                    realisations=args.heldout_realisations)
    scales = where.step_scales(net)
    return FitPlan(args, data, net, where, bounds, maps, loss, simulated, heldout, scales,
                   fit_optimizer(args.lr, args.steps, args.redraw, scales))


def fcd_samples(args) -> tuple[int, int]:
    """The FCD window and step in samples (TRs): ``--fcd-window``/``--fcd-step``, else
    60 s and 2 s in whole TRs."""
    window = args.fcd_window if args.fcd_window is not None else max(2, round(60_000 / args.tr))
    step = args.fcd_step if args.fcd_step is not None else max(1, round(2_000 / args.tr))
    if window < 2 or step < 1:
        raise ValueError(f"--fcd-window must be >= 2 and --fcd-step >= 1 TRs, got {window} "
                         f"and {step}.")
    return window, step


def fcd_terms(args, data: FitData) -> dict:
    """The FCD term's arguments of ``FcLoss`` (none without ``--fcd-weight``): the target
    is the training subjects' FCD values, pooled."""
    if args.fcd_weight <= 0:
        return {}
    window, step = fcd_samples(args)
    if data.train is None:
        raise ValueError("--fcd-weight needs BOLD runs to fit (--bold or a dataset with "
                         "runs, and --train-subjects).")
    samples = round(args.duration / args.tr)
    if window > samples:
        raise ValueError(f"--fcd-weight: the FCD window ({window} TRs, --fcd-window) is "
                         f"longer than each simulated run ({samples} TRs, --duration "
                         f"{args.duration:g} ms): lengthen --duration or shorten the "
                         "window.")
    return {"fcd_target": pooled_fcd_values(data.train, window, step,
                                            "--fcd-window: the training subjects"),
            "fcd_window": (window, step), "fcd_weight": args.fcd_weight, "fcd_metric": "ks"}
