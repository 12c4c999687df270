"""Welch PSD, band power and peak frequency against a NumPy reference written here."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import netdyn as nd

PERIOD = 1.0  # ms: fs = 1000 Hz


def _welch_numpy(x, period, segment, overlap, detrend=True):
    """Welch's method written out with loops, from its definition (Welch 1967): periodic
    Hann window, mean removed per segment, one-sided density."""
    fs = 1000.0 / period
    n = np.arange(segment)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * n / segment)
    x = np.asarray(x, float).reshape(len(x), -1)
    freqs = np.arange(segment // 2 + 1) * fs / segment
    out = np.zeros((len(freqs), x.shape[1]))
    starts = range(0, len(x) - segment + 1, segment - overlap)
    for c in range(x.shape[1]):
        acc = np.zeros(len(freqs))
        for s in starts:
            seg = x[s : s + segment, c]
            if detrend:
                seg = seg - seg.mean()
            for k in range(len(freqs)):  # the DFT sum itself
                e = np.exp(-2j * np.pi * k * n / segment)
                acc[k] += abs(np.sum(w * seg * e)) ** 2
        acc /= len(starts)
        two_sided = acc / (fs * np.sum(w**2))
        fold = np.full(len(freqs), 2.0)
        fold[0] = 1.0
        if segment % 2 == 0:
            fold[-1] = 1.0
        out[:, c] = fold * two_sided
    return freqs, out


def _signal(n=3000, f0=10.0, seed=0, channels=2):
    t = np.arange(n) * PERIOD / 1000.0  # s
    rng = np.random.default_rng(seed)
    amp = np.array([1.0, 0.5, 2.0])[:channels]
    return amp * np.sin(2 * np.pi * f0 * t)[:, None] + 0.3 * rng.normal(size=(n, channels))


@pytest.mark.parametrize("segment, overlap", [(256, None), (200, 50), (255, 0)])
def test_welch_matches_numpy_loop(segment, overlap):
    x = _signal(n=1100)
    freqs, psd = nd.welch(x, PERIOD, segment=segment, overlap=overlap)
    ref_f, ref = _welch_numpy(x, PERIOD, segment, segment // 2 if overlap is None else overlap)
    np.testing.assert_allclose(np.asarray(freqs), ref_f, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(psd), ref, rtol=1e-9, atol=1e-15)


def test_welch_matches_scipy_defaults():
    signal = pytest.importorskip("scipy.signal")
    x = _signal(n=2000, channels=3)
    freqs, psd = nd.welch(x, 2.0)  # 500 Hz
    ref_f, ref = signal.welch(x, fs=500.0, axis=0)
    np.testing.assert_allclose(np.asarray(freqs), ref_f, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(psd), ref, rtol=1e-9, atol=1e-15)
    _, nodetrend = nd.welch(x, 2.0, detrend=False)
    _, ref = signal.welch(x, fs=500.0, axis=0, detrend=False)
    np.testing.assert_allclose(np.asarray(nodetrend), ref, rtol=1e-9, atol=1e-15)


def test_peak_at_the_sinusoid_and_parseval():
    f0 = 12.5  # a bin centre at segment = 400 (2.5 Hz bins)
    x = _signal(n=8000, f0=f0)
    freqs, psd = nd.welch(x, PERIOD, segment=400)
    np.testing.assert_allclose(np.asarray(nd.peak_frequency(freqs, psd)), [f0, f0])
    soft = nd.peak_frequency(freqs, psd, band=(5.0, 20.0), temperature=0.05)
    np.testing.assert_allclose(np.asarray(soft), [f0, f0], atol=0.05)
    # Parseval: total power equals the window-weighted mean square of the segments ...
    total = np.asarray(nd.band_power(freqs, psd))
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
    segs = [x[s : s + 400] - x[s : s + 400].mean(0) for s in range(0, 8000 - 400 + 1, 200)]
    weighted = np.mean([np.sum((w[:, None] * s) ** 2, 0) / np.sum(w**2) for s in segs], 0)
    np.testing.assert_allclose(total, weighted, rtol=1e-10)
    # ... which is close to the variance (amplitude^2 / 2 + noise variance).
    np.testing.assert_allclose(total, x.var(axis=0), rtol=0.03)
    np.testing.assert_allclose(total, [0.5 + 0.09, 0.125 + 0.09], rtol=0.05)
    # The band around the sinusoid holds its power A^2 / 2 (plus a little noise).
    alpha = np.asarray(nd.band_power(freqs, psd, (7.5, 17.5)))
    noise_in_band = 0.09 * 10.0 / 500.0
    np.testing.assert_allclose(alpha, np.array([0.5, 0.125]) + noise_in_band, rtol=0.05)


def test_band_power_is_the_rectangle_rule_over_included_bins():
    freqs = jnp.arange(6.0) * 2.0  # 0, 2, ..., 10 Hz
    psd = jnp.arange(12.0).reshape(6, 2)
    got = nd.band_power(freqs, psd, (2.0, 6.0))  # bins 2, 4, 6 Hz, edges included
    np.testing.assert_allclose(np.asarray(got), [(2 + 4 + 6) * 2.0, (3 + 5 + 7) * 2.0])


def test_soft_peak_temperature_limits():
    freqs = jnp.arange(5.0)
    psd = jnp.array([1.0, 2.0, 8.0, 4.0, 0.0])
    hard = nd.peak_frequency(freqs, psd)
    assert float(hard) == 2.0
    assert abs(float(nd.peak_frequency(freqs, psd, temperature=1e-3)) - 2.0) < 1e-12
    # temperature 1: the power-weighted mean frequency.
    centroid = float(np.sum(np.arange(5.0) * np.asarray(psd)) / np.sum(np.asarray(psd)))
    assert float(nd.peak_frequency(freqs, psd, temperature=1.0)) == pytest.approx(centroid)
    # The band restricts the search; a zero bin is ignored without NaN.
    assert float(nd.peak_frequency(freqs, psd, band=(2.5, 4.0))) == 3.0
    g = jax.grad(lambda p: nd.peak_frequency(freqs, p, temperature=0.5))(psd)
    assert np.all(np.isfinite(np.asarray(g)))


def _fd(f, x, i, h=1e-6):
    e = np.zeros_like(x)
    e.flat[i] = h
    return (f(x + e) - f(x - e)) / (2 * h)


def test_gradients_match_finite_differences():
    x = _signal(n=600, channels=2)

    def features(x):
        freqs, psd = nd.welch(x, PERIOD, segment=128)
        band = nd.band_power(freqs, psd, (6.0, 16.0))
        peak = nd.peak_frequency(freqs, psd, band=(4.0, 30.0), temperature=0.2)
        return jnp.sum(band) + 0.01 * jnp.sum(peak)

    f = jax.jit(features)
    grad = np.asarray(jax.grad(features)(jnp.asarray(x)))
    for i in (0, 17, 301, 599 * 2 + 1):
        fd = float(_fd(lambda y: f(jnp.asarray(y)), x, i))
        assert grad.flat[i] == pytest.approx(fd, rel=1e-5, abs=1e-9)


def test_vmap_over_a_batch_equals_a_loop():
    batch = np.stack([_signal(n=700, f0=f, seed=i, channels=1) for i, f in enumerate([8, 11])])

    def peak(x):
        freqs, psd = nd.welch(x, PERIOD, segment=250)
        return nd.peak_frequency(freqs, psd, band=(4, 20), temperature=0.1), psd

    batched, psds = jax.vmap(peak)(jnp.asarray(batch))
    for i, x in enumerate(batch):
        one, psd = peak(jnp.asarray(x))
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(one), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(psds[i]), np.asarray(psd), rtol=1e-12)
    assert abs(float(batched[0, 0]) - 8.0) < 1.0 and abs(float(batched[1, 0]) - 11.0) < 1.0


def test_monitor_shaped_input_and_defaults():
    x = _signal(n=300, channels=3)[:, None, :]  # [time, 1, sensors] as a monitor emits
    freqs, psd = nd.welch(x, 0.5)
    assert psd.shape == (129, 1, 3) and float(freqs[-1]) == 1000.0  # Nyquist of 2 kHz
    freqs, psd = nd.welch(x[:100], 0.5)  # shorter than 256: one whole-signal segment
    assert psd.shape == (51, 1, 3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"segment": 500}, r"segment \(500 samples\) is longer than x \(300"),
        ({"segment": 1}, "segment must be a Python int >= 2"),
        ({"segment": True}, "segment must be a Python int"),
        ({"segment": 100, "overlap": 100}, r"overlap \(100\) must be < segment"),
        ({"period": 0.0}, r"welch\(period\) must be a finite real number > 0 ms"),
        ({"period": float("inf")}, r"welch\(period\) must be a finite real number > 0 ms"),
        ({"period": True}, r"welch\(period\) must be a finite real number"),
    ],
)
def test_welch_errors(kwargs, match):
    kwargs = {"period": PERIOD, **kwargs}
    with pytest.raises(ValueError, match=match):
        nd.welch(np.zeros((300, 2)), **kwargs)


def test_feature_errors():
    freqs, psd = jnp.arange(4.0), jnp.ones((4, 2))
    with pytest.raises(ValueError, match=r"same first axis, got \(4,\) and \(3, 2\)"):
        nd.band_power(freqs, psd[:3])
    with pytest.raises(ValueError, match="low < high"):
        nd.band_power(freqs, psd, (3.0, 1.0))
    with pytest.raises(ValueError, match=r"temperature\) must be a finite real number > 0"):
        nd.peak_frequency(freqs, psd, temperature=0.0)
    with pytest.raises(Exception, match="no frequency bin in band"):
        nd.peak_frequency(freqs, psd, band=(10.0, 20.0))


def test_welch_refuses_a_complex_signal():
    x = np.exp(2j * np.pi * 0.01 * np.arange(300))  # its real part alone has a peak too
    with pytest.raises(ValueError, match=r"welch\(x\) must be real"):
        nd.welch(x, PERIOD)


def _two_channels(bad):
    """Bins at 0, 2, ..., 10 Hz; channel 0 peaks at 6 Hz but has ``bad`` at 4 Hz,
    channel 1 is finite and peaks at 2 Hz."""
    freqs = jnp.arange(6.0) * 2.0
    psd = np.array([[1.0, 1.0], [2.0, 9.0], [bad, 2.0], [5.0, 1.0], [1.0, 0.5], [0.0, 0.1]])
    return freqs, jnp.asarray(psd)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("temperature", [None, 0.1])
def test_peak_frequency_of_a_non_finite_spectrum_is_nan(bad, temperature):
    freqs, psd = _two_channels(bad)
    peak = np.asarray(nd.peak_frequency(freqs, psd, temperature=temperature))
    assert np.isnan(peak[0])  # not 4 Hz (the NaN bin) nor 6 Hz (the NaN bin ignored)
    assert peak[1] == pytest.approx(2.0, abs=1e-3)
    # A bad bin outside the band does not matter: the peak in (5, 10) Hz is at 6 Hz.
    inside = np.asarray(nd.peak_frequency(freqs, psd, (5.0, 10.0), temperature))
    np.testing.assert_allclose(inside, [6.0, 6.0], atol=0.05)


def test_peak_frequency_gradient_stays_finite_for_the_finite_channel():
    freqs, psd = _two_channels(np.nan)
    g = jax.grad(lambda p: nd.peak_frequency(freqs, p, temperature=0.5)[1])(psd)
    assert np.all(np.isfinite(np.asarray(g))) and np.any(np.asarray(g)[:, 1] != 0.0)


def test_band_power_propagates_a_non_finite_bin():
    freqs, psd = _two_channels(np.nan)
    got = np.asarray(nd.band_power(freqs, psd, (2.0, 6.0)))
    assert np.isnan(got[0]) and got[1] == pytest.approx((9.0 + 2.0 + 1.0) * 2.0)


@pytest.mark.parametrize("feature", [nd.band_power, nd.peak_frequency])
@pytest.mark.parametrize(
    "band, match",
    [
        # fs = 1000 Hz, 400 samples per segment: bins every 2.5 Hz up to 500 Hz (Nyquist).
        ((600.0, 700.0), r"\(600, 700\) Hz: no frequency bin in band; it lies above the "
                         r"highest frequency, 500 Hz \(the Nyquist"),
        ((10.5, 12.0), r"\(10.5, 12\) Hz: no frequency bin in band; it lies between the "
                       r"bins at 10 and 12.5 Hz \(resolution 2.5 Hz\)"),
    ],
)
def test_a_band_without_a_bin_is_an_error_not_zero(feature, band, match):
    freqs, psd = nd.welch(_signal(n=1200), PERIOD, segment=400)
    with pytest.raises(ValueError, match=match):
        feature(freqs, psd, band)
    # Under jit the frequencies are traced: a runtime error, still naming the band.
    with pytest.raises(Exception, match="no frequency bin in band"):
        jax.jit(lambda f, p: feature(f, p, band))(freqs, psd)


@pytest.mark.parametrize("feature", [nd.band_power, nd.peak_frequency])
@pytest.mark.parametrize(
    "band, match",
    [
        ((float("nan"), 5.0), r"\(band\) low must be a finite real number >= 0 Hz, got nan"),
        ((2.0, float("nan")), r"\(band\) high must be a finite real number >= 0 Hz"),
        ((2.0, float("inf")), r"\(band\) high must be a finite real number >= 0 Hz"),
        ((-4.0, 3.0), r"\(band\) low must be a finite real number >= 0 Hz, got -4.0"),
        ((-4.0, -1.0), r"\(band\) low must be a finite real number >= 0 Hz"),
        ((3.0, 3.0), r"\(band\) must have low < high, got \(3, 3\) Hz"),
    ],
)
def test_band_edges_are_checked(feature, band, match):
    freqs, psd = jnp.arange(6.0) * 2.0, jnp.ones((6, 2))
    with pytest.raises(ValueError, match=match):
        feature(freqs, psd, band)


@pytest.mark.parametrize(
    "freqs, match",
    [
        (np.array([0.0, 2.0, np.nan, 6.0]), r"\(freqs\) must be finite"),
        (np.array([6.0, 4.0, 2.0, 0.0]), r"\(freqs\) must be increasing"),
        (np.array([0.0, 1.0, 2.0, 6.0]), r"band_power\(freqs\) must be evenly spaced"),
    ],
)
def test_frequency_grid_is_checked(freqs, match):
    with pytest.raises(ValueError, match=match):
        nd.band_power(freqs, jnp.ones((4, 2)), (1.0, 5.0))


@pytest.mark.parametrize("temperature", [float("inf"), float("nan"), -1.0])
def test_temperature_must_be_finite_and_positive(temperature):
    freqs, psd = _two_channels(1.0)
    with pytest.raises(ValueError, match=r"peak_frequency\(temperature\) must be a finite "
                                         r"real number > 0"):
        nd.peak_frequency(freqs, psd, temperature=temperature)
