"""Every Python example of the README and of the documentation pages runs as written, and
prints what the page says it prints.

Each page runs in a fresh Python process of its own, its ```` ```python ```` blocks one after
the other in one namespace, as a reader would paste them (the process does not inherit the
test suite's JAX settings: a page that wants float64 switches it on itself). Markers, in
an HTML comment right before a block (readers of the rendered page do not see them):

- ``<!-- not run: reason -->``: the block is skipped (it needs the reader's own files);
- ``<!-- raises: ValueError: words of the message -->``: the block must raise that
  exception, with those words in its message; the page goes on after it.

A printed claim is a trailing comment on the (first) line of a ``print(...)`` call,
``print(r)  # prints 0.44``, or a comment line of its own after it, ``# prints fc_r 0.52,
mean_fc 0.33`` (with labels); ``(float32: 0.58)`` after a number gives its value in
float32 (the noise draws differ between precisions). A labelled number is the first
number printed after its label, an unlabelled one the next number printed; each must agree
with the printed value to within one unit of its last written digit (``0.44``: 0.43 to
0.45). Other numbers in such a comment are claims too: keep prose out of it.
"""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The README and the hand-written pages (docs/api/ holds reference pages, docs/tutorials/
# is generated from tutorials/*.py, which run on their own).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Heavy pages run only with -m slow: together about 130 s of the default run's CPU (the
# README's fit on the analytic FC and its held-out simulation; the getting-started page's
# two held-out sets). `.ci/run` runs them after the default suite
# (`pytest -m slow tests/test_doc_examples.py`), so every page's examples are checked in CI.
SLOW = {"README.md", "getting-started.md"}

_FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.DOTALL | re.MULTILINE)
_MARKER = re.compile(r"<!--\s*(not run|raises)\s*:\s*((?:(?!-->).)*?)\s*-->\s*$",
                     flags=re.DOTALL)


def _blocks(path: Path) -> list[dict]:
    """The page's Python blocks: code, first line (1-based) and marker."""
    text = path.read_text()
    blocks = []
    for match in _FENCE.finditer(text):
        if match.group(1) != "python":
            continue
        before = text[: match.start()].rstrip()
        marker = _MARKER.search(before[-500:])
        kind, detail = (marker.group(1), marker.group(2)) if marker else ("run", "")
        line = text.count("\n", 0, match.start(2)) + 1
        blocks.append({"code": match.group(2), "line": line, "kind": kind, "detail": detail})
    return blocks


# Runs a page's blocks in one namespace; `print` there records what each line printed.
_DRIVER = textwrap.dedent("""
    import builtins, json, sys, time
    blocks, page, results = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
    printed, done = [], []

    def _print(*args, sep=" ", end="\\n", file=None, flush=False):
        if file is None:
            frame = sys._getframe(1)
            if frame.f_code.co_filename == page:
                printed.append([frame.f_lineno, (sep or " ").join(map(str, args))])
        builtins.print(*args, sep=sep, end=end, file=file, flush=flush)

    namespace = {"__name__": "__main__", "print": _print}
    try:
        for block in blocks:
            if block["kind"] == "not run":
                continue
            code = compile("\\n" * (block["line"] - 1) + block["code"], page, "exec")
            start = time.perf_counter()
            if block["kind"] == "raises":
                try:
                    exec(code, namespace)
                    raised = None
                except Exception as error:
                    raised = f"{type(error).__name__}: {error}"
                done.append({"line": block["line"], "raised": raised})
            else:
                exec(code, namespace)
                done.append({"line": block["line"]})
            done[-1]["seconds"] = time.perf_counter() - start
    finally:
        with open(results, "w") as f:
            jax = sys.modules.get("jax")
            x64 = bool(jax and jax.config.jax_enable_x64)
            json.dump({"printed": printed, "done": done, "x64": x64}, f)
""")


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _run(path: Path, tmp_path: Path) -> dict:
    blocks = _blocks(path)
    (tmp_path / "blocks.json").write_text(json.dumps(blocks))
    # A reader's environment: no precision switch unless the page sets one, no figures on
    # screen. The page runs in an empty folder (files it writes stay out of the repository).
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "JAX_PLATFORMS")}
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(tmp_path / "blocks.json"), str(path),
         str(tmp_path / "results.json")],
        cwd=tmp_path, env=env | {"MPLBACKEND": "Agg"}, capture_output=True, text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{_name(path)}: an example failed\n{done.stderr[-4000:]}"
    return json.loads((tmp_path / "results.json").read_text())


_NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
_CLAIM = re.compile(r"#\s*(?:prints\s+)?((?:[^#\d\s(][^#\d(]*?\s+)?" + _NUMBER + r".*)$")


def _claims(line: str, x64: bool) -> list[tuple[str, float, float]]:
    """(label, value, tolerance) claimed by the comment of one source line: a trailing
    comment of a ``print(`` line, or a comment line of its own starting ``# prints``."""
    if line.lstrip().startswith("# prints "):
        comment = line.lstrip()
    elif "print(" in line and "#" in line[line.index("print("):]:
        comment = line[line.index("#", line.index("print(")):]
    else:
        return []
    if not _CLAIM.match(comment):
        return []
    claims = []
    body = re.sub(r"^#\s*(?:prints\s+)?", "", comment)
    for item in re.split(r"[,;]\s+", body):
        found = re.match(rf"\s*(.*?)\s*({_NUMBER})\s*(?:\((float32|float64):\s*({_NUMBER})\))?",
                         item)
        if not found:
            continue
        label, value, precision, other = found.groups()
        if precision and (precision == "float64") == x64:
            value = other
        decimals = len(value.split(".")[1]) if "." in value else 0
        claims.append((label.strip(" :=").strip(), float(value), 10.0 ** -decimals))
    return claims


