"""MkDocs hook: render the jupytext "percent" tutorials in ``tutorials/`` as pages, with
what each code cell printed and the figures it saved, and the benchmark reports in
``benchmarks/`` (with their figures) as a "Benchmarks" section.

``tutorials/NAME.py`` becomes ``tutorials/NAME.md``: ``# %% [markdown]`` cells become
prose (the leading ``# `` of each line removed), code cells become Python code blocks.
Nothing is executed here: ``python tutorials/run_all.py [--quick]`` (CI runs it before
the build) runs each tutorial through ``tutorials/_record.py``, which writes
``tutorials/_output/NAME/outputs.json`` (each code cell's printed output and the figures
it saved, beside it). Under each code cell the page shows that output and those figures,
when the cell's source is still the one that ran; a page without a record says how to
make one. Any ``tutorials/*.py`` with ``# %%`` cells is picked up.

A markdown line ``<!-- benchmark: NAME -->`` in a tutorial becomes a link to the page of
``benchmarks/NAME.md`` when that report exists, and disappears otherwise (the reports are
written by the scripts in ``scripts/benchmarks/`` and may be missing from a checkout).

The documentation pages link to the files themselves, so that a link works in the
repository: ``[Sweeps](../tutorials/sweeps_and_scale.py)`` from ``docs/index.md``. In the
site, a link to a file published as a page (a tutorial's script, a benchmark report)
becomes a link to that page.
"""

import importlib.util
import json
import logging
import os
import re
from pathlib import Path, PurePosixPath

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tutorials"
OUTPUTS = SOURCE / "_output"  # written by tutorials/run_all.py
BENCHMARKS = ROOT / "benchmarks"
REPO = "tutorials"
MAX_OUTPUT_LINES = 60  # longer outputs keep their first and last 30 lines

log = logging.getLogger("mkdocs.hooks.tutorials")


