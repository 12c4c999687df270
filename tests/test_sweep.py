"""``nd.sweep``: equal to a Python loop over the grid, and to itself sharded across devices."""

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import tree_allclose

import netdyn as nd

CLOSE = {"rtol": 1e-12, "atol": 1e-12}  # a sweep against a loop of single runs
N_NODES = 5


@functools.cache  # the same fn: the loop below compiles it once for the tests sharing it
def _problem():
    """A small delayed, noisy RWW network and a function returning a pytree of arrays."""
    rng = np.random.default_rng(3)
    weights = rng.random((N_NODES, N_NODES))  # directed: W[target, source]
    lengths = rng.uniform(5.0, 40.0, (N_NODES, N_NODES))
    net = nd.Network(
        nd.ReducedWongWang(w=0.5, I_o=0.32),
        nd.DelayedLinear(G=0.5),
        nd.DelayGraph.from_lengths(weights, lengths, speed=4.0),
        nd.AdditiveNoise(0.01),
    )
    target = np.corrcoef(rng.random((20, N_NODES)).T)
    key = jax.random.key(11)

    def fn(net):
        sol = nd.simulate(
            net, nd.Heun(), t0=0.0, t1=300.0, dt=1.0,
            monitors={"tavg": nd.TemporalAverage(period=10.0)}, key=key,
        )
        x = sol["tavg"][:, 0]
        return {"r": nd.fc_correlation(nd.fc(x), target), "mean": jnp.mean(x, axis=0)}

    return fn, net


G_VALUES = np.linspace(0.0, 1.2, 7)


def _loop(fn, net, where, points):
    """The reference: ``fn`` on each modified model, one at a time."""
    run = eqx.filter_jit(fn)
    outs = [run(eqx.tree_at(where, net, p)) for p in points]
    return jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


@functools.cache
def _g_loop():
    """The reference of the one-parameter sweeps over ``G_VALUES``."""
    fn, net = _problem()
    return _loop(fn, net, lambda n: n.coupling.G, [jnp.asarray(g) for g in G_VALUES])


def test_one_parameter_matches_loop_with_ragged_batches(capsys):
    fn, net = _problem()
    where = lambda n: n.coupling.G  # noqa: E731
    # 7 points in batches of 3: the last batch is padded with 2 copies.
    got = nd.sweep(fn, net, G_VALUES, where=where, batch_size=3, progress=True)
    want = _g_loop()
    assert got["r"].shape == (7,) and got["mean"].shape == (7, N_NODES)
    tree_allclose(got, want, **CLOSE)
    # The results differ across the grid (the sweep did change G).
    assert np.ptp(got["r"]) > 1e-3
    assert "batch 3/3" in capsys.readouterr().err


def test_two_parameters_outer_product_with_per_region_values():
    fn, net = _problem()
    where = lambda n: (n.coupling.G, n.dynamics.I_o)  # noqa: E731
    gs = np.array([0.2, 0.9, 1.4])
    i_o = np.stack([np.full(N_NODES, 0.30), np.linspace(0.30, 0.34, N_NODES)])  # per region
    got = nd.sweep(fn, net, (gs, i_o), where=where, batch_size=4)
    assert got["r"].shape == (3, 2) and got["mean"].shape == (3, 2, N_NODES)
    points = [(jnp.asarray(g), jnp.asarray(i)) for g in gs for i in i_o]
    want = _loop(fn, net, where, points)
    want = jax.tree.map(lambda x: x.reshape((3, 2) + x.shape[1:]), want)
    tree_allclose(got, want, **CLOSE)


_SHARDED = """
import sys
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np
sys.path.insert(0, sys.argv[1])
import test_sweep as t
import netdyn as nd
assert len(jax.devices()) == 4, jax.devices()
fn, net = t._problem()
where = lambda n: n.coupling.G
# batch 6 -> 8 (a multiple of 4 devices): one batch of 7 points + 1 padding point.
out = nd.sweep(fn, net, t.G_VALUES, where=where, batch_size=6)
# Three of the four devices: batch 2 -> 3, three batches, the last one padded.
three = nd.sweep(fn, net, t.G_VALUES, where=where, batch_size=2, devices=jax.devices()[:3])
# Fewer points than devices: 2 points padded to one batch of 4.
few = nd.sweep(fn, net, t.G_VALUES[:2], where=where)
np.savez(sys.argv[2], **out, **{"three_" + k: v for k, v in three.items()},
         **{"few_" + k: v for k, v in few.items()})
"""


