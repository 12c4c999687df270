"""``nd.Chained``: a loss evaluated along persistent chains. Each step continues one long
run exactly (against ``nd.simulate`` of the whole chain), its gradient is the derivative
of the step's objective with the chain's state held fixed (central differences), and
``nd.fit`` carries the chains (in its state and checkpoint) without changing the loss
it reports."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from toy_networks import hopf

import netdyn as nd

N = 4
DT = 0.5
MONITOR = nd.Bold(period=50.0, variables=("x",))


def _network(G=0.3):
    return hopf(N, 1, G=G, a=-0.1, omega=0.2, sigma=0.05, max_delay=6.0)


def _loss(**kw):
    kw = {"duration": 300.0, "dt": DT, "metric": "1-r+mean", "burn_in": 200.0, **kw}
    target = np.corrcoef(np.random.default_rng(2).normal(size=(N, 40)))
    return nd.FcLoss(target, nd.Heun(remat=nd.Uniform(100)), MONITOR, **kw)


def test_chain_continues_one_long_run_exactly():
    # Two steps of one realisation: burn-in 200 ms, then each step 100 ms + 300 ms, the
    # first with key k1 (with the burn-in: one simulation of 600 ms), the second with k2
    # (that simulation's continuation with another key, to 1000 ms).
    net, k1, k2 = _network(), jax.random.key(3), jax.random.key(5)
    chained = nd.Chained(_loss(), burn_in=80.0)  # rounded up to 100 ms, whole periods
    assert chained.burn_in == 100.0
    start = eqx.filter_jit(chained.start)(net, k1)
    assert start.y.shape[0] == 1  # one chain per realisation
    step = eqx.filter_jit(lambda n, k, s: chained.continue_from(n, k, s))
    v1, m1, end1 = step(net, k1, start)
    v2, m2, end2 = step(net, k2, end1)

    monitors = {"s": MONITOR}
    whole = nd.simulate(net, nd.Heun(), t0=0.0, t1=600.0, dt=DT, monitors=monitors, key=k1)
    first = np.asarray(whole["s"][6:, 0])  # samples of 300-600 ms
    then = nd.simulate(net, nd.Heun(), t0=600.0, t1=1000.0, dt=DT, monitors=monitors, key=k2,
                       history=whole.final)
    second = np.asarray(then["s"][2:, 0])
    loss = chained.loss
    for value, metrics, x in ((v1, m1, first), (v2, m2, second)):
        fc = np.corrcoef(x.T)
        iu = np.triu_indices(N, 1)
        r = np.corrcoef(fc[iu], np.asarray(loss.target)[iu])[0, 1]
        gap = fc[iu].mean() - np.asarray(loss.target)[iu].mean()
        np.testing.assert_allclose(float(metrics["fc_r"]), r, rtol=1e-10)
        np.testing.assert_allclose(float(value), 1 - r + abs(gap), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(end2.y[0]), np.asarray(then.final.y), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(end2.buffer[0]), np.asarray(then.final.buffer),
                               rtol=1e-12)


def test_chained_call_is_the_loss_itself():
    net, key = _network(), jax.random.key(1)
    loss = _loss()
    chained = nd.Chained(loss, burn_in=100.0)
    assert float(chained(net, key)[0]) == float(loss(net, key)[0])


def test_chained_gradient_holds_the_chain_fixed():
    # d/dG of the step's value, the chain's state fixed, against central differences of
    # the same function (same key, same carry).
    key = jax.random.key(7)
    chained = nd.Chained(_loss(realisations=2), burn_in=100.0)
    carry = eqx.filter_jit(chained.start)(_network(G=jnp.asarray(0.3)), key)

    @jax.jit
    def value(G):
        return chained.continue_from(_network(G=G), key, carry)[0]

    g = float(jax.jit(jax.grad(value))(jnp.asarray(0.3)))
    h = 1e-4
    fd = (float(value(jnp.asarray(0.3 + h))) - float(value(jnp.asarray(0.3 - h)))) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8)


def test_chained_rejects_what_is_not_an_fc_loss_or_a_burn_in(no_type_hook):
    with pytest.raises(ValueError, match="Chained loss must be an nd.FcLoss"):
        nd.Chained(lambda m, k: 0.0, burn_in=10.0)
    with pytest.raises(ValueError, match="Chained burn_in"):
        nd.Chained(_loss(), burn_in=-1.0)


def test_keep_best_with_a_chained_loss_is_an_error():
    # Each step continues the chains with new noise: the lowest loss is the luckiest noise.
    with pytest.raises(ValueError, match="keep='best' with the chained loss Chained"):
        nd.fit(_network(), nd.Chained(_loss(), burn_in=100.0), optax.adam(0.05),
               where=lambda n: n.coupling.G, steps=2, key=jax.random.key(2), keep="best")


def _fit(folder, steps, resume=False, chained=True):
    folder.mkdir(exist_ok=True)
    net = _network()
    loss = nd.Chained(_loss(), burn_in=100.0) if chained else _loss()
    return nd.fit(net, loss, optax.adam(0.05), where=lambda n: n.coupling.G,
                  bounds=nd.Positive(), steps=steps, key=jax.random.key(2), redraw=True,
                  checkpoint=nd.Checkpoint(folder / "c.eqx", every=1, resume=resume))


def test_fit_carries_the_chains_and_resumes_them(tmp_path):
    fitted, history = _fit(tmp_path / "a", 3)
    # Step 0 continues the chain from the loss's burn-in with the step's key: the same
    # value as continue_from by hand.
    chained = nd.Chained(_loss(), burn_in=100.0)
    net = _network()
    k0 = jax.random.fold_in(jax.random.key(2), 0)
    carry = eqx.filter_jit(chained.start)(net, jax.random.key(2))
    v0 = eqx.filter_jit(lambda c, n, k, s: c.continue_from(n, k, s)[0])(chained, net, k0, carry)
    np.testing.assert_allclose(history.loss[0], float(v0), rtol=1e-12)
    # Interrupted after 2 steps and resumed: the chains come back from the checkpoint, so
    # the third step is bit for bit the uninterrupted one.
    _fit(tmp_path / "b", 2)
    _, resumed = _fit(tmp_path / "b", 3, resume=True)
    np.testing.assert_array_equal(resumed.loss, history.loss)
    # A fit without chains cannot resume a chained fit's checkpoint.
    with pytest.raises(ValueError, match="with a chained loss"):
        _fit(tmp_path / "b", 4, resume=True, chained=False)


def test_fit_multistart_carries_one_set_of_chains_per_start():
    # Two starts of G: each start's first loss is continue_from from its own chains (the
    # loss's burn-in at its own G).
    net, key = _network(), jax.random.key(4)
    chained = nd.Chained(_loss(), burn_in=100.0)
    _, history = nd.fit_multistart(net, chained, optax.adam(0.05),
                                   where=lambda n: n.coupling.G, bounds=nd.Positive(),
                                   starts=jnp.asarray([0.2, 0.4]), steps=1, key=key)
    for b, G in enumerate((0.2, 0.4)):
        start_net = _network(G=jnp.asarray(G))
        carry = eqx.filter_jit(chained.start)(start_net, key)
        v = eqx.filter_jit(lambda c, n, k, s: c.continue_from(n, k, s)[0])(
            chained, start_net, key, carry)
        np.testing.assert_allclose(history.loss[0, b], float(v), rtol=1e-10)
