"""LeadField monitor against the NumPy product of the raw trajectory and the gain matrix,
and read_projection_matrix on every supported format."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import netdyn as nd
from netdyn import datasets

N = 3
W = np.array([[0.0, 1.0, 0.5], [0.2, 0.0, 1.0], [1.0, 0.3, 0.0]])  # directed, [target, source]
GAIN = np.array([[1.0, 0.5, -0.2], [0.1, 2.0, 0.3], [-0.4, 0.2, 1.5], [0.7, -0.6, 0.9]])
DT, PERIOD, T1 = 0.1, 1.0, 30.0


def _jr_network():
    return nd.Network(
        dynamics=nd.JansenRit(),
        coupling=nd.SigmoidalJansenRit(G=jnp.asarray(0.5)),
        graph=nd.DenseGraph(W),
        noise=nd.AdditiveNoise(sigma=jnp.array([0.0, 0.0, 0.0, 0.0, 1.0, 0.0]) * 0.05),
    )


def _run(monitors, net=None):
    return nd.simulate(net or _jr_network(), nd.Heun(), t0=0.0, t1=T1, dt=DT,
                       monitors=monitors, key=jax.random.key(3))


def _reference(raw, gain, reference=None):
    """Average y1 - y2 over each period, then project: NumPy, sample by sample."""
    y = np.asarray(raw)  # [steps, 2, nodes]
    m = round(PERIOD / DT)
    out = []
    for k in range(y.shape[0] // m):
        s = (y[k * m : (k + 1) * m, 0] - y[k * m : (k + 1) * m, 1]).mean(axis=0)
        e = np.array([sum(gain[i, j] * s[j] for j in range(N)) for i in range(len(gain))])
        out.append(e - e.mean() if reference == "average" else e)
    return np.array(out)


def test_equals_numpy_projection_of_the_raw_trajectory():
    sol = _run({
        "raw": nd.Raw(variables=("y1", "y2")),
        "eeg": nd.LeadField.jansen_rit(GAIN, period=PERIOD),
        "eeg_avg": nd.LeadField(GAIN, PERIOD, variables=("y1", "y2"),
                                coefficients=jnp.array([1.0, -1.0]), reference="average"),
    })
    assert sol["eeg"].shape == (round(T1 / PERIOD), 1, 4)
    want = _reference(sol["raw"], GAIN)
    assert np.abs(want).max() > 1e-3  # the signal is not trivially zero
    np.testing.assert_allclose(np.asarray(sol["eeg"][:, 0]), want, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(
        np.asarray(sol["eeg_avg"][:, 0]), _reference(sol["raw"], GAIN, "average"),
        rtol=1e-10, atol=1e-13,
    )
    # Average reference: every sample sums to zero across sensors.
    np.testing.assert_allclose(np.asarray(sol["eeg_avg"]).sum(axis=-1), 0.0, atol=1e-12)
    # Stamped at the middle of each window, as TemporalAverage.
    np.testing.assert_allclose(np.asarray(sol.ts["eeg"]), np.arange(1, 31) * PERIOD - 0.5)


def test_single_variable_and_warmup():
    sol = _run({
        "raw": nd.Raw(variables=("y0",)),
        "lf": nd.LeadField(GAIN[:2], PERIOD, variables="y0", warmup=5.0),
    })
    y0 = np.asarray(sol["raw"])[:, 0].reshape(-1, round(PERIOD / DT), N).mean(axis=1)
    np.testing.assert_allclose(np.asarray(sol["lf"][:, 0]), (y0 @ GAIN[:2].T)[5:], rtol=1e-10)
    assert float(sol.ts["lf"][0]) == 5.5


def test_gradient_with_respect_to_the_gain_is_the_outer_product():
    net = _jr_network()

    def sensors(gain):
        sol = _run({"raw": nd.Raw(variables=("y1", "y2")),
                    "eeg": nd.LeadField.jansen_rit(gain, period=PERIOD)}, net)
        return sol["eeg"][:, 0], sol["raw"]

    (eeg, raw) = sensors(jnp.asarray(GAIN))
    grad = jax.grad(lambda g: jnp.sum(sensors(g)[0] ** 2))(jnp.asarray(GAIN))
    y = np.asarray(raw)
    s = (y[:, 0] - y[:, 1]).reshape(-1, round(PERIOD / DT), N).mean(axis=1)  # [samples, N]
    np.testing.assert_allclose(np.asarray(grad), 2 * np.asarray(eeg).T @ s, rtol=1e-9)


def test_vmap_over_gain_matrices():
    gains = jnp.stack([jnp.asarray(GAIN), 2.0 * jnp.asarray(GAIN)])
    net = _jr_network()
    out = jax.vmap(lambda g: _run({"eeg": nd.LeadField.jansen_rit(g, period=PERIOD)}, net)["eeg"])(
        gains
    )
    np.testing.assert_allclose(np.asarray(out[1]), 2.0 * np.asarray(out[0]), rtol=1e-12)


def test_bad_gain_shapes_name_the_shapes():
    with pytest.raises(ValueError, match=r"gain must be a non-empty \[sensors, regions\].*\(3,\)"):
        nd.LeadField(np.ones(3), PERIOD)
    with pytest.raises(ValueError, match=r"gain has shape \(4, 5\) = \[sensors, regions\].*3 reg"):
        _run({"eeg": nd.LeadField.jansen_rit(np.ones((4, 5)), period=PERIOD)})
    with pytest.raises(ValueError, match=r"coefficients must be \[variables\] = \[2\].*\(3,\)"):
        nd.LeadField(GAIN, PERIOD, variables=("y1", "y2"), coefficients=jnp.ones(3))
    with pytest.raises(ValueError, match="watches 6 state variables: pass coefficients"):
        _run({"eeg": nd.LeadField(GAIN, PERIOD)})
    with pytest.raises(ValueError, match="coefficients have shape \\(2,\\) for 6 watched"):
        _run({"eeg": nd.LeadField(GAIN, PERIOD, coefficients=jnp.ones(2))})
    with pytest.raises(ValueError, match="reference must be None or 'average'"):
        nd.LeadField(GAIN, PERIOD, reference="common")  # type: ignore[arg-type]


def test_gain_and_coefficients_must_be_finite_and_real():
    # A NaN gain would make every sensor NaN; a complex one was kept, its products complex.
    for bad in (np.nan, np.inf, -np.inf):
        gain = GAIN.copy()
        gain[2, 1] = bad
        with pytest.raises(ValueError, match=r"LeadField\.gain must be finite.*at \(2, 1\)"):
            nd.LeadField(gain, PERIOD)
    with pytest.raises(ValueError, match=r"LeadField\.gain must be real"):
        nd.LeadField(GAIN * (1 + 1j), PERIOD)
    with pytest.raises(ValueError, match=r"LeadField\.gain must be an array of real numbers"):
        nd.LeadField(np.full((2, 3), "a"), PERIOD)
    with pytest.raises(ValueError, match=r"LeadField\.coefficients must be finite.*at 1"):
        nd.LeadField(GAIN, PERIOD, variables=("y1", "y2"), coefficients=jnp.array([1.0, np.nan]))
    # (Complex coefficients are refused too, but under the tests' jaxtyping hook their
    # Float annotation refuses them first.) A finite real gain is kept as it is.
    lf = nd.LeadField(jnp.asarray(GAIN), PERIOD, variables=("y1", "y2"),
                      coefficients=jnp.array([1.0, -1.0]))
    np.testing.assert_array_equal(np.asarray(lf.gain), GAIN)


def test_traced_gain_is_not_checked_at_construction():
    # Inside jit the gain is a tracer: construction must not try to read its values.
    def sensors(gain):
        return nd.LeadField(gain, PERIOD).gain.sum()

    assert float(jax.jit(sensors)(jnp.asarray(GAIN))) == pytest.approx(GAIN.sum())


# -------------------------------------------------------------- read_projection_matrix


def test_read_projection_matrix_formats(tmp_path):
    np.save(tmp_path / "g.npy", GAIN)
    np.savez(tmp_path / "one.npz", anything=GAIN)
    np.savez(tmp_path / "two.npz", eeg=GAIN, meg=2 * GAIN)
    np.savetxt(tmp_path / "g.txt", GAIN)
    np.savetxt(tmp_path / "g.csv", GAIN, delimiter=",")
    np.savetxt(tmp_path / "g.tsv", GAIN, delimiter="\t", header="sensors x regions")
    for name in ("g.npy", "one.npz", "g.txt", "g.csv", "g.tsv"):
        gain = datasets.read_projection_matrix(tmp_path / name, regions=3)
        np.testing.assert_array_equal(gain, GAIN)
        assert gain.dtype == np.float64 and not gain.flags.writeable
    np.testing.assert_array_equal(
        datasets.read_projection_matrix(tmp_path / "two.npz", key="meg"), 2 * GAIN
    )


def test_read_projection_matrix_mat(tmp_path):
    sio = pytest.importorskip("scipy.io")
    sio.savemat(tmp_path / "tvb.mat", {"ProjectionMatrix": GAIN, "other": np.ones(2)})
    np.testing.assert_array_equal(datasets.read_projection_matrix(tmp_path / "tvb.mat"), GAIN)
    sio.savemat(tmp_path / "x.mat", {"L": GAIN, "M": GAIN})
    gain = datasets.read_projection_matrix(tmp_path / "x.mat", key="M")
    np.testing.assert_array_equal(gain, GAIN)
    with pytest.raises(ValueError, match=r"x\.mat: holds 2 arrays \['L', 'M'\]; pass key="):
        datasets.read_projection_matrix(tmp_path / "x.mat")
    (tmp_path / "bad.mat").write_bytes(b"MATLAB 5.0 garbage")
    with pytest.raises(ValueError, match=r"bad\.mat: cannot read as a \.mat file"):
        datasets.read_projection_matrix(tmp_path / "bad.mat")


def test_read_projection_matrix_errors(tmp_path):
    np.save(tmp_path / "v.npy", np.ones(3))
    np.save(tmp_path / "nan.npy", np.where(GAIN > 1, np.nan, GAIN))
    np.save(tmp_path / "g.npy", GAIN)
    np.savez(tmp_path / "two.npz", a=GAIN, b=GAIN)
    (tmp_path / "empty.npy").write_bytes(b"")
    (tmp_path / "ragged.txt").write_text("1 2 3\n4 5\n")
    (tmp_path / "g.h5").write_bytes(b"")
    cases = [
        ("v.npy", {}, r"v\.npy: a projection matrix must be 2-D .*\(3,\)"),
        ("nan.npy", {}, r"nan\.npy: the projection matrix contains 2 NaN"),
        ("g.npy", {"regions": 4}, r"g\.npy: .*\(4, 3\).*3 columns for 4 regions"),
        ("two.npz", {}, r"two\.npz: holds 2 arrays \['a', 'b'\]; pass key="),
        ("two.npz", {"key": "c"}, r"two\.npz: no array 'c'"),
        ("empty.npy", {}, r"empty\.npy: cannot read as a \.npy array"),
        ("ragged.txt", {}, r"ragged\.txt: projection matrix has ragged rows"),
        ("g.h5", {}, r"g\.h5: unknown projection matrix format '\.h5'"),
        ("missing.npy", {}, r"missing\.npy: cannot read"),
    ]
    for name, kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            datasets.read_projection_matrix(tmp_path / name, **kwargs)
    np.save(tmp_path / "t.npy", GAIN.T)  # [regions, sensors] by mistake
    with pytest.raises(ValueError, match="looks transposed"):
        datasets.read_projection_matrix(tmp_path / "t.npy", regions=3)
