"""MkDocs hook: render the jupytext "percent" tutorials in ``tutorials/`` as pages.

``tutorials/NAME.py`` becomes ``tutorials/NAME.md``: ``# %% [markdown]`` cells become
prose (the leading ``# `` of each line removed), code cells become Python code blocks.
Nothing is executed; the tutorials run in CI with ``python tutorials/run_all.py --quick``.
"""

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tutorials"
REPO = "tutorials"


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


def to_markdown(text: str, name: str) -> str:
    """The page for one tutorial's source ``text``."""
    parts = []
    for kind, lines in _cells(text):
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines:
            continue
        if kind == "markdown":
            parts.append("\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                                   for line in lines))
        else:
            parts.append("```python\n" + "\n".join(lines) + "\n```")
    note = (
        f'!!! note "Run it"\n    This page is `{REPO}/{name}.py`, a script in jupytext '
        f"percent format: run it with `python {REPO}/{name}.py` (add `--quick` for a "
        "short version) or open it as a notebook with jupytext."
    )
    title, *rest = parts
    return "\n\n".join([title, note, *rest]) + "\n"


def on_files(files, config):
    for path in sorted(SOURCE.glob("*.py")):
        text = path.read_text()
        if "# %%" not in text:
            continue
        files.append(
            File.generated(config, f"tutorials/{path.stem}.md",
                           content=to_markdown(text, path.stem))
        )
    return files