def _check_claims(path: Path, results: dict, x64: bool):
    lines = path.read_text().splitlines()
    printed: dict[int, list[str]] = {}
    for line, text in results["printed"]:
        printed.setdefault(line, []).append(text)
    wrong = []
    last_print = 0
    for number, source in enumerate(lines, start=1):
        claims = _claims(source, x64)
        if "print(" in source:
            last_print = number
        if not claims:
            continue
        where = f"{_name(path)}:{number}"
        assert last_print in printed, f"{where}: the claimed print never ran"
        text = printed[last_print][-1]
        numbers = iter(float(n) for n in re.findall(_NUMBER, text))
        for label, value, tolerance in claims:
            if label:
                after = r"(?<!\w)" + re.escape(label) + rf"\W*(?:Array\()?({_NUMBER})"
                found = re.search(after, text)
                assert found, f"{where}: {label!r} not printed in {text!r}"
                got = float(found.group(1))
            else:
                got = next(numbers, None)
                assert got is not None, f"{where}: fewer numbers printed than claimed: {text!r}"
            if abs(got - value) > tolerance * (1 + 1e-9):
                wrong.append(f"{where}: printed {label or 'value'} {got}, the page says {value}")
    assert not wrong, "\n".join(wrong)


def _marks(path: Path):
    return [pytest.mark.slow] if path.name in SLOW else []


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=_marks(p), id=str(p.relative_to(ROOT)))
     for p in PAGES if _blocks(p)],
)
def test_page_examples_run_and_print_what_the_page_says(path, tmp_path):
    results = _check_page(path, tmp_path)
    print({d["line"]: round(d["seconds"], 1) for d in results["done"]})  # seconds per block


def _check_page(path: Path, tmp_path: Path) -> dict:
    results = _run(path, tmp_path)
    blocks = [b for b in _blocks(path) if b["kind"] != "not run"]
    assert [d["line"] for d in results["done"]] == [b["line"] for b in blocks]
    for block, done in zip(blocks, results["done"]):
        if block["kind"] == "raises":
            where = f"{_name(path)}:{block['line']}"
            expected = block["detail"]
            assert done["raised"], f"{where}: the block should raise {expected}"
            name, _, words = expected.partition(":")
            assert done["raised"].startswith(name.strip() + ":"), (where, done["raised"])
            assert words.strip() in done["raised"], (where, done["raised"])
    _check_claims(path, results, results["x64"])
    return results


def test_pages_use_only_marked_python_fences():
    """A Python example in another fence (```py, ```python3, ```pycon) would escape the
    test above: the pages spell Python blocks ```python."""
    for path in PAGES:
        languages = {m.group(1) for m in _FENCE.finditer(path.read_text())}
        odd = {lang for lang in languages if lang.startswith("py") and lang != "python"}
        assert not odd, f"{path.relative_to(ROOT)}: {odd}"


_TOY_PAGE = """# A page

```python
x = 0.25
print("x is", x)   # prints 0.25
```

<!-- not run: needs your own files -->
```python
open("no-such-file.tsv")
```

Some text <!-- raises: ValueError: one larger -->

```python
raise ValueError(f"x must be one larger than {x}")
```

```python
print({"fc_r": 0.5 + x, "mean_fc": 0.125})
# prints mean_fc 0.13, fc_r 0.75
```
"""


def test_markers_and_claims_on_a_toy_page(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(_TOY_PAGE)
    assert [b["kind"] for b in _blocks(page)] == ["run", "not run", "raises", "run"]
    (tmp_path / "run").mkdir()
    results = _check_page(page, tmp_path / "run")
    assert [d["line"] for d in results["done"]] == [4, 16, 20]
    # A wrong claim, a block that does not raise, a failing block: each is caught.
    for old, new in [("prints 0.25", "prints 0.27"), ("raise ValueError", "print"),
                     ("x = 0.25", "x = 1 / 0")]:
        page.write_text(_TOY_PAGE.replace(old, new))
        with pytest.raises(AssertionError):
            _check_page(page, tmp_path / "run")


def test_claims_are_parsed_as_written():
    assert _claims("print(r)  # prints 0.44", x64=True) == [("", 0.44, 0.01)]
    assert _claims("print(r)  # prints 0.44 (float32: 0.58)", x64=False) == [("", 0.58, 0.01)]
    assert _claims('print("FC r =", r)  # 0.63 (float64: 0.625)', x64=True) == [
        ("", 0.625, 0.001)]
    assert _claims("print(s)  # prints fc_r 0.52, mean_fc 0.3", x64=True) == [
        ("fc_r", 0.52, 0.01), ("mean_fc", 0.3, 0.1)]
    assert _claims("print(fc.shape)  # the usual FC fit", x64=True) == []
    assert _claims("x = 1  # 0.5", x64=True) == []
    assert _claims("# prints r 0.5", x64=True) == [("r", 0.5, 0.1)]


def test_docs_index_lists_every_tutorial():
    index = (ROOT / "docs" / "index.md").read_text()
    tutorials = sorted(p.stem for p in (ROOT / "tutorials").glob("*.py")
                       if p.name != "run_all.py" and not p.name.startswith("_"))
    missing = [t for t in tutorials if f"(../tutorials/{t}.py)" not in index]
    assert not missing, f"docs/index.md does not list: {missing}"


def test_ci_runs_the_heavy_pages():
    # The pages kept out of the default run are still checked on every CI run.
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert SLOW <= {p.name for p in PAGES}
    # CI runs the slow checks (all of them but the long ones) after the default run.
    assert 'pytest -m "slow and not long"' in ci
