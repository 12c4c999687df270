"""Write, at the top of each ``docs/api/*.md`` page, the list of the names it documents,
each with the first sentence of its docstring.

The pages are ``mkdocstrings`` directives (``::: netdyn.NAME``), which the site expands
and the repository shows as they are: the list is what a reader of the repository sees.
It sits between ``<!-- names -->`` and ``<!-- /names -->`` (inserted before the page's
first directive or section when missing) and follows the page's directives, in order. Add a
name to a page by adding its ``::: netdyn.NAME`` line, then run

    python scripts/api_names.py

``tests/test_api_pages.py`` fails while a list is out of date.
"""

import importlib
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "api"
BEGIN = ("<!-- names: written by scripts/api_names.py from the ::: entries and the "
         "docstrings -->")
END = "<!-- /names -->"
_BLOCK = re.compile(r"^<!-- names\b.*?^<!-- /names -->\n", re.MULTILINE | re.DOTALL)
_DIRECTIVE = re.compile(r"^::: (netdyn(?:\.\w+)*)\s*$", re.MULTILINE)
# A sentence ends at a full stop before a capital letter or a digit, except after these
# abbreviations.
_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bcf)(?<!\beqs)(?<!\beq)(?<!\bal)\.\s+(?=[A-Z0-9])")
_LONG = 200  # a longer first sentence is cut at its first ": " (outside brackets and code)


def documented(text: str) -> list[str]:
    """The names a page documents, in its order."""
    return _DIRECTIVE.findall(text)


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """The names a page documents, by section (``## TITLE``; ``""`` before the first)."""
    sections = [("", [])]
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif match := _DIRECTIVE.match(line):
            sections[-1][1].append(match.group(1))
    return [(title, names) for title, names in sections if names]


def _object(name: str):
    """The object a dotted name refers to, by attribute from its package (so that a
    module re-exported under another name, ``netdyn.presets``, resolves too)."""
    first, *rest = name.split(".")
    obj = importlib.import_module(first)
    for attribute in rest:
        obj = getattr(obj, attribute)
    return obj


def _first_colon(text: str) -> int:
    """Where the first ``": "`` outside brackets, code and math is (else the end)."""
    depth, quoted = 0, None
    for i, char in enumerate(text):
        if quoted:
            quoted = None if char == quoted else quoted
        elif char in "`$":
            quoted = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0 and text[i + 1:i + 2] == " ":
            return i
    return len(text)


def summary(name: str) -> str:
    """The first sentence of the docstring of ``name``, as one line of Markdown."""
    doc = inspect.getdoc(_object(name)) or ""
    paragraph = " ".join(doc.split("\n\n")[0].split())
    end = _END.search(paragraph)
    sentence = paragraph[:end.start() + 1] if end else paragraph
    # A sentence that runs on into an equation ("... the Lyapunov equation $...$ with")
    # or goes on for long is cut before its first colon, where the definition starts.
    if not sentence.endswith((".", ":", ",")) or len(sentence) > _LONG:
        sentence = sentence[:_first_colon(sentence)]
    sentence = sentence.rstrip(":,").rstrip()
    if not sentence.endswith("."):
        sentence += "."
    sentence = sentence.replace("``", "`")
    return re.sub(r"\[(`[^`\]]+`)\]\[\]", r"\1", sentence)  # autorefs links: plain code


def block(text: str) -> str:
    """The list of names for a page's text."""
    lines = [BEGIN]
    for title, names in _sections(_BLOCK.sub("", text)):
        lines += ["", f"**{title}**", ""] if title else [""]
        for name in names:
            short = "nd" + name.removeprefix("netdyn")
            lines.append(f"- [`{short}`](#{name}): {summary(name)}")
    return "\n".join([*lines, "", END]) + "\n"


def updated(text: str) -> str:
    """The page's text with its list of names up to date."""
    new = block(text)
    if _BLOCK.search(text):
        return _BLOCK.sub(lambda _: new, text, count=1)
    # Before the first directive or section.
    match = re.search(r"^(?::::|##) ", text, flags=re.MULTILINE)
    at = match.start() if match else len(text)
    return text[:at] + new + "\n" + text[at:]


def main() -> int:
    for page in sorted(PAGES.glob("*.md")):
        text = page.read_text()
        new = updated(text)
        if new != text:
            page.write_text(new)
            print(f"updated {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