@pytest.mark.slow
def test_sharded_across_four_host_devices_matches_unsharded(tmp_path):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    out_file = tmp_path / "sharded.npz"
    done = subprocess.run(
        [sys.executable, "-c", _SHARDED, str(Path(__file__).parent), str(out_file)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # Against the loop of single runs (test_one_parameter_matches_loop_with_ragged_batches:
    # the unsharded sweep equals it).
    want = _g_loop()
    with np.load(out_file) as z:
        saved = {k: z[k] for k in z.files}
    tree_allclose({k: saved[k] for k in want}, want, **CLOSE)
    tree_allclose({k: saved["three_" + k] for k in want}, want, **CLOSE)
    tree_allclose({k: saved["few_" + k] for k in want},
                  jax.tree.map(lambda x: x[:2], want), **CLOSE)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(values=np.array([]), where=lambda n: n.coupling.G), "values"),
        (dict(values=np.float64(0.5), where=lambda n: n.coupling.G), "values"),
        (dict(values=(np.ones(2),), where=lambda n: ()), "where selects nothing"),
        (dict(values=np.ones(2), where=lambda n: n.coupling), "where"),
        (dict(values=np.ones(2), where=lambda n: (n.coupling.G, n.dynamics.w)), "values"),
        (dict(values=(np.ones(2), np.ones(0)), where=lambda n: (n.coupling.G, n.dynamics.w)),
         r"values\[1\]"),
        (dict(values=np.ones(2), where=lambda n: n.coupling.G, batch_size=0), "batch_size"),
        (dict(values=np.ones(2), where=lambda n: n.coupling.G, devices=[]), "devices"),
    ],
)
def test_bad_input_raises_naming_the_argument(kwargs, match):
    fn, net = _problem()
    with pytest.raises(ValueError, match=match):
        nd.sweep(fn, net, **kwargs)


def test_automatic_batch_fits_the_memory_budget(monkeypatch, capsys):
    # A budget that holds the program for a few grid points but not the whole grid: the
    # sweep must split the grid into batches (each within the budget, by XLA's memory
    # analysis) and still give the results of a Python loop, point by point.
    _, net = _problem()
    values = np.linspace(0.1, 0.9, 12)
    where = lambda n: n.coupling.G  # noqa: E731
    key = jax.random.key(1)

    def fn(m):
        sol = nd.simulate(m, nd.Heun(), t0=0.0, t1=200.0, dt=1.0,
                          monitors={"raw": nd.Raw(period=1.0)}, key=key)
        return sol["raw"]

    want = _loop(fn, net, where, values)
    # (The default budget, free memory, runs in the sharded test's ``few``.)
    # The memory of each program the sweep compiles, by XLA's memory analysis (per device:
    # its arguments, outputs and temporaries, less the outputs that reuse arguments).
    measured = []
    analysis = jax.stages.Compiled.memory_analysis

    def spy(compiled):
        m = analysis(compiled)
        measured.append(m.argument_size_in_bytes + m.output_size_in_bytes
                        + m.temp_size_in_bytes - m.alias_size_in_bytes)
        return m

    monkeypatch.setattr(jax.stages.Compiled, "memory_analysis", spy)

    def chosen(max_bytes: int) -> int:
        """The batch ``nd.sweep`` runs under ``max_bytes`` (its first progress line)."""
        capsys.readouterr()
        measured.clear()
        got = nd.sweep(fn, net, values, where=where, max_bytes=max_bytes, progress=True)
        tree_allclose(got, want, **CLOSE)
        first = capsys.readouterr().err.splitlines()[0]
        return int(re.search(r" batch 1/\d+ \((\d+) points\)", first)[1])

    # The whole grid fits: one batch, compiled once.
    assert chosen(2**40) == len(values) and len(measured) == 1
    whole = measured[0]
    # Not even one point fits: the whole grid, then one point measured, and refused.
    measured.clear()
    with pytest.raises(ValueError, match="one grid point per device needs"):
        nd.sweep(fn, net, values, where=where, max_bytes=1)
    assert len(measured) == 2 and measured[0] == whole
    one = measured[1]
    assert whole > one
    budget = int(one + 0.4 * (whole - one))
    batch = chosen(budget)
    # (The program run is the last one measured: the batch that fits.)
    assert 1 < batch < len(values) and measured[-1] <= budget
    with pytest.raises(ValueError, match="one grid point per device needs"):
        nd.sweep(fn, net, values, where=where, max_bytes=one - 1)


def test_a_repeated_sweep_reuses_its_compiled_program():
    # fn is traced once for two sweeps with the same fn, where and shapes (the program
    # was built inside each call, and compiled again, before).
    traces = []
    net = nd.Network(nd.LinearDynamics(gamma=-0.1), nd.Linear(G=0.1),
                     nd.DenseGraph(np.ones((2, 2))))

    def fn(n):
        traces.append(1)
        return n.coupling.G * jnp.sum(n.graph.weights)

    def where(n):
        return n.coupling.G

    first = nd.sweep(fn, net, np.linspace(0.0, 1.0, 4), where=where, batch_size=4)
    second = nd.sweep(fn, net, np.linspace(1.0, 2.0, 4), where=where, batch_size=4)
    np.testing.assert_allclose(first, 4 * np.linspace(0.0, 1.0, 4), rtol=1e-12)
    np.testing.assert_allclose(second, 4 * np.linspace(1.0, 2.0, 4), rtol=1e-12)
    assert len(traces) == 1
