"""``choose_remat``: the concrete strategy of an ``Auto`` budget, for one run's structure."""

import equinox as eqx
import jax

from .._monitor._base import AbstractMonitor
from .._network import Network
from .._parameterisation.input_gain import resolve_for_simulation
from .._remat.auto import Auto, RematChoice, choose
from .._solver._base import AbstractSolver
from ._arguments import check_history_kind, check_key, check_parts
from ._setup import setup


def choose_remat(
    network: Network,
    solver: AbstractSolver,
    *,
    t0: float,
    t1: float,
    dt: float,
    monitors: dict[str, AbstractMonitor] | None = None,
    key=None,
    history=None,
) -> RematChoice:
    """The strategy the ``nd.Auto`` budget ``solver.remat`` chooses for this run.

    Takes ``simulate``'s arguments and returns a ``RematChoice``: ``strategy``, the
    first candidate of ``Auto``'s rule whose compiled gradient of the time loop fits
    ``max_bytes`` (see ``nd.Auto``), and ``temp_bytes``, that gradient's compiled
    temporary memory. ``ValueError`` if none fits.

    The choice depends only on the structure of the run: the shapes and dtypes of the
    arrays in ``network``, ``solver``, ``monitors``, ``key`` and ``history`` (which may
    be concrete arrays or ``jax.ShapeDtypeStruct``; their values are never read), the
    static parts of the modules, and ``t0``, ``t1``, ``dt``. ``simulate`` calls this
    function when its solver's remat is an ``Auto``, in every trace. Call it yourself,
    outside ``jax.jit``, to see the choice, or to compile the candidates once and reuse
    the strategy::

        solver = nd.Heun(remat=nd.Auto(max_bytes=50_000_000))
        choice = nd.choose_remat(net, solver, t0=0.0, t1=60_000.0, dt=1.0,
                                 monitors=monitors, key=key)
        sol = nd.simulate(net, nd.Heun(remat=choice.strategy), t0=0.0, t1=60_000.0,
                          dt=1.0, monitors=monitors, key=key)

    Pass the arguments as the ``simulate`` to be run sees them: a parameter that is
    traced there (one you differentiate or ``vmap`` over) must be an array here too, e.g.
    ``eqx.tree_at(lambda n: n.coupling.G, net, jnp.asarray(0.5))``, not the Python float
    ``0.5``, which ``simulate`` compiles in as a constant (another loop, another figure).

    The strategy is a plain module (``NoRemat``, ``Uniform``, ``Nested`` or
    ``MultiLevel``, with ``Auto``'s ``unroll`` resolved for the default backend):
    printing it gives the arguments to hard-code.
    """
    check_parts(network, solver)
    if not isinstance(solver.remat, Auto):
        raise ValueError(
            f"choose_remat: solver.remat must be an nd.Auto budget, got "
            f"{type(solver.remat).__name__} (a concrete strategy: use it as it is)."
        )
    check_history_kind(history)
    check_key(key)
    # Shapes and dtypes as ``simulate``'s ``eqx.filter_jit`` sees them (weak types and
    # dtype canonicalisation included); non-array leaves stay static, as there.
    inputs = eqx.filter_eval_shape(lambda x: x, (network, solver, monitors, key, history))
    dynamic, static = eqx.partition(inputs, lambda x: isinstance(x, jax.ShapeDtypeStruct))

    def build(dynamic):
        network, solver, monitors, key, history = eqx.combine(dynamic, static)
        run = setup(resolve_for_simulation(network), solver, t0=t0, t1=t1, dt=dt,
                    monitors=monitors, key=key, history=history)
        return run.parts, run.carry, run.grid.n_steps, run.schedule.every

    def loop(parts, carry):
        # As in ``simulate`` (under its ``filter_jit``), every array of ``parts`` is traced.
        step, step_consts = _hoisted(parts.step(), carry)
        emit, emit_consts = _hoisted(parts.emit(), carry)
        return (lambda c, k: step(c, k[0]), lambda c, k: emit(c, k[1]),
                (step_consts, emit_consts))

    parts, carry, n_steps, every = eqx.filter_eval_shape(build, dynamic)
    # The step and the emission leave this trace as functions of abstract values (the
    # traced values they read become ``consts``): the candidates compile outside it.
    step, emit, consts = eqx.filter_eval_shape(loop, parts, carry)
    return choose(solver.remat, step, emit, carry, consts, n_steps, every)


def _hoisted(fn, carry):
    """``fn(carry)`` as ``(f(carry, consts), consts)``: ``consts`` are the traced values
    ``fn`` closes over (``jax.closure_convert``, but for every traced value, integers
    too, so that ``f`` closes over concrete constants only)."""
    closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(carry)
    traced = [isinstance(c, jax.core.Tracer) for c in closed.consts]
    fixed = [c for c, t in zip(closed.consts, traced) if not t]
    consts = [c for c, t in zip(closed.consts, traced) if t]
    jaxpr, out_tree = closed.jaxpr, jax.tree.structure(out_shape)

    def f(carry, consts):
        hoisted, kept = iter(consts), iter(fixed)
        values = [next(hoisted) if t else next(kept) for t in traced]
        out = jax.core.eval_jaxpr(jaxpr, values, *jax.tree.leaves(carry))
        return jax.tree.unflatten(out_tree, out)

    return f, consts
