"""The record of a fit: one row per optimization step."""

import csv
import io
import math
import os

import equinox as eqx
import numpy as np

from .._persistence.atomic import write_text_atomic
from .._persistence.strict_json import strict_dumps


def _jsonable(a: np.ndarray) -> list:
    values = a.ravel().tolist()
    if a.dtype.kind != "f":
        return values
    return [v if math.isfinite(v) else None for v in values]


def _nested(a: np.ndarray):
    """A float array as nested lists, NaN/inf as ``null`` (strict JSON)."""
    if a.ndim == 0:
        return _jsonable(a)[0]
    return np.asarray(_jsonable(a), dtype=object).reshape(a.shape).tolist()


def _unnest(value) -> np.ndarray:
    """Inverse of ``_nested`` for float arrays (``None`` back to NaN)."""
    a = np.asarray(value, dtype=object)
    return np.where(np.equal(a, None), np.nan, a).astype(float)


class FitHistory(eqx.Module):
    r"""What happened at each step of a fit, as NumPy arrays with one row per step.

    Row ``k`` describes step ``k``: the parameters $\theta_k$ at which the loss was
    evaluated, the loss $L(\theta_k)$, the gradient norm $\lVert \nabla_u L \rVert_2$
    (with respect to the *unconstrained* values the optimizer updates), the auxiliary
    metrics returned by ``loss_fn``, the wall time of the step in seconds (row 0
    includes compilation), and whether the update was skipped (non-finite loss or
    gradient). The fitted model holds $\theta_{\text{steps}}$, the parameters after the
    last update.

    For ``fit_multistart`` every array has a second axis (one column per start) and
    ``best`` is the index of the start that was kept.

    **Fields**:

    - ``step``: ``[steps]`` int, the step indices ``0, 1, ...``.
    - ``loss``, ``grad_norm``, ``wall_time``: ``[steps]`` (``[steps, starts]``).
    - ``skipped``: ``[steps]`` bool (``[steps, starts]``).
    - ``params``: ``{name: [steps, *shape]}`` (``[steps, starts, *shape]``), the physical
      values of the trained leaves, named by their path in the model (e.g.
      ``"coupling.G"``, ``"dynamics.I_o"``).
    - ``metrics``: ``{name: [steps]}`` (``[steps, starts]``), the auxiliary outputs of
      ``loss_fn``.
    - ``best``: the start kept by ``fit_multistart``, ``None`` for ``fit``.
    """

    step: np.ndarray
    loss: np.ndarray
    grad_norm: np.ndarray
    wall_time: np.ndarray
    skipped: np.ndarray
    params: dict[str, np.ndarray]
    metrics: dict[str, np.ndarray]
    best: int | None = eqx.field(default=None, static=True)

    def __len__(self) -> int:
        return int(self.step.shape[0])

    def best_step(self) -> int | None:
        """Row of the lowest finite loss among the applied steps (``None`` if there is none):
        with common random numbers, the best parameters the fit evaluated."""
        loss = np.where(np.isfinite(self.loss) & ~self.skipped, self.loss, np.inf)
        return int(np.argmin(loss)) if np.isfinite(loss).any() else None

    def average_rows(self) -> np.ndarray:
        """Rows that ``keep="average"`` averages: the applied steps with a finite loss in
        the second half of the fit (rows ``len // 2`` on; Polyak-Ruppert averaging of the
        iterates, Polyak & Juditsky 1992). Empty when there is none."""
        rows = np.arange(len(self))[len(self) // 2:]
        return rows[np.isfinite(self.loss[rows]) & ~self.skipped[rows]]

    @property
    def n_starts(self) -> int | None:
        """Number of starts (``fit_multistart``), ``None`` for a single fit."""
        return None if self.loss.ndim == 1 else int(self.loss.shape[1])

    def to_dict(self) -> dict:
        """Plain-Python form (nested lists; NaN and infinities as ``None``), for JSON."""
        return {
            "step": self.step.tolist(),
            "loss": _nested(self.loss),
            "grad_norm": _nested(self.grad_norm),
            "wall_time": _nested(self.wall_time),
            "skipped": self.skipped.tolist(),
            "params": {k: _nested(v) for k, v in self.params.items()},
            "metrics": {k: _nested(v) for k, v in self.metrics.items()},
            "best": self.best,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "FitHistory":
        """Inverse of ``to_dict``."""
        return cls(
            step=np.asarray(d["step"], dtype=np.int64).reshape(-1),
            loss=_unnest(d["loss"]),
            grad_norm=_unnest(d["grad_norm"]),
            wall_time=_unnest(d["wall_time"]),
            skipped=np.asarray(d["skipped"], dtype=bool),
            params={k: _unnest(v) for k, v in d["params"].items()},
            metrics={k: _unnest(v) for k, v in d["metrics"].items()},
            best=d.get("best"),
        )

    def to_json(self, path: str | os.PathLike) -> None:
        """Write ``to_dict()`` as JSON (atomically: a temporary file, then a rename)."""
        write_text_atomic(path, strict_dumps(self.to_dict(), indent=1))

    def to_csv(self, path: str | os.PathLike) -> None:
        """Write one CSV row per step (per step and start for ``fit_multistart``, with a
        ``start`` column). Vector parameters get one column per element, ``name[i]``."""
        batched = self.n_starts is not None
        starts = range(self.n_starts) if batched else [None]
        header = ["step"] + (["start"] if batched else [])
        header += ["loss", "grad_norm", "wall_time", "skipped"] + list(self.metrics)
        columns = []
        for name, values in self.params.items():
            shape = values.shape[2 if batched else 1 :]
            if shape == ():
                columns.append((name, name, ()))
            else:
                for idx in np.ndindex(shape):
                    label = name + "[" + ",".join(str(i) for i in idx) + "]"
                    columns.append((label, name, idx))
        header += [c[0] for c in columns]
        rows = []
        for k in range(len(self)):
            for s in starts:
                at = (k,) if s is None else (k, s)
                row = [int(self.step[k])] + ([] if s is None else [s])
                row += [repr(float(self.loss[at])), repr(float(self.grad_norm[at])),
                        repr(float(self.wall_time[at])), int(bool(self.skipped[at]))]
                row += [repr(float(v[at])) for v in self.metrics.values()]
                row += [repr(float(self.params[name][at + idx])) for _, name, idx in columns]
                rows.append(row)
        text = io.StringIO(newline="")
        writer = csv.writer(text)
        writer.writerow(header)
        writer.writerows(rows)
        write_text_atomic(path, text.getvalue())


_COLUMNS = ("step", "loss", "grad_norm", "wall_time", "skipped")


class HistoryRows:
    """A ``FitHistory`` being recorded: rows appended on the host as lists, one per step."""

    def __init__(self, names):
        self.names = tuple(names)
        # The metrics' names, fixed by the first row appended (None before it).
        self.metric_names = None
        self.cols: dict[str, list] = {k: [] for k in _COLUMNS}
        self.params = {n: [] for n in names}
        self.metrics: dict[str, list] = {}

    @classmethod
    def from_history(cls, h: FitHistory) -> "HistoryRows":
        """The rows of ``h``, to append to (a resumed fit)."""
        rows = cls(h.params)
        for k in rows.cols:
            rows.cols[k] = list(getattr(h, k))
        rows.params = {k: list(v) for k, v in h.params.items()}
        rows.metrics = {k: list(v) for k, v in h.metrics.items()}
        rows.metric_names = tuple(h.metrics) if len(h) else None
        return rows

    def __len__(self):
        return len(self.cols["step"])

    def append(self, step, loss, gnorm, wall, skipped, metrics, params) -> dict:
        """Record one step; returns its row as a ``dict`` (what ``fit``'s callback gets)."""
        if self.metric_names is None:
            clash = set(metrics) & (set(self.cols) | set(self.names))
            if clash:
                raise ValueError(
                    f"loss_fn's metric name(s) {sorted(clash)} clash with the history's "
                    f"columns (step, loss, grad_norm, wall_time, skipped) or the trained "
                    f"parameters {list(self.names)}; rename them."
                )
            self.metric_names = tuple(metrics)
            self.metrics = {k: [] for k in metrics}
        for k, v in zip(_COLUMNS, (step, loss, gnorm, wall, skipped)):
            self.cols[k].append(v)
        for k in self.metric_names:
            self.metrics[k].append(metrics[k])
        for k, v in zip(self.names, params):
            self.params[k].append(v)
        row = {k: v[-1] for k, v in self.cols.items()}
        row.update({k: v[-1] for k, v in self.metrics.items()})
        row.update({k: v[-1] for k, v in self.params.items()})
        return row

    def history(self, n: int | None = None, best: int | None = None,
                batch: int | None = None) -> FitHistory:
        """The first ``n`` rows (all by default) as a ``FitHistory``; with ``batch`` starts,
        every array has a second axis over starts."""
        n = len(self) if n is None else n
        tail = () if batch is None else (batch,)

        def arr(values, dtype=float):
            return np.asarray(values[:n], dtype=dtype).reshape((n,) + tail)

        def param(values):
            shape = np.shape(values[0])[len(tail):] if values else ()
            return np.asarray(values[:n], float).reshape((n,) + tail + shape)

        return FitHistory(
            step=np.asarray(self.cols["step"][:n], dtype=np.int64).reshape(n),
            loss=arr(self.cols["loss"]),
            grad_norm=arr(self.cols["grad_norm"]),
            wall_time=arr(self.cols["wall_time"]),
            skipped=arr(self.cols["skipped"], dtype=bool),
            params={k: param(v) for k, v in self.params.items()},
            metrics={k: arr(v) for k, v in self.metrics.items()},
            best=best,
        )
