"""Spectral features of monitored signals: Welch PSD, band power, peak frequency."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._custom_types import ArrayLike
from .._validate import finite_array, is_concrete, number
from ._stats import python_int, sliding_windows

_TINY = 1e-300

Band = tuple[float | int, float | int]
"""A frequency band ``(low, high)`` in Hz."""


@eqx.filter_jit
def welch(
    x: ArrayLike,
    period: float | int,
    *,
    segment: int | None = None,
    overlap: int | None = None,
    detrend: bool = True,
) -> tuple[Float[Array, " freqs"], Float[Array, "freqs ..."]]:
    r"""Power spectral density by Welch's method, along the first (time) axis of ``x``.

    ``x`` is cut into segments of $N$ = ``segment`` samples starting every $N - $
    ``overlap`` samples; each segment $s$ loses its mean (``detrend``), is multiplied by
    the periodic Hann window $w_n = \tfrac12 - \tfrac12\cos(2\pi n / N)$ and
    Fourier-transformed, $X_{s,k} = \sum_n w_n x_{s,n} e^{-2\pi i k n / N}$; the one-sided
    density is the mean over segments

    $$ P_k = \frac{c_k}{f_s \sum_n w_n^2}\; \operatorname{mean}_s |X_{s,k}|^2, \qquad
       f_k = \frac{k f_s}{N}, \quad k = 0, \dots, \lfloor N/2 \rfloor, $$

    with $c_k = 2$ except $c_0 = 1$ and, for even $N$, $c_{N/2} = 1$ (the negative
    frequencies folded onto the positive ones). These are the defaults of
    ``scipy.signal.welch`` (Welch 1967). Units: ``x`` units squared per Hz. By Parseval,
    $\sum_k P_k\,\Delta f$ ($\Delta f = f_s / N$) is the window-weighted mean square of
    the detrended segments, close to the variance of ``x``: ``band_power`` over all
    frequencies recovers it.

    **Arguments**:

    - ``x``: ``[time, ...]``, any monitor's output (e.g. ``sol["eeg"]`` of shape
      ``[time, 1, sensors]``); every trailing entry is a separate channel.
    - ``period``: the sampling period in **ms** (the monitor's ``period``, or ``dt`` for
      a ``Raw`` monitor without one); the sampling rate is $f_s = 1000 / $ ``period`` Hz.
    - ``segment``: samples per segment, a Python int (default 256, or the whole signal
      when shorter, as SciPy). Frequency resolution is $f_s / N$.
    - ``overlap``: samples shared by consecutive segments (default ``segment // 2``).
    - ``detrend``: subtract each segment's mean (SciPy's ``detrend="constant"``).

    **Returns**: ``(freqs, psd)``: ``freqs`` ``[N // 2 + 1]`` in Hz and ``psd``
    ``[N // 2 + 1, ...]`` (the trailing axes of ``x``).

    Pure ``jax.numpy``: differentiable in ``x`` and ``vmap``-able over a batch of signals.

    **Reference**: Welch (1967), *The use of fast Fourier transform for the estimation of
    power spectra: a method based on time averaging over short, modified periodograms*,
    IEEE Trans. Audio Electroacoust. 15(2):70-73.
    """
    if jnp.iscomplexobj(x):
        raise ValueError("welch(x) must be real, got a complex array (its imaginary part "
                         "would be dropped).")
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(float)
    if x.ndim < 1 or x.shape[0] < 2:
        raise ValueError(f"welch: x must be [time, ...] with at least 2 samples, got {x.shape}.")
    period = number("welch(period)", period, low=0.0, low_open=True, unit=" ms")
    n_time = x.shape[0]
    if segment is None:
        segment = min(256, n_time)
    segment = python_int("welch", "segment", segment, 2)
    if segment > n_time:
        raise ValueError(
            f"welch: segment ({segment} samples) is longer than x ({n_time} samples)."
        )
    overlap = segment // 2 if overlap is None else python_int("welch", "overlap", overlap, 0)
    if overlap >= segment:
        raise ValueError(f"welch: overlap ({overlap}) must be < segment ({segment}).")
    fs = 1000.0 / float(period)

    segments = sliding_windows(x, segment, segment - overlap)  # [segments, N, ...]
    if detrend:
        segments = segments - jnp.mean(segments, axis=1, keepdims=True)
    n = np.arange(segment)
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * n / segment)  # periodic ("DFT-even") Hann
    shape = (1, segment) + (1,) * (x.ndim - 1)
    spectrum = jnp.fft.rfft(segments * jnp.asarray(window.reshape(shape), x.dtype), axis=1)
    power = jnp.mean(spectrum.real**2 + spectrum.imag**2, axis=0)  # [freqs, ...]
    fold = np.full(segment // 2 + 1, 2.0)
    fold[0] = 1.0
    if segment % 2 == 0:
        fold[-1] = 1.0
    scale = fold / (fs * np.sum(window**2))
    psd = power * jnp.asarray(scale.reshape((-1,) + (1,) * (x.ndim - 1)), x.dtype)
    freqs = jnp.asarray(np.fft.rfftfreq(segment, d=1.0 / fs), x.dtype)
    return freqs, psd


def _check_spectrum(name: str, freqs, psd, *, even: bool = False):
    """``freqs`` and ``psd`` as arrays of matching first axis; concrete ``freqs`` must be
    finite and increasing (``even``: evenly spaced, as ``band_power``'s sum assumes)."""
    if jnp.iscomplexobj(freqs) or jnp.iscomplexobj(psd):
        raise ValueError(f"{name}(freqs, psd) must be real, got a complex array.")
    freqs, psd = jnp.asarray(freqs), jnp.asarray(psd)
    if freqs.ndim != 1 or freqs.shape[0] < 2 or psd.ndim < 1 or psd.shape[0] != freqs.shape[0]:
        raise ValueError(
            f"{name}: freqs must be [freqs] (at least 2) and psd [freqs, ...] with the same "
            f"first axis, got {freqs.shape} and {psd.shape}."
        )
    if not jnp.issubdtype(freqs.dtype, jnp.floating):
        freqs = freqs.astype(float)
    if is_concrete(freqs):
        step = np.diff(finite_array(f"{name}(freqs)", freqs))
        if not np.all(step > 0):
            raise ValueError(f"{name}(freqs) must be increasing, as welch returns them.")
        if even and np.ptp(step) > 1e-3 * step[0]:
            raise ValueError(f"{name}(freqs) must be evenly spaced, as welch returns them "
                             f"(the sum is the rectangle rule), got steps from "
                             f"{step.min():g} to {step.max():g} Hz.")
    return freqs, psd


def _check_band(name: str, band) -> tuple[float, float] | None:
    """``band`` as ``(low, high)``: finite, ``0 <= low < high`` Hz."""
    if band is None:
        return None
    try:
        low, high = band
    except (TypeError, ValueError):
        raise ValueError(f"{name}(band) must be a pair (low, high) in Hz, got {band!r}.") from None
    low = number(f"{name}(band) low", low, low=0.0, unit=" Hz")
    high = number(f"{name}(band) high", high, low=0.0, unit=" Hz")
    if not low < high:
        raise ValueError(f"{name}(band) must have low < high, got ({low:g}, {high:g}) Hz.")
    return low, high


def _empty_band_text(name: str, band: tuple[float, float], freqs: np.ndarray) -> str:
    """Why no bin of ``freqs`` lies in ``band``: above the Nyquist frequency, below the
    first bin, or between two bins (the resolution)."""
    low, high = band
    head = f"{name}(band) ({low:g}, {high:g}) Hz: no frequency bin in band;"
    if low > freqs[-1]:
        return (f"{head} it lies above the highest frequency, {freqs[-1]:g} Hz (the Nyquist "
                f"frequency, half the sampling rate).")
    if high < freqs[0]:
        return f"{head} it lies below the lowest frequency, {freqs[0]:g} Hz."
    k = int(np.searchsorted(freqs, high))
    return (f"{head} it lies between the bins at {freqs[k - 1]:g} and {freqs[k]:g} Hz "
            f"(resolution {freqs[k] - freqs[k - 1]:g} Hz): widen the band or use a longer "
            f"welch segment.")


def _band_mask(name: str, freqs, band: tuple[float, float] | None):
    """The bins in ``band``; a band without a bin is a ``ValueError`` for concrete
    ``freqs`` and a runtime error (``eqx.error_if``) for traced ones."""
    if band is None:
        return jnp.ones(freqs.shape, bool)
    mask = (freqs >= band[0]) & (freqs <= band[1])
    if is_concrete(mask):
        if not bool(jnp.any(mask)):
            raise ValueError(_empty_band_text(name, band, np.asarray(freqs)))
        return mask
    return eqx.error_if(mask, ~jnp.any(mask), f"{name}(band) ({band[0]:g}, {band[1]:g}) Hz: "
                        "no frequency bin in band (above the Nyquist frequency or between "
                        "two bins).")


def _expand(mask, psd):
    return mask.reshape(mask.shape + (1,) * (psd.ndim - 1))


def band_power(
    freqs: ArrayLike, psd: ArrayLike, band: Band | None = None
) -> Float[Array, "*channels"]:
    r"""Power in a frequency band: the PSD integrated over the bins in ``band``,

    $$ P_{[f_1, f_2]} = \sum_{f_1 \le f_k \le f_2} P_k\, \Delta f, $$

    the rectangle rule on the uniform grid of ``welch`` ($\Delta f = f_1 - f_0$), so that
    all bins together give exactly the total power (Parseval).

    **Arguments**: ``freqs`` ``[freqs]`` (Hz) and ``psd`` ``[freqs, ...]`` as returned by
    ``welch``; ``band`` ``(low, high)`` in Hz, ``0 <= low < high``, edges included
    (``None``: every bin). Divide by ``band_power(freqs, psd)`` for the relative power.

    **Returns**: ``[...]`` (the channel axes of ``psd``); differentiable in ``psd``. A NaN
    or infinite bin in the band gives NaN or inf, not a finite power.

    **Raises**: ``ValueError`` for a band with no bin in it (above the Nyquist frequency,
    or narrower than the resolution and between two bins), naming the band and the
    Nyquist frequency or the resolution; inside ``jit`` a runtime error.
    """
    freqs, psd = _check_spectrum("band_power", freqs, psd, even=True)
    mask = _band_mask("band_power", freqs, _check_band("band_power", band))
    return _band_power(freqs, psd, mask)


@eqx.filter_jit
def _band_power(freqs, psd, mask):
    df = freqs[1] - freqs[0]
    return jnp.sum(jnp.where(_expand(mask, psd), psd, 0.0), axis=0) * df


def peak_frequency(
    freqs: ArrayLike,
    psd: ArrayLike,
    band: Band | None = None,
    temperature: float | int | None = None,
) -> Float[Array, "*channels"]:
    r"""Frequency of the spectral peak in ``band``, hard or soft.

    With ``temperature=None`` it is $f_{k^*}$, $k^* = \arg\max_k P_k$ over the bins in
    ``band``: exact, but piecewise constant (its gradient is zero). With a temperature
    $\tau > 0$ it is the differentiable soft-argmax

    $$ \hat f = \sum_k f_k\, \pi_k, \qquad
       \pi_k = \frac{\exp(\log P_k / \tau)}{\sum_j \exp(\log P_j / \tau)}
             = \frac{P_k^{1/\tau}}{\sum_j P_j^{1/\tau}}, $$

    over the bins in ``band``. On the log-power scale $\tau$ is dimensionless and the
    result does not change when the PSD is rescaled. $\tau = 1$ gives the power-weighted
    mean frequency (spectral centroid) of the band, $\tau \to 0$ the hard argmax; with a
    clear peak, $\tau \approx 0.05$-$0.2$ stays close to the argmax between bins (it
    interpolates) while every bin near the peak gets a gradient. Restrict ``band`` to
    the rhythm of interest (e.g. ``(6, 14)`` Hz for alpha): at large $\tau$ the broad
    background pulls $\hat f$ towards the band's centre.

    **Arguments**: ``freqs`` ``[freqs]`` and ``psd`` ``[freqs, ...]`` as ``welch``
    returns them; ``band`` ``(low, high)`` Hz, ``0 <= low < high`` (``None``: all bins);
    ``temperature`` a finite number > 0 or ``None``.

    **Returns**: ``[...]`` in Hz (the channel axes of ``psd``); NaN for a channel with a
    NaN or infinite bin in the band (a diverged signal has no peak).

    **Raises**: ``ValueError`` for a band with no bin in it, as ``band_power``.
    """
    freqs, psd = _check_spectrum("peak_frequency", freqs, psd)
    in_band = _band_mask("peak_frequency", freqs, _check_band("peak_frequency", band))
    if temperature is not None and is_concrete(temperature):
        number("peak_frequency(temperature)", temperature, low=0.0, low_open=True)
    return _peak_frequency(freqs, psd, in_band, temperature)


@eqx.filter_jit
def _peak_frequency(freqs, psd, in_band, temperature):
    mask = _expand(in_band, psd)
    f = freqs.reshape(freqs.shape + (1,) * (psd.ndim - 1))
    finite = jnp.isfinite(psd)
    diverged = jnp.any(mask & ~finite, axis=0)
    psd = jnp.where(finite, psd, 0.0)  # the channel is NaN below; no NaN in its gradient
    if temperature is None:
        k = jnp.argmax(jnp.where(mask, psd, -jnp.inf), axis=0)
        peak = jnp.take_along_axis(jnp.broadcast_to(f, psd.shape), k[None], axis=0)[0]
    else:
        # Guarded log: a zero bin gets weight 0 and a zero (not NaN) gradient.
        positive = psd > 0
        log_p = jnp.where(positive, jnp.log(jnp.where(positive, psd, 1.0)), math.log(_TINY))
        weights = jax.nn.softmax(jnp.where(mask, log_p / temperature, -jnp.inf), axis=0)
        peak = jnp.sum(weights * f, axis=0)
    return jnp.where(diverged, jnp.nan, peak)
