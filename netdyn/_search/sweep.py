"""``sweep``: evaluate a function of a model over a grid of parameter values, in batches,
``vmap``-ed within a batch and sharded across devices."""

import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from jaxtyping import PyTree

from .._custom_types import ArrayLike
from .._memory.device import fitting_batch, free_bytes, program_bytes

_AXIS = "batch"


def _is_parameter(x) -> bool:
    if isinstance(x, bool):
        return False
    return eqx.is_array(x) or isinstance(x, (int, float, complex, np.number))


def _selection(where: Callable, model) -> tuple[bool, tuple]:
    """``(several, nodes)``: whether ``where`` selects a sequence, and the selected nodes."""
    selected = where(model)
    several = isinstance(selected, (tuple, list))
    nodes = tuple(selected) if several else (selected,)
    if not nodes:
        raise ValueError("where selects nothing: it must return a parameter or a tuple of them.")
    for i, node in enumerate(nodes):
        if not _is_parameter(node):
            which = f"where(model)[{i}]" if several else "where(model)"
            raise ValueError(
                f"{which} must be a parameter (an array or a number leaf of the model), "
                f"got {type(node).__name__}."
            )
    return several, nodes


def _grid_values(values, several: bool, n_params: int) -> list[np.ndarray]:
    if several:
        if not isinstance(values, (tuple, list)) or len(values) != n_params:
            got = len(values) if isinstance(values, (tuple, list)) else type(values).__name__
            raise ValueError(
                f"where selects {n_params} parameters, so values must be a tuple of "
                f"{n_params} arrays (one per grid axis), got {got}."
            )
        values = list(values)
    else:
        values = [values]
    out = []
    for i, v in enumerate(values):
        name = f"values[{i}]" if several else "values"
        if isinstance(v, jax.core.Tracer):
            raise ValueError(f"{name} must be concrete (sweep runs outside jit), got a tracer.")
        v = np.asarray(v)
        if v.ndim == 0 or v.shape[0] == 0:
            raise ValueError(
                f"{name} must have a non-empty leading (grid) axis, got shape {v.shape}."
            )
        if not (np.issubdtype(v.dtype, np.floating) or np.issubdtype(v.dtype, np.complexfloating)):
            v = v.astype(jnp.result_type(float))
        out.append(v)
    return out


def batch_shardings(devices: Sequence[jax.Device]) -> tuple[NamedSharding, NamedSharding]:
    """``(split, replicated)``: arrays split along their leading (batch) axis across
    ``devices``, and arrays held whole by every device (a one-axis ``Mesh``)."""
    mesh = Mesh(np.asarray(devices), (_AXIS,))
    return NamedSharding(mesh, PartitionSpec(_AXIS)), NamedSharding(mesh, PartitionSpec())


def padded_index(n: int, n_devices: int) -> np.ndarray:
    """Rows ``0, ..., n - 1``, then copies of the last one up to a multiple of
    ``n_devices``: a batch that splits evenly, whose padding is dropped from the results."""
    size = math.ceil(n / n_devices) * n_devices
    return np.concatenate([np.arange(n), np.full(size - n, n - 1)])


def global_array(x, sharding: NamedSharding) -> jax.Array:
    """``x`` (the same host or device data in every process) placed with ``sharding``."""
    if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        # Typed PRNG keys go as their raw data (what NumPy can hold).
        data = global_array(jax.random.key_data(x), sharding)
        return jax.random.wrap_key_data(data, impl=jax.random.key_impl(x))
    if jax.process_count() == 1:
        return jax.device_put(x, sharding)
    # Several processes (jax.distributed): each one supplies the shards its own devices
    # hold, from the same host data.
    host = np.asarray(x)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def host_array(x: jax.Array) -> np.ndarray:
    """The whole of ``x`` as a NumPy array in every process (a collective when ``x`` spans
    several processes: every process must call it)."""
    if x.is_fully_addressable:
        return np.asarray(x)
    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def _report(stream, done: int, total: int, points: int, start: float) -> None:
    width = 30
    filled = round(width * done / total)
    elapsed = time.perf_counter() - start
    line = (
        f"sweep [{'#' * filled}{'.' * (width - filled)}] batch {done}/{total} "
        f"({points} points) {elapsed:.1f} s"
    )
    interactive = stream.isatty()
    end = ("\n" if done == total else "") if interactive else "\n"
    stream.write(("\r" if interactive else "") + line + end)
    stream.flush()


