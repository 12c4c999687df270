"""The figure of ``netdyn fit`` (with matplotlib, an optional dependency)."""

import numpy as np


def figure(history, target, train, heldout, title: str):
    """Loss curve, FC matrices and scatters of the fit (top) and held-out run (bottom): a
    matplotlib ``Figure``, or ``None`` without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    fig = Figure(figsize=(14, 7), layout="constrained")
    ax = fig.subplots(2, 4)
    steps = history.step  # numbered from 1 (_report.for_people)
    ax[0, 0].plot(steps, history.loss, color="C0", label="loss")
    ax[0, 0].set_xlabel("step")
    ax[0, 0].set_ylabel("loss", color="C0")
    if "fc_r" in history.metrics:
        twin = ax[0, 0].twinx()
        twin.plot(steps, history.metrics["fc_r"], color="C1")
        twin.set_ylabel("FC r (fit)", color="C1")
    ax[0, 0].set_title(title)
    iu = np.triu_indices(target.shape[0], k=1)
    im = None
    rows = ((0, train, "fit noise"), (1, heldout, "held-out"))
    for row, simulated, label in rows:
        a = ax[row, 1] if row == 1 else ax[0, 1]
        if row == 0:
            im = a.imshow(target, vmin=-1, vmax=1, cmap="RdBu_r")
            a.set_title(f"empirical FC (mean {target[iu].mean():.2f})")
        else:
            bins = np.linspace(-0.5, 1.0, 61)
            a.hist(target[iu], bins=bins, alpha=0.5, label="empirical", density=True)
            a.hist(simulated[iu], bins=bins, alpha=0.5, label="held-out", density=True)
            a.axvline(0.9, color="k", lw=0.8, ls=":")
            a.set_xlabel("FC value (upper triangle)")
            a.set_title("FC level and saturation")
            a.legend(fontsize="small")
        ax[row, 2].imshow(simulated, vmin=-1, vmax=1, cmap="RdBu_r")
        ax[row, 2].set_title(f"simulated, {label} (mean {simulated[iu].mean():.2f})")
        ax[row, 3].scatter(target[iu], simulated[iu], s=2, alpha=0.4)
        r = np.corrcoef(target[iu], simulated[iu])[0, 1]
        ax[row, 3].set_xlabel("empirical FC")
        ax[row, 3].set_ylabel(f"simulated FC ({label})")
        sat = np.mean(simulated[iu] > 0.9)
        ax[row, 3].set_title(f"r = {r:.3f}, {100 * sat:.0f} % of pairs > 0.9")
    ax[1, 0].axis("off")
    r_fit = np.corrcoef(target[iu], train[iu])[0, 1]
    r_new = np.corrcoef(target[iu], heldout[iu])[0, 1]
    ax[1, 0].text(0.0, 0.5, (
        f"{'':14s}{'fit':>7s}{'held-out':>10s}\n"
        f"{'FC r':14s}{r_fit:7.3f}{r_new:10.3f}\n"
        f"{'mean FC':14s}{train[iu].mean():7.3f}{heldout[iu].mean():10.3f}\n"
        f"{'FC > 0.9':14s}{100 * np.mean(train[iu] > 0.9):6.1f}%"
        f"{100 * np.mean(heldout[iu] > 0.9):9.1f}%\n"
        f"empirical mean FC {target[iu].mean():.3f}"), family="monospace", va="center")
    fig.colorbar(im, ax=ax[:, 2], shrink=0.6)
    return fig