def _load_recorder():
    # One definition of a cell and of its fingerprint, shared with the recorder.
    spec = importlib.util.spec_from_file_location("netdyn_tutorial_record",
                                                  SOURCE / "_record.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_record = _load_recorder()
_MARKER = re.compile(r"^<!-- benchmark: (\w+) -->$")
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _cells(text: str):
    for _, kind, _, lines in _record.cells(text):
        yield kind, lines


def _benchmark_link(name: str, available) -> list[str]:
    if name not in available:
        return []
    return [
        '!!! info "Reference benchmark"',
        f"    The full comparison on the reference workload: [{available[name]}]"
        f"(../benchmarks/{name}.md).",
    ]


def _fence(text: str) -> str:
    # A fence longer than any backtick run in the text cannot be closed by it.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _output_block(stdout: str) -> str:
    lines = stdout.splitlines()
    if len(lines) > MAX_OUTPUT_LINES:
        half = MAX_OUTPUT_LINES // 2
        lines = [*lines[:half], f"[... {len(lines) - 2 * half} lines not shown ...]",
                 *lines[-half:]]
    text = "\n".join(lines)
    fence = _fence(text)
    return f"{fence}{{.text .tutorial-output}}\n{text}\n{fence}"


def _outputs_note(name: str, record: dict | None, stale: int) -> str:
    command = f"python {REPO}/run_all.py --quick --only {name}"
    if record is None:
        return (
            '!!! warning "Outputs not included"\n    This build of the site has no recorded '
            f"run of this tutorial, so it shows the code without its printed output and "
            f"figures. To include them, run `{command}` (or `python {REPO}/run_all.py "
            "--quick` for all tutorials) before `mkdocs build`."
        )
    mode = ("the quick version (`--quick`: shorter simulations and fewer steps than the "
            "full tutorial, so the numbers differ)") if record.get("quick") else \
        "the full version"
    lines = [f'!!! info "Outputs"\n    The printed output and figures under the code cells '
             f"come from a run of {mode}, recorded by `python {REPO}/run_all.py`."]
    if not record.get("complete"):
        lines.append("    That run stopped with an error: cells after it show no output.")
    if stale:
        lines.append(f"    {stale} cell(s) changed since that run and show no output: run "
                     f"`{command}` again to refresh them.")
    return "\n\n".join(lines)


def to_markdown(text: str, name: str, benchmarks: dict[str, str] | None = None,
                record: dict | None = None, figures: set[str] | None = None) -> str:
    """The page for one tutorial's source ``text``; ``benchmarks``: ``{name: title}`` of
    the benchmark pages that exist; ``record``: the tutorial's ``outputs.json`` (or None
    when it has not been run); ``figures``: the recorded figure files that exist, as
    paths relative to the page's folder of figures (``NAME/``)."""
    available = benchmarks or {}
    recorded = {cell["index"]: cell for cell in (record or {}).get("cells", [])}
    figures = figures or set()
    parts, stale = [], 0
    for index, (kind, lines) in enumerate(_cells(text)):
        fingerprint = _record.cell_sha256(lines)
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
            continue
        parts.append("```python\n" + "\n".join(lines) + "\n```")
        cell = recorded.get(index)
        if cell is None:
            continue
        if cell["source_sha256"] != fingerprint:
            stale += 1
            continue
        if cell["stdout"].strip():
            parts.append(_output_block(cell["stdout"]))
        for figure in cell["figures"]:
            if figure in figures:
                parts.append(f"![{name}: {figure}]({name}/{figure}){{ .tutorial-figure }}")
    note = (
        f'!!! note "Run it"\n    This page is `{REPO}/{name}.py`, a script in jupytext '
        f"percent format: run it with `python {REPO}/{name}.py` (add `--quick` for a "
        "short version) or open it as a notebook with jupytext."
    )
    title, *rest = parts
    return "\n\n".join([title, note, _outputs_note(name, record, stale), *rest]) + "\n"


def read_record(name: str, outputs: Path = OUTPUTS) -> dict | None:
    """The recorded run ``outputs/NAME/outputs.json`` of a tutorial, or None."""
    path = outputs / name / "outputs.json"
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
        assert isinstance(record, dict) and isinstance(record["cells"], list)
        for cell in record["cells"]:
            assert {"index", "source_sha256", "stdout", "figures"} <= set(cell)
    except (ValueError, KeyError, TypeError, AssertionError):
        # A broken record must not break the site: the page says it has no outputs.
        log.info("ignoring the unreadable tutorial record %s", path)
        return None
    return record


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


def _published(path: PurePosixPath) -> str | None:
    """The site page of the repository file ``path`` (relative to the root), if any."""
    if path.parent == PurePosixPath(REPO) and path.suffix == ".py":
        return f"{REPO}/{path.stem}.md"
    if path.parent == PurePosixPath("benchmarks") and path.suffix == ".md":
        return str(path)
    return None


def repository_links(markdown: str, src_uri: str, pages: set[str]) -> str:
    """The page ``docs/SRC_URI`` with its links to files that the site publishes as pages
    (``pages``, site paths such as ``tutorials/NAME.md``) pointing to those pages."""
    folder = (ROOT / "docs" / src_uri).parent

    def link(match):
        bang, label, target = match.groups()
        path, hash_, anchor = target.partition("#")
        if bang or not path or "://" in path or path.startswith(("/", "mailto:")):
            return match.group(0)
        try:
            source = (folder / path).resolve().relative_to(ROOT)
        except ValueError:
            return match.group(0)
        page = _published(PurePosixPath(source.as_posix()))
        if page not in pages:
            return match.group(0)
        relative = os.path.relpath(page, PurePosixPath(src_uri).parent.as_posix() or ".")
        return f"[{label}]({PurePosixPath(relative).as_posix()}{hash_}{anchor})"

    return _LINK.sub(link, markdown)


def on_page_markdown(markdown, page, config, files):
    if getattr(page.file, "generated_by", None):
        return markdown
    pages = {f.src_uri for f in files.documentation_pages()}
    return repository_links(markdown, page.file.src_uri, pages)


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
        if path.name.startswith("_") or "# %%" not in text:
            continue
        name = path.stem
        record = read_record(name)
        figures = set()
        for cell in (record or {}).get("cells", []):
            for figure in cell["figures"]:
                source = OUTPUTS / name / figure
                if source.is_file() and figure not in figures:
                    figures.add(figure)
                    files.append(File.generated(config, f"tutorials/{name}/{figure}",
                                                abs_src_path=str(source)))
        files.append(
            File.generated(config, f"tutorials/{name}.md",
                           content=to_markdown(text, name, pages, record, figures))
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