def _check_sizes(batch_size, max_bytes) -> None:
    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
    if max_bytes is not None and not (
        isinstance(max_bytes, (int, np.integer)) and not isinstance(max_bytes, bool)
        and max_bytes > 0
    ):
        raise ValueError(f"max_bytes must be a positive integer, got {max_bytes!r}.")


def _assemble(chunks, n_points: int, grid_shape: tuple[int, ...]):
    """The batches' results joined, padding dropped, reshaped to the grid."""

    def join(*parts):
        whole = np.concatenate(parts, axis=0)[:n_points]
        return whole.reshape(grid_shape + whole.shape[1:])

    return jax.tree.map(join, *chunks)


@eqx.filter_jit
def _evaluate(fn, where, several: bool, static, arrays, params):
    """``fn`` at each point of a batch (``vmap`` over ``params``). Module level, with ``fn``,
    ``where`` and the model's non-array part as static arguments: a later ``sweep`` with
    the same ``fn`` and ``where`` objects and shapes reuses the compiled program (one built
    inside each call was compiled again at every call)."""

    def one(p):
        m = eqx.combine(arrays, static)
        select = (lambda n: tuple(where(n))) if several else where
        return fn(eqx.tree_at(select, m, p if several else p[0]))

    return jax.vmap(one)(params)


def _batch_runner(fn, where, several: bool, model, points: list, devices,
                  batch_size: int | None, max_bytes: int | None):
    """``(batch, run)``: the grid points per batch (``batch_size`` rounded up to whole
    devices, or the largest that fits in ``max_bytes``) and ``run(index)``, ``fn`` at
    the points ``index`` of ``points``, split across ``devices`` (``None``: all)."""
    devices = list(jax.devices() if devices is None else devices)
    if not devices:
        raise ValueError("devices must not be empty.")
    n_points, n_devices = len(points[0]), len(devices)
    split, replicated = batch_shardings(devices)
    arrays, static = eqx.partition(model, eqx.is_array)
    arrays = jax.tree.map(lambda x: global_array(x, replicated), arrays)

    def batch_params(index):
        return tuple(global_array(np.ascontiguousarray(p[index]), split) for p in points)

    def compile_at(batch):
        index = padded_index(min(batch, n_points), batch)
        compiled = _evaluate.lower(fn, where, several, static, arrays,
                                   batch_params(index)).compile()

        def run(arrays, params):
            return compiled(fn, where, several, static, arrays, params)

        return run, program_bytes(compiled.compiled)

    if batch_size is None:
        budget = int(0.8 * free_bytes(devices)) if max_bytes is None else int(max_bytes)
        batch, evaluate = fitting_batch(compile_at, n_points, n_devices, budget)
    else:
        batch = math.ceil(min(int(batch_size), n_points) / n_devices) * n_devices

        def evaluate(arrays, params):
            return _evaluate(fn, where, several, static, arrays, params)

    return batch, lambda index: evaluate(arrays, batch_params(index))


