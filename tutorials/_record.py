"""Run one tutorial cell by cell and record what each code cell prints and which figures
it saves, for the documentation site (``docs/_hooks/tutorials.py`` shows them under the
cell). ``tutorials/run_all.py`` runs every tutorial through this script.

    python tutorials/_record.py tutorials/NAME.py OUT [--quick]

The cells are the jupytext percent cells (``# %%`` lines). They run in order in one
``__main__`` module with the ``sys.argv`` that ``python tutorials/NAME.py [--quick]``
would give, so the tutorial behaves as when run as a script; an error stops it (exit 1)
with the usual traceback. ``OUT`` is the tutorial's ``$NETDYN_TUTORIAL_OUT`` (where it
saves its figures); the record is ``OUT/outputs.json``::

    {"tutorial": NAME, "quick": bool, "complete": bool, "cells": [
        {"index": i, "source_sha256": ..., "stdout": ..., "figures": [file names]}]}

``index`` counts all cells from 0 (markdown cells included, as the docs hook does) and
``source_sha256`` lets the hook skip outputs of cells edited since the run. Printed paths
under ``OUT`` read ``$NETDYN_TUTORIAL_OUT``, so the pages show no machine's folders.
"""

import hashlib
import io
import json
import os
import sys
import traceback
import types
from pathlib import Path

FIGURE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp")


def cell_sha256(lines: list[str]) -> str:
    """The fingerprint of a cell's source lines (the docs hook computes the same)."""
    return hashlib.sha256("\n".join(lines).strip().encode()).hexdigest()


def cells(text: str):
    """``(index, kind, first_line, lines)`` of each ``# %%`` cell; ``first_line`` is the
    1-based line number of the cell's first source line."""
    index, kind, start, lines = -1, None, 0, []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# %%"):
            if kind is not None:
                yield index, kind, start, lines
            index, kind, start, lines = index + 1, "markdown" if "[markdown]" in line \
                else "code", number + 1, []
        elif kind is not None:
            lines.append(line)
        elif line.strip() and not line.startswith("#"):
            # Code before the first cell marker would run unrecorded: refuse it.
            raise ValueError(f"line {number}: code before the first '# %%' cell")
    if kind is not None:
        yield index, kind, start, lines


class _Tee(io.TextIOBase):
    """Writes go to the terminal as usual and into a buffer for the record."""

    def __init__(self, stream):
        self.stream, self.buffer_ = stream, io.StringIO()

    def write(self, text):
        self.stream.write(text)
        return self.buffer_.write(text)

    def flush(self):
        self.stream.flush()


def _clean(text: str, out: Path) -> str:
    # A progress line redrawn with "\r" shows its last state, as on a terminal.
    lines = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]
    text = "\n".join(lines)
    for folder in {str(out), str(out.resolve())}:
        text = text.replace(folder, "$NETDYN_TUTORIAL_OUT")
    return text.strip("\n")


def _figures(out: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(out).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in out.rglob("*")
        if p.is_file() and p.suffix.lower() in FIGURE_SUFFIXES
    }


def _write(path: Path, record: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, path)  # a reader never sees half a record


def main(argv=None) -> int:
    """Run the tutorial ``argv[0]`` recording into ``argv[1]``; return the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--quick"):
        print("usage: python tutorials/_record.py tutorials/NAME.py OUT [--quick]",
              file=sys.stderr)
        return 2
    path, out, quick = Path(argv[0]).resolve(), Path(argv[1]), len(argv) == 3
    out.mkdir(parents=True, exist_ok=True)
    text = path.read_text()
    record = {"tutorial": path.stem, "quick": quick, "complete": False, "cells": []}
    target = out / "outputs.json"

    module = types.ModuleType("__main__")
    module.__file__ = str(path)
    saved_main, saved_argv, saved_stdout = sys.modules["__main__"], sys.argv, sys.stdout
    sys.modules["__main__"] = module  # classes defined by the tutorial live here
    sys.argv = [str(path)] + (["--quick"] if quick else [])
    status = 0
    try:
        for index, kind, start, lines in cells(text):
            if kind != "code":
                continue
            # Blank lines before the cell keep the tutorial's line numbers in tracebacks.
            code = compile("\n" * (start - 1) + "\n".join(lines), str(path), "exec")
            before = _figures(out)
            tee = sys.stdout = _Tee(saved_stdout)
            stopped = False
            try:
                exec(code, module.__dict__)
            except SystemExit as stop:  # sys.exit() in a tutorial ends it, as in a script
                stopped, status = True, 0 if stop.code in (None, 0) else 1
            except Exception:
                stopped, status = True, 1
                traceback.print_exc()
            finally:
                sys.stdout = saved_stdout
            after = _figures(out)
            record["cells"].append({
                "index": index,
                "source_sha256": cell_sha256(lines),
                "stdout": _clean(tee.buffer_.getvalue(), out),
                "figures": sorted(n for n, stamp in after.items() if before.get(n) != stamp),
            })
            if stopped:
                break
            _write(target, record)
        record["complete"] = status == 0
        _write(target, record)
        return status
    finally:
        sys.modules["__main__"], sys.argv, sys.stdout = saved_main, saved_argv, saved_stdout


if __name__ == "__main__":
    sys.exit(main())
