"""A plain-text progress line for fits (no dependency)."""

import sys
import time
from typing import TextIO

import numpy as np


def _fmt(x) -> str:
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        return f"{float(a):.4g}"
    return f"mean {float(np.mean(a)):.4g} sd {float(np.std(a)):.3g}"


# The fields of a parameterisation, shown with the parameter they belong to.
_INNER = ("deviations", "coefficients", "baseline")


def _short(name: str) -> str:
    """``coupling.G`` -> ``G``; ``graph.weights.log_gain.deviations`` ->
    ``log_gain.deviations``."""
    parts = name.split(".")
    return ".".join(parts[-2:]) if parts[-1] in _INNER and len(parts) > 1 else parts[-1]


class Progress:
    """Prints ``[###...] step k/n | loss | metrics | parameters | s/step`` as a fit runs.

    On a terminal the line is rewritten in place (``\\r``) after every step; otherwise
    (a log file, a notebook capture) one line is printed every ``every`` steps and at
    the last step. Vector parameters are shown by their mean and standard deviation
    across entries (regions, maps); with several starts,
    the best (lowest) loss is shown.
    """

    def __init__(self, steps: int, names, stream: TextIO | None = None,
                 every: int | None = None):
        self.steps = steps
        self.names = tuple(names)
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every if every is not None else max(1, steps // 10)
        self.start = time.perf_counter()
        self.open = False
        self.width = 20

    def line(self, row: dict) -> str:
        """The text shown for one history row."""
        loss = np.asarray(row["loss"], float)
        pick = None
        if loss.ndim:
            finite = np.where(np.isfinite(loss), loss, np.inf)
            pick = int(np.argmin(finite))

        def value(x):
            a = np.asarray(x)
            return _fmt(a if pick is None else a[pick])

        k = int(row["step"]) + 1
        done = round(self.width * k / self.steps)
        bar = "[" + "#" * done + "." * (self.width - done) + "]"
        parts = [f"{bar} step {k:>{len(str(self.steps))}}/{self.steps}", f"loss {value(loss)}"]
        if pick is not None:
            parts.append(f"best start {pick}")
        skip = ("step", "loss", "grad_norm", "wall_time", "skipped", *self.names)
        parts += [f"{name} {value(v)}" for name, v in row.items() if name not in skip]
        parts += [f"{_short(name)} {value(row[name])}" for name in self.names]
        wall = np.max(np.asarray(row["wall_time"], float))
        parts.append(f"{wall:.2f} s/step")
        if np.any(row["skipped"]):
            parts.append("(skipped)")
        return " | ".join(parts)

    def __call__(self, row: dict) -> None:
        """Show one history row."""
        text = self.line(row)
        k = int(row["step"]) + 1
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
            self.open = True
        elif k % self.every == 0 or k == self.steps or k == 1:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line in place on a terminal."""
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False