def sweep(
    fn: Callable[[Any], PyTree[ArrayLike]],
    model: Any,
    values: ArrayLike | Sequence[ArrayLike],
    *,
    where: Callable[[Any], Any],
    batch_size: int | None = None,
    devices: Sequence[jax.Device] | None = None,
    progress: bool = False,
    max_bytes: int | None = None,
) -> PyTree[np.ndarray]:
    r"""Evaluate ``fn(model)`` over a grid of parameter values.

    For every grid point, the parameter(s) selected by ``where`` are replaced by that
    point's values (as ``eqx.tree_at(where, model, value)``) and ``fn`` is evaluated on the
    modified model. Grid points are processed in batches of ``batch_size``: within a batch,
    ``fn`` runs under ``jax.vmap`` (one compiled program for the batch), and the batch axis
    is split across ``devices`` with ``jax.sharding`` (a one-axis ``Mesh`` and a
    ``NamedSharding``; the model's arrays are replicated on every device).

    **One parameter**: ``where`` returns one leaf and ``values`` is an array whose leading
    axis is the grid, ``[n, *shape]`` (``shape`` is ``()`` for a scalar parameter,
    ``(nodes,)`` for a per-region one). The results have leading shape ``[n]``.

    **Several parameters**: ``where`` returns a tuple of ``k`` leaves and ``values`` is a
    tuple of ``k`` such arrays, ``[n_1, ...], ..., [n_k, ...]``. The grid is their outer
    product and the results have leading shape ``[n_1, ..., n_k]``: entry ``[i, j]`` is
    ``fn`` at the ``i``-th value of the first parameter and the ``j``-th of the second.

    ```python
    import jax, jax.numpy as jnp, numpy as np, netdyn as nd

    def fit_quality(net):       # any function of the model returning arrays
        sol = nd.simulate(net, nd.Heun(), t0=0.0, t1=60_480.0, dt=1.0,  # 84 TRs
                          monitors={"bold": nd.Bold(period=720.0, warmup=10_080.0)},
                          key=jax.random.key(0), batch_last=True)
        return nd.fc_correlation(nd.fc(sol["bold"]), data.fc)

    r = nd.sweep(fit_quality, net, np.linspace(0.0, 1.0, 32),
                 where=lambda n: n.coupling.G, batch_size=8)                 # r: [32]
    r2 = nd.sweep(fit_quality, net, (np.linspace(0.0, 1.0, 16), np.linspace(0.3, 0.4, 8)),
                  where=lambda n: (n.coupling.G, n.dynamics.I_o))           # r2: [16, 8]
    ```

    **Arguments**:

    - ``fn``: a function of the model returning an array or a pytree of arrays. It is
      traced once per batch shape, so it must be JAX-transformable (``nd.simulate``,
      ``nd.fc``, ... are). Randomness: close over a key; every grid point then sees the
      same noise (common random numbers, which makes neighbouring points comparable).
      A sweep that leaves the graph alone runs its simulations faster with
      ``nd.simulate(..., batch_last=True)`` (the batch on the trailing axis of the delay
      buffer; see ``simulate``), as in the example.
    - ``model``: any pytree, typically a ``Network`` (or a tuple holding several modules).
    - ``values``: the grid values, as above. Integer values are converted to floats.
    - ``where``: selects the swept parameter(s) of ``model``, as in ``eqx.tree_at``.
    - ``batch_size``: grid points per batch. It is rounded up to a multiple of the number
      of devices; the last batch is padded (with copies of the last grid point, whose
      results are dropped) so that every batch has the same shape and ``fn`` compiles
      once. Default (``None``): the largest batch that fits in the devices' memory, from
      XLA's memory analysis of the compiled batch (the whole grid when it fits, without
      extra compilation; otherwise the memory is measured at one point per device, taken
      as linear in the batch, and the batch chosen from that line).
    - ``devices``: the devices to split each batch across (default ``jax.devices()``: all
      devices, of every process after ``jax.distributed.initialize``).
    - ``progress``: print a plain-text progress line to ``stderr`` after each batch.
    - ``max_bytes``: the memory per device that the automatic batch may use (default:
      80 % of what the devices have free: ``memory_stats`` on accelerators, the host's
      available memory shared among the CPU devices). Ignored with ``batch_size``.

    **Returns**: ``fn``'s output structure, each leaf a NumPy array (on the host) of shape
    ``[*grid, *leaf_shape]``.

    On several hosts, call ``jax.distributed.initialize()`` first and run the same
    ``sweep`` call in every process: each process feeds its own devices' shards and
    receives the full results.
    """
    several, nodes = _selection(where, model)
    grid = _grid_values(values, several, len(nodes))
    grid_shape = tuple(v.shape[0] for v in grid)
    n_points = math.prod(grid_shape)
    _check_sizes(batch_size, max_bytes)

    # Flat list of grid points (row-major, as numpy.ndindex).
    axes = np.indices(grid_shape).reshape(len(grid_shape), -1)
    points = [v[a] for v, a in zip(grid, axes)]
    batch, run = _batch_runner(fn, where, several, model, points, devices, batch_size,
                               max_bytes)
    index = padded_index(n_points, batch)  # padded to whole batches
    n_batches = len(index) // batch

    start = time.perf_counter()
    chunks = []
    for b in range(n_batches):
        out = run(index[b * batch : (b + 1) * batch])
        chunks.append(jax.tree.map(host_array, out))
        if progress:
            _report(sys.stderr, b + 1, n_batches, min((b + 1) * batch, n_points), start)

    return _assemble(chunks, n_points, grid_shape)
