"""The record of a fit: one row per optimisation step."""

import csv
import json
import math
import os
from pathlib import Path

import equinox as eqx
import numpy as np


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
    (with respect to the *unconstrained* values the optimiser updates), the auxiliary
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
        write_text_atomic(Path(path), json.dumps(self.to_dict(), indent=1))

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
        tmp = _tmp_path(Path(path))
        with open(tmp, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows(rows)
        os.replace(tmp, path)


def _tmp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp{os.getpid()}")


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``."""
    tmp = _tmp_path(path)
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
