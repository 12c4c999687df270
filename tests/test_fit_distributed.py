"""``fit_multistart`` and ``nd.sweep`` across two processes joined by ``jax.distributed``
(localhost, CPU): the single-process result, checked against a NumPy recurrence (fits) and
a Python loop (sweep); a two-process fit's checkpoint resumes in one process."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import netdyn as nd

# Two processes each compile their own programs (about 25 s in all): with -m slow, as CI runs.
pytestmark = pytest.mark.slow


class Toy(eqx.Module):
    x: jax.Array
    y: jax.Array


C, D, LR = np.array([1.0, -2.0, 0.5]), 4.0, 0.1
KEY_SEED = 7
# Three starts: over two devices (one per process) they are padded to four.
STARTS = (np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]),
          np.array([0.5, 6.0, -2.0]))


def noisy(m, key):
    """A quadratic whose minimum moves with the step's noise (``redraw=True``)."""
    z = jax.random.normal(key, (3,))
    return jnp.sum((m.x - C - 0.3 * z) ** 2) + (m.y - D) ** 2, {"z0": z[0]}


def where(m):
    return m.x, m.y


def run(steps, loss_fn=noisy, **kw):
    """The fit every process runs (and the single-process reference)."""
    toy = Toy(x=jnp.zeros(3), y=jnp.asarray(0.0))
    return nd.fit_multistart(toy, loss_fn, optax.sgd(LR), where=where,
                             starts=tuple(jnp.asarray(s) for s in STARTS), steps=steps,
                             key=jax.random.key(KEY_SEED), redraw=True, **kw)


def reference(steps):
    """Gradient descent by hand: ``x <- x - lr * 2 (x - c - 0.3 z_k)``, per start."""
    key = jax.random.key(KEY_SEED)
    x, y = STARTS[0].copy(), STARTS[1].copy()
    xs, losses = [], []
    for k in range(steps):
        z = np.asarray(jax.random.normal(jax.random.fold_in(key, k), (3,)))
        xs.append(x.copy())
        losses.append(np.sum((x - C - 0.3 * z) ** 2, axis=1) + (y - D) ** 2)
        x, y = x - LR * 2 * (x - C - 0.3 * z), y - LR * 2 * (y - D)
    return np.stack(xs), np.stack(losses), x, y


_JOIN = """
import sys
import jax
jax.config.update("jax_enable_x64", True)
port, rank, tests, out, ckpt = sys.argv[1:]
jax.distributed.initialize(coordinator_address="localhost:" + port, num_processes=2,
                           process_id=int(rank))
import numpy as np
import netdyn as nd
sys.path.insert(0, tests)
import test_fit_distributed as t
assert jax.process_count() == 2 and len(jax.devices()) == 2, jax.devices()
"""

_FIT = _JOIN + """
local = []

def record(sharding):
    # The rows of the starts' parameters (x: [starts, 3], padded to 4 starts) that this
    # process's devices hold in the compiled step (told at each compilation: a step run on
    # parameters placed otherwise would be compiled, and told, anew).
    rows = sharding.addressable_devices_indices_map((4, 3)).values()
    local.append(sorted((range(4)[i[0]].start, range(4)[i[0]].stop) for i in rows))

def spying(m, key):
    jax.debug.inspect_array_sharding(m.x, callback=record)
    return t.noisy(m, key)

fitted, h = t.run(6, loss_fn=spying, checkpoint=nd.Checkpoint(ckpt, every=4))
np.savez(out, x=np.asarray(fitted.x), y=np.asarray(fitted.y), best=h.best, loss=h.loss,
         params_x=h.params["x"], z0=h.metrics["z0"], local=np.asarray(local))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _two_processes(script: str, tmp_path, ckpt) -> None:
    """Run ``script`` in two local CPU processes (one device each) joined by
    ``jax.distributed``; process ``i`` writes ``tmp_path / f"out{i}.npz"``."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    port = str(_free_port())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, port, str(rank), str(Path(__file__).parent),
             str(tmp_path / f"out{rank}.npz"), str(ckpt)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for rank in (0, 1)
    ]
    logs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(x[-3000:] for x in logs)


def test_fit_multistart_in_two_processes_gives_the_single_process_result(tmp_path):
    ckpt = tmp_path / "starts.ckpt"
    _two_processes(_FIT, tmp_path, ckpt)

    xs, losses, x_end, y_end = reference(6)
    single, h = run(6)
    best = int(np.argmin(losses[-1]))
    assert h.best == best
    for rank in (0, 1):
        with np.load(tmp_path / f"out{rank}.npz") as got:
            # Each process ran two of the four starts (three, and a copy of the last) ...
            rows = [[0, 2], [2, 4]][rank]
            assert len(got["local"]) >= 1
            np.testing.assert_array_equal(got["local"], np.full((len(got["local"]), 1, 2),
                                                                rows))
            # ... and holds the whole result, that of one process.
            assert int(got["best"]) == best
            np.testing.assert_allclose(got["loss"], h.loss, rtol=1e-13)
            np.testing.assert_allclose(got["params_x"], h.params["x"], rtol=1e-13)
            np.testing.assert_allclose(got["z0"], h.metrics["z0"], rtol=1e-13)
            np.testing.assert_allclose(got["x"], single.x, rtol=1e-13)
            np.testing.assert_allclose(got["y"], single.y, rtol=1e-13)
            # ... and that of gradient descent by hand (three starts, not the padded four).
            assert got["loss"].shape == (6, 3)
            np.testing.assert_allclose(got["loss"], losses, rtol=1e-12)
            np.testing.assert_allclose(got["params_x"], xs, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(got["x"], x_end[best], rtol=1e-12)
            np.testing.assert_allclose(got["y"], y_end[best], rtol=1e-12)

    # Process 0 wrote one checkpoint (no temporary file left) of three starts at step 6;
    # one process continues it to step 8 as it continues its own.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out0.npz", "out1.npz",
                                                          "starts.ckpt"]
    resumed, hr = run(8, checkpoint=nd.Checkpoint(ckpt, resume=True))
    whole, hw = run(8)
    np.testing.assert_allclose(hr.loss, hw.loss, rtol=1e-13)
    np.testing.assert_allclose(hr.params["x"], hw.params["x"], rtol=1e-13)
    np.testing.assert_allclose(resumed.x, whole.x, rtol=1e-13)


_SWEEP = _JOIN + """
import netdyn as nd
import test_sweep
fn, net = test_sweep._problem()
# 7 points in batches of 3 over 2 devices: batches of 4, the last one padded.
res = nd.sweep(fn, net, test_sweep.G_VALUES, where=lambda n: n.coupling.G, batch_size=3)
np.savez(out, **res)
"""


def test_sweep_in_two_processes_gives_the_loop_result(tmp_path):
    import test_sweep

    _two_processes(_SWEEP, tmp_path, tmp_path / "unused")
    fn, net = test_sweep._problem()
    where = lambda n: n.coupling.G  # noqa: E731
    want = test_sweep._loop(fn, net, where, [jnp.asarray(g) for g in test_sweep.G_VALUES])
    for rank in (0, 1):
        with np.load(tmp_path / f"out{rank}.npz") as got:
            for name in want:
                np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-12)
