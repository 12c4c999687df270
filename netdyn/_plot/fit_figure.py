"""``fit_figure``: the figure of a fit of a network's FC (the ``fit.png`` of ``netdyn fit``)."""

import numpy as np


def fit_figure(history, target, fc_fit, fc_heldout, *, test=None, title: str = "", scan=None,
               runs=None, interval=None, profile=None, heldout_each=None, runs_each=None,
               analytic: bool = False):
    """The figure of a fit of an FC, as ``netdyn fit`` draws it (``fit.png``): a
    matplotlib ``Figure``, or ``None`` without matplotlib (imported here, not with netdyn).

    Left, the fit (top) and the held-out simulation (bottom): the loss curve of
    ``history`` (an ``nd.FitHistory``, with its ``fc_r`` metric if it has one), the
    empirical FC ``target``, the model's FC (``fc_fit``: the fit's own, ``fc_heldout``: the
    held-out run's, all ``[nodes, nodes]``), the scatter of their upper triangles with the
    Pearson r and the share of pairs above 0.9 (saturation). Right, the optional panels:
    ``scan``, the scan of G for the start (``{"G", "loss", "mean_fc", "stage"}``: the
    ``grid`` of ``netdyn fit``'s ``scan.json``); ``test``, the test subjects' FC against
    the held-out FC, with ``runs`` (the run scores of ``params.json``: ``{"train",
    "test", "test_subjects"}``); ``interval``, ``(G, lower, upper)``, the fitted G and its
    interval; ``profile``, the loss along G beside its quadratic model (``{"G", "loss",
    "quadratic"}``); ``heldout_each``, ``runs_each``, each held-out noise set's metrics and
    run scores. ``analytic``: the fit's FC, scan and profile are the analytic FC's
    (``nd.LinearFcLoss``), not simulated. A panel without its data is left empty.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    train, heldout = fc_fit, fc_heldout
    fig = Figure(figsize=(21, 7), layout="constrained")
    ax = fig.subplots(2, 6)
    _scan_panel(ax[0, 4], scan, target, interval, analytic)
    _test_panel(ax[1, 4], test, heldout, runs)
    _profile_panel(ax[0, 5], profile, interval, analytic)
    _sets_panel(ax[1, 5], heldout_each, runs_each, target)
    steps = history.step  # as the history numbers them (netdyn fit: from 1)
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
    rows = ((0, train, "analytic FC" if analytic else "simulated, fit noise"),
            (1, heldout, "simulated, held-out"))
    for row, simulated, label in rows:
        a = ax[row, 1]
        if row == 0:
            im = a.imshow(target, vmin=-1, vmax=1, cmap="RdBu_r")
            a.set_title(f"empirical FC, fitted (mean {target[iu].mean():.2f})")
        else:
            bins = np.linspace(-0.5, 1.0, 61)
            a.hist(target[iu], bins=bins, alpha=0.5, label="empirical", density=True)
            a.hist(simulated[iu], bins=bins, alpha=0.5, label="held-out", density=True)
            a.axvline(0.9, color="k", lw=0.8, ls=":")
            a.set_xlabel("FC value (upper triangle)")
            a.set_title("FC level and saturation")
            a.legend(fontsize="small")
        ax[row, 2].imshow(simulated, vmin=-1, vmax=1, cmap="RdBu_r")
        ax[row, 2].set_title(f"{label} (mean {simulated[iu].mean():.2f})")
        ax[row, 3].scatter(target[iu], simulated[iu], s=2, alpha=0.4)
        r = np.corrcoef(target[iu], simulated[iu])[0, 1]
        ax[row, 3].set_xlabel("empirical FC")
        ax[row, 3].set_ylabel(f"model FC ({label})")
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
        f"empirical mean FC {target[iu].mean():.3f}" + _test_rows(runs)),
        family="monospace", va="center")
    fig.colorbar(im, ax=ax[:, 2], shrink=0.6)
    return fig


def _test_rows(runs) -> str:
    """The text rows of the scores on the training and test subjects."""
    if runs is None:
        return ""
    rows = f"\n\nheld-out vs     {'train':>7s}{'test':>8s}"
    train, test = runs["train"], runs.get("test") or {}
    for key, label in (("fc_r", "FC r"), ("empirical_mean_fc", "data's mean FC"),
                       ("fcd_ks", "FCD KS")):
        if key in train:
            t = f"{test[key]:8.3f}" if key in test else f"{'-':>8s}"
            rows += f"\n{label:16s}{train[key]:7.3f}{t}"
    if "ceiling" in test:
        rows += (f"\nnoise ceiling {test['ceiling']:.3f}: "
                 f"{100 * test['fraction_of_ceiling']:.0f} % reached")
    return rows


def _scan_panel(a, scan, target, interval=None, analytic: bool = False) -> None:
    """Loss and mean FC of the scan of G, with the data's mean FC (and the fitted G with
    its interval)."""
    if scan is None or "mean_fc" not in scan:
        a.axis("off")
        a.set_title("no scan of G (--G given or --grid 0)")
        return
    g, loss, mean = (np.asarray(scan[k], dtype=float) for k in ("G", "loss", "mean_fc"))
    stage = np.asarray(scan["stage"])
    for name, style, color in (("scan", "o", "C1"), ("extend", "o", "C4"), ("peak", "^", "C2"),
                               ("bisect", "x", "C3")):
        at = stage == name
        if at.any():
            a.plot(g[at], mean[at], style, color=color, ms=4, label=f"mean FC, {name}")
    iu = np.triu_indices(target.shape[0], k=1)
    a.axhline(target[iu].mean(), color="k", lw=0.8, ls=":", label="data's mean FC")
    if interval is not None:
        value, lower, upper = interval
        a.axvspan(lower, upper, color="C2", alpha=0.25, lw=0)
        a.axvline(value, color="C2", lw=1.0, label=f"fitted G [{lower:.4g}, {upper:.4g}]")
    a.set_xlabel("G")
    a.set_ylabel("mean FC (analytic)" if analytic else "mean FC (one realisation)")
    a.legend(fontsize="x-small")
    twin = a.twinx()
    twin.plot(g[np.argsort(g)], loss[np.argsort(g)], color="C0", lw=0.8)
    twin.set_ylabel("loss", color="C0")
    a.set_title("scan of G for the start", fontsize="medium")


def _profile_panel(a, profile, interval, analytic: bool = False) -> None:
    """The loss along G near the fit (the others moved as the Hessian says) against the
    quadratic model the interval of G rests on."""
    if profile is None:
        a.axis("off")
        a.set_title("no profile of G (no interval for G)", fontsize="medium")
        return
    g = np.asarray(profile["G"], dtype=float)
    order = np.argsort(g)
    a.plot(g[order], np.asarray(profile["loss"])[order], "o-", color="C0", ms=4,
           label="loss, analytic" if analytic else "loss, simulated")
    a.plot(g[order], np.asarray(profile["quadratic"])[order], "--", color="k", lw=0.8,
           label="quadratic model")
    if interval is not None:
        value, lower, upper = interval
        a.axvspan(lower, upper, color="C2", alpha=0.25, lw=0, label="95 % interval")
        a.axvline(value, color="C2", lw=1.0)
    a.set_xlabel("G")
    a.set_ylabel("loss (analytic)" if analytic else "loss (fit's noise)")
    a.legend(fontsize="x-small")
    a.set_title("profile of G near the fit", fontsize="medium")


def _sets_panel(a, heldout_each, runs_each, target) -> None:
    """Each held-out noise set's scores (dots) with their mean and standard deviation."""
    if not heldout_each:
        a.axis("off")
        return
    columns = [("FC r\n(fitted FC)", [m["fc_r"] for m in heldout_each]),
               ("mean FC", [m["mean_fc"] for m in heldout_each])]
    tests = [r["test"] for r in (runs_each or []) if r is not None and "test" in r]
    if tests:
        columns.insert(1, ("FC r\n(test subjects)", [t["fc_r"] for t in tests]))
        if all(t.get("fcd_ks") is not None for t in tests):
            columns.append(("FCD KS\n(test subjects)", [t["fcd_ks"] for t in tests]))
    for x, (_, values) in enumerate(columns):
        v = np.asarray(values, dtype=float)
        a.plot(np.full(v.size, x) + np.linspace(-0.12, 0.12, v.size), v, "o", ms=3,
               color="C0", alpha=0.6)
        a.errorbar(x + 0.3, v.mean(), yerr=v.std(ddof=1) if v.size > 1 else 0, fmt="s",
                   color="k", ms=4, capsize=3)
    iu = np.triu_indices(target.shape[0], k=1)
    x_mean = [c[0] for c in columns].index("mean FC")
    a.plot([x_mean - 0.3, x_mean + 0.4], [target[iu].mean()] * 2, color="C3", lw=1.0,
           label="fitted FC's mean")
    if tests:
        a.plot([0.7, 1.4], [tests[0]["ceiling"]] * 2, color="C2", lw=1.0,
               label="noise ceiling")
    a.set_xticks(range(len(columns)), [c[0] for c in columns], fontsize="small")
    a.set_ylim(0, 1)
    a.legend(fontsize="x-small")
    a.set_title(f"held-out sets ({len(heldout_each)}): each, mean ± sd",
                fontsize="medium")


def _test_panel(a, test, heldout, runs) -> None:
    """The held-out simulated FC against the FC of the test subjects."""
    if test is None:
        a.axis("off")
        a.set_title("no test subjects")
        return
    iu = np.triu_indices(test.shape[0], k=1)
    a.scatter(test[iu], heldout[iu], s=2, alpha=0.4, color="C2")
    a.set_xlabel(f"FC of the test subjects {','.join(map(str, runs['test_subjects']))}")
    a.set_ylabel("simulated FC (held-out)")
    t = runs["test"]
    a.set_title(f"test subjects: r = {t['fc_r']:.3f} ({100 * t['fraction_of_ceiling']:.0f} % of "
                f"ceiling {t['ceiling']:.3f})", fontsize="medium")
