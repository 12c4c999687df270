"""MkDocs hook: render the jupytext "percent" tutorials in ``tutorials/`` as pages, and the
benchmark reports in ``benchmarks/`` (with their figures) as a "Benchmarks" section.

``tutorials/NAME.py`` becomes ``tutorials/NAME.md``: ``# %% [markdown]`` cells become
prose (the leading ``# `` of each line removed), code cells become Python code blocks.
Nothing is executed; the tutorials run in CI with ``python tutorials/run_all.py --quick``.

A markdown line ``<!-- benchmark: NAME -->`` in a tutorial becomes a link to the page of
``benchmarks/NAME.md`` when that report exists, and disappears otherwise (the reports are
written by the scripts in ``scripts/`` and may be missing from a checkout).
"""

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tutorials"
BENCHMARKS = ROOT / "benchmarks"
REPO = "tutorials"
_MARKER = re.compile(r"^<!-- benchmark: (\w+) -->$")
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _cells(text: str):
    kind, lines = None, []
    for line in text.splitlines():
        if line.startswith("# %%"):
            if kind is not None:
                yield kind, lines
            kind = "markdown" if "[markdown]" in line else "code"
            lines = []
        elif kind is not None:
            lines.append(line)
    if kind is not None:
        yield kind, lines


def _benchmark_link(name: str, available) -> list[str]:
    if name not in available:
        return []
    return [
        '!!! info "Reference benchmark"',
        f"    The full comparison on the reference workload: [{available[name]}]"
        f"(../benchmarks/{name}.md).",
    ]


def to_markdown(text: str, name: str, benchmarks: dict[str, str] | None = None) -> str:
    """The page for one tutorial's source ``text``; ``benchmarks``: ``{name: title}`` of
    the benchmark pages that exist."""
    available = benchmarks or {}
    parts = []
    for kind, lines in _cells(text):
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines:
            continue
        if kind == "markdown":
            prose = []
            for line in lines:
                line = line[2:] if line.startswith("# ") else line.lstrip("#")
                marker = _MARKER.match(line.strip())
                prose += _benchmark_link(marker.group(1), available) if marker else [line]
            parts.append("\n".join(prose))
        else:
            parts.append("```python\n" + "\n".join(lines) + "\n```")
    note = (
        f'!!! note "Run it"\n    This page is `{REPO}/{name}.py`, a script in jupytext '
        f"percent format: run it with `python {REPO}/{name}.py` (add `--quick` for a "
        "short version) or open it as a notebook with jupytext."
    )
    title, *rest = parts
    return "\n\n".join([title, note, *rest]) + "\n"


def _title(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def benchmark_pages() -> dict[str, str]:
    """``{name: title}`` of the reports ``benchmarks/NAME.md`` in this checkout."""
    return {p.stem: _title(p) for p in sorted(BENCHMARKS.glob("*.md"))}


def benchmark_markdown(text: str, figures: set[str]) -> str:
    """A report as a page: links to files that are not published (scripts, other
    folders) become plain code text, so that a strict build does not fail on them."""

    def keep(match):
        bang, label, target = match.groups()
        if target.startswith(("http://", "https://", "#")) or target in figures:
            return match.group(0)
        return f"`{label}`" if not bang else f"*(figure `{target}` not published)*"

    return _LINK.sub(keep, text)


def on_config(config):
    pages = benchmark_pages()
    if pages and config.nav is not None:
        config.nav.append(
            {"Benchmarks": [{title: f"benchmarks/{name}.md"} for name, title in pages.items()]}
        )
    return config


def on_files(files, config):
    pages = benchmark_pages()
    for path in sorted(SOURCE.glob("*.py")):
        text = path.read_text()
        if "# %%" not in text:
            continue
        files.append(
            File.generated(config, f"tutorials/{path.stem}.md",
                           content=to_markdown(text, path.stem, pages))
        )
    figures = {p.name for p in BENCHMARKS.glob("*.png")}
    for name in sorted(figures):
        files.append(File.generated(config, f"benchmarks/{name}",
                                    abs_src_path=str(BENCHMARKS / name)))
    for name in pages:
        text = (BENCHMARKS / f"{name}.md").read_text()
        files.append(File.generated(config, f"benchmarks/{name}.md",
                                    content=benchmark_markdown(text, figures)))
    return files
