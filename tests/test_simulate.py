"""simulate(): continuation, determinism, vmap, tree_at, monitors, gradients."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import toy_networks as toy

import netdyn as nd


def _network(n=6, seed=0, noise=True, G=0.5):
    return toy.rww(n, seed, sigma=0.00283 if noise else None, G=G)


def test_pieces_join_bit_for_bit(getkey):
    net, key = _network(), getkey()
    monitors = {"raw": nd.Raw(), "tavg": nd.TemporalAverage(period=50.0)}
    whole = nd.simulate(net, nd.Heun(), t0=0.0, t1=200.0, dt=0.5, monitors=monitors, key=key)
    first = nd.simulate(net, nd.Heun(), t0=0.0, t1=100.0, dt=0.5, monitors=monitors, key=key)
    second = nd.simulate(
        net, nd.Heun(), t0=100.0, t1=200.0, dt=0.5, monitors=monitors, key=key,
        history=first.final,
    )
    for name in monitors:
        joined = jnp.concatenate([first[name], second[name]])
        assert np.array_equal(joined, whole[name])
        assert np.array_equal(jnp.concatenate([first.ts[name], second.ts[name]]), whole.ts[name])
    assert np.array_equal(second.final.buffer, whole.final.buffer)
    assert int(second.final.step) == 400


def test_same_key_same_trajectory_other_key_differs(getkey):
    net, key = _network(), getkey()
    run = lambda k: nd.simulate(  # noqa: E731
        net, nd.Heun(), t0=0.0, t1=50.0, dt=1.0, monitors={"raw": nd.Raw()}, key=k
    )["raw"]
    assert np.array_equal(run(key), run(key))
    assert not np.allclose(run(key), run(getkey()))


def test_noise_needs_key():
    with pytest.raises(ValueError, match="key"):
        nd.simulate(_network(), nd.Heun(), t0=0.0, t1=10.0, dt=1.0)


def test_vmap_over_G_equals_loop(getkey):
    net, key = _network(), getkey()
    Gs = jnp.linspace(0.1, 1.5, 8)

    def final_mean(G):
        n = eqx.tree_at(lambda n: n.coupling.G, net, G)
        sol = nd.simulate(
            n, nd.Heun(), t0=0.0, t1=100.0, dt=1.0,
            monitors={"tavg": nd.TemporalAverage(period=20.0)}, key=key,
        )
        return sol["tavg"]

    batched = jax.vmap(final_mean)(Gs)
    looped = jnp.stack([final_mean(G) for G in Gs])
    np.testing.assert_allclose(batched, looped, rtol=1e-12, atol=1e-14)
    assert not np.allclose(batched[0], batched[-1])


def test_tree_at_edits_every_module(getkey):
    # Parameters as arrays, not Python floats (static under simulate's filter_jit): the
    # edits of a value share one compiled run.
    net = jax.tree.map(lambda x: jnp.asarray(x) if isinstance(x, float) else x, _network())
    key = getkey()
    monitors = {"tavg": nd.TemporalAverage(period=50.0)}

    def run(n, solver=nd.Heun()):
        return nd.simulate(n, solver, t0=0.0, t1=100.0, dt=1.0, monitors=monitors, key=key)[
            "tavg"
        ]

    base = run(net)
    edits = [
        lambda n: eqx.tree_at(lambda n: n.coupling.G, n, jnp.asarray(1.2)),
        lambda n: eqx.tree_at(lambda n: n.dynamics.I_o, n, jnp.asarray(0.35)),
        lambda n: eqx.tree_at(lambda n: n.dynamics.w, n, jnp.full(6, 0.7)),
        lambda n: eqx.tree_at(lambda n: n.graph.weights, n, 2.0 * n.graph.weights),
        lambda n: eqx.tree_at(lambda n: n.graph.delays, n, 0.5 * n.graph.delays),
        lambda n: eqx.tree_at(lambda n: n.noise.sigma, n, jnp.asarray(0.01)),
        lambda n: eqx.tree_at(lambda n: n.coupling, n,
                              nd.DelayedLinear(G=jnp.asarray(0.5), b=jnp.asarray(0.01))),
    ]
    for edit in edits:
        assert not np.allclose(run(edit(net)), base)
    # Swapping the solver changes the result; swapping its remat strategy does not.
    assert not np.allclose(run(net, nd.Euler()), base)
    solver = eqx.tree_at(lambda s: s.remat, nd.Heun(), nd.NoRemat())
    assert np.array_equal(run(net, solver), base)


def test_monitors_agree_with_raw(getkey):
    net, key = _network(), getkey()
    sol = nd.simulate(
        net, nd.Heun(), t0=10.0, t1=110.0, dt=0.5, key=key,
        monitors={
            "raw": nd.Raw(),
            "sub": nd.Raw(period=2.5),
            "tavg": nd.TemporalAverage(period=10.0),
            "S": nd.TemporalAverage(period=5.0, variables=("S",)),
        },
    )
    raw = np.asarray(sol["raw"])
    assert raw.shape == (200, 1, 6)
    np.testing.assert_allclose(sol.ts["raw"], 10.0 + 0.5 * np.arange(1, 201))
    np.testing.assert_array_equal(sol["sub"], raw[4::5])
    np.testing.assert_allclose(sol.ts["sub"], 10.0 + 2.5 * np.arange(1, 41))
    np.testing.assert_allclose(sol["tavg"], raw.reshape(10, 20, 1, 6).mean(1), rtol=1e-13)
    np.testing.assert_allclose(sol.ts["tavg"], 10.0 + 10.0 * np.arange(1, 11) - 5.0)
    np.testing.assert_allclose(sol["S"], raw.reshape(20, 10, 1, 6).mean(1), rtol=1e-13)


def test_history_forms():
    net = _network(noise=False)
    rows = 12  # max delay 40 mm / 4 mm/ms = 10 ms at dt 1 -> 11 rows needed
    y0 = jnp.full((1, 6), 0.2)
    const = nd.simulate(net, nd.Heun(), t0=0.0, t1=20.0, dt=1.0, history=y0,
                        monitors={"raw": nd.Raw()})
    past = jnp.broadcast_to(y0, (rows, 1, 6))
    full = nd.simulate(net, nd.Heun(), t0=0.0, t1=20.0, dt=1.0, history=past,
                       monitors={"raw": nd.Raw()})
    np.testing.assert_array_equal(const["raw"], full["raw"])
    # Only the newest rows matter: extra older rows are ignored ...
    run = lambda h: nd.simulate(  # noqa: E731
        net, nd.Heun(), t0=0.0, t1=20.0, dt=1.0, history=h, monitors={"raw": nd.Raw()}
    )["raw"]
    longer = jnp.concatenate([jnp.full((5, 1, 6), 0.9), past])
    np.testing.assert_array_equal(run(longer), full["raw"])
    # ... but a past state inside the delay range changes the trajectory.
    assert not np.allclose(run(past.at[-3].set(0.9)), full["raw"])


def test_gradient_matches_finite_differences(getkey):
    key = getkey()
    net = _network(n=8)

    def loss(params):
        G, I_o = params
        n = eqx.tree_at(lambda n: (n.coupling.G, n.dynamics.I_o), net, (G, I_o))
        sol = nd.simulate(
            n, nd.Heun(), t0=0.0, t1=2000.0, dt=1.0, key=key,
            monitors={"tavg": nd.TemporalAverage(period=100.0)},
        )
        return jnp.mean((sol["tavg"] - 0.2) ** 2)

    params = jnp.array([0.5, 0.32])
    grad = jax.jit(jax.grad(loss))(params)
    f = jax.jit(loss)
    h = 1e-5
    for i in range(2):
        e = jnp.zeros(2).at[i].set(h)
        fd = (f(params + e) - f(params - e)) / (2 * h)
        np.testing.assert_allclose(grad[i], fd, rtol=1e-6)
    assert np.all(np.abs(grad) > 0)
