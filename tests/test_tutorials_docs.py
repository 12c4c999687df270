"""The documentation covers the public API, and the tutorials are wired into the docs and
into ``tutorials/run_all.py``. (The tutorials themselves run in CI with
``python tutorials/run_all.py --quick``; the site builds with ``mkdocs build --strict``.)"""

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import netdyn
import netdyn.datasets

ROOT = Path(__file__).resolve().parents[1]
# tutorials/run_all.py and private helpers (tutorials/_record.py) are not tutorials.
TUTORIALS = sorted(p for p in (ROOT / "tutorials").glob("*.py")
                   if p.name != "run_all.py" and not p.name.startswith("_"))


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reexports(path: Path) -> list[str]:
    """Names re-exported as ``from x import Name as Name`` / ``from . import m as m``."""
    tree = ast.parse(path.read_text())
    return [
        alias.asname
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname == alias.name
    ]


def _documented() -> set[str]:
    text = "\n".join(p.read_text() for p in (ROOT / "docs" / "api").glob("*.md"))
    return set(re.findall(r"^::: (netdyn(?:\.\w+)*)\s*$", text, flags=re.MULTILINE))


def _assert_in_order(page: str, blocks: list[str]):
    """Every block occurs in ``page``, each after the previous one."""
    position = 0
    for block in blocks:
        found = page.find(block, position)
        assert found >= 0, (block, page)
        position = found + len(block)


def test_every_public_name_is_in_the_api_reference():
    names = _reexports(ROOT / "netdyn" / "__init__.py")
    assert {"fit", "fit_multistart", "FcLoss", "FitHistory", "Positive", "Interval", "sweep",
            "gradient_memory", "Uniform", "MultiLevel", "Auto"} <= set(names)
    documented = _documented()
    missing = [n for n in names if f"netdyn.{n}" not in documented]
    assert not missing, f"not in docs/api/*.md (add '::: netdyn.NAME'): {missing}"
    assert set(names) <= set(vars(netdyn))  # the parsed names are the real ones


def test_every_dataset_name_is_in_the_api_reference():
    names = _reexports(ROOT / "netdyn" / "datasets" / "__init__.py")
    assert {"load", "available", "Dataset", "read_tvb_zip"} <= set(names)
    documented = _documented()
    missing = [n for n in names if f"netdyn.datasets.{n}" not in documented]
    assert not missing, f"not in docs/api/datasets.md: {missing}"
    assert set(names) <= set(vars(netdyn.datasets))


def _nav_pages(nav) -> list[str]:
    pages = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_nav_lists_existing_pages_and_every_tutorial():
    yaml = pytest.importorskip("yaml")  # installed with mkdocs (the dev extra)
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = _nav_pages(config["nav"])
    tutorials = {f"tutorials/{p.stem}.md" for p in TUTORIALS}
    assert tutorials <= set(pages)
    for page in set(pages) - tutorials:
        assert (ROOT / "docs" / page).is_file(), page
    api = {f"api/{p.name}" for p in (ROOT / "docs" / "api").glob("*.md")}
    assert api <= set(pages)


def test_run_all_lists_every_tutorial():
    run_all = _load(ROOT / "tutorials" / "run_all.py", "run_all")
    assert sorted(run_all.TUTORIALS) == [p.stem for p in TUTORIALS]
    with pytest.raises(SystemExit):
        run_all.main(["--only", "no_such_tutorial"])


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_is_a_percent_script_with_a_quick_mode(path):
    text = path.read_text()
    assert text.startswith("# %% [markdown]\n# # ")
    assert 'QUICK = "--quick" in sys.argv' in text
    compile(text, str(path), "exec")  # valid Python
    # The figures go to $NETDYN_TUTORIAL_OUT or a temporary folder, never the repository.
    assert "savefig" not in text or "NETDYN_TUTORIAL_OUT" in text


def test_hook_renders_markdown_and_code_cells():
    hook = _load(ROOT / "docs" / "_hooks" / "tutorials.py", "tutorials_hook")
    source = (
        "# %% [markdown]\n# # Title\n#\n# Some *prose*.\n\n"
        "# %%\nimport numpy as np\n\nx = np.ones(3)  # a comment\n\n"
        "# %% [markdown]\n# ## Section\n# $$ a = b $$\n"
    )
    page = hook.to_markdown(source, "example")
    _assert_in_order(page, [
        "# Title\n\nSome *prose*.",
        "```python\nimport numpy as np\n\nx = np.ones(3)  # a comment\n```",
        "## Section\n$$ a = b $$",
    ])
    assert "python tutorials/example.py" in page  # the "Run it" note
    for path in TUTORIALS:  # every tutorial renders, with its title first
        rendered = hook.to_markdown(path.read_text(), path.stem)
        assert rendered.startswith("# ") and "```python" in rendered


def test_hook_links_benchmarks_only_when_present_and_unlinks_unpublished_files():
    hook = _load(ROOT / "docs" / "_hooks" / "tutorials.py", "tutorials_hook")
    source = "# %% [markdown]\n# # T\n# <!-- benchmark: remat -->\n# after\n"
    with_report = hook.to_markdown(source, "t", {"remat": "Remat benchmark"})
    assert "[Remat benchmark](../benchmarks/remat.md)" in with_report
    without = hook.to_markdown(source, "t", {})
    assert "benchmark" not in without.replace("Run it", "") and "after" in without
    report = "![fig](remat.png) see [the script](../scripts/benchmarks/bench_remat.py), [x](https://a.b)"
    page = hook.benchmark_markdown(report, {"remat.png"})
    assert page == "![fig](remat.png) see `the script`, [x](https://a.b)"


def test_math_hook_typesets_tex_as_mathml():
    hook = _load(ROOT / "docs" / "_hooks" / "mathml.py", "mathml_hook")
    page = (
        r'<p>a <span class="arithmatex">\(x_i &lt; \frac{a}{b}\)</span> b</p>'
        '<div class="arithmatex">\\[\n\\begin{aligned} y &amp;= 1, \\\\ z &amp;= 2 '
        "\\end{aligned}\n\\]</div>"
    )
    html = hook.render_math(page)
    inline, block = html.split('<div class="arithmatex">')
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in inline
    assert "<msub><mi>x</mi><mi>i</mi></msub>" in inline and "<mfrac>" in inline
    assert "&lt;" in inline and r"\(" not in inline.split("<annotation")[0]
    assert 'display="block"' in block
    # amsmath's aligned -> a table of two rows, right-aligned left sides.
    assert block.count("<mtr>") == 2 and 'columnalign="right"' in block
    assert '<annotation encoding="application/x-tex">x_i &lt; \\frac{a}{b}</annotation>' in html


@pytest.mark.parametrize("tex", [r"\sqrt", r"a^", r"\begin{cases} a", r"\nosuchcommand x"])
def test_math_hook_warns_and_keeps_the_tex_it_cannot_convert(tex, caplog):
    hook = _load(ROOT / "docs" / "_hooks" / "mathml.py", "mathml_hook")
    page = f'<span class="arithmatex">\\({tex}\\)</span>'
    with caplog.at_level("WARNING"):
        html = hook.render_math(page, "api/x.md")
    assert "<math" not in html and f"<code>{tex}</code>" in html
    (record,) = caplog.records
    assert record.levelname == "WARNING" and record.name.startswith("mkdocs.")
    assert "api/x.md" in record.getMessage() and repr(tex) in record.getMessage()


@pytest.mark.slow
def test_site_builds_strict_offline_with_typeset_math(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("latex2mathml")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    pages = {p.relative_to(tmp_path).as_posix(): p.read_text() for p in tmp_path.rglob("*.html")}
    solvers = pages["api/solvers/index.html"]
    assert solvers.count('<math xmlns="http://www.w3.org/1998/Math/MathML"') >= 4
    assert "<mtable" in solvers  # Heun's aligned equations
    for name, text in pages.items():
        # No TeX left for a browser script, no script or stylesheet from another host.
        assert not re.search(r'class="arithmatex">\\[(\[]', text), name
        assert "mathjax" not in text.lower(), name
        assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', text), name


_TINY = """# %% [markdown]
# # Tiny

# %%
import os
import sys

QUICK = "--quick" in sys.argv
print("quick:", QUICK, "main:", __name__)
print("step 1/2\\rstep 2/2")

# %% [markdown]
# A figure.

# %%
out = os.environ["NETDYN_TUTORIAL_OUT"]
with open(os.path.join(out, "fig.png"), "wb") as f:
    f.write(b"not really a png")
print("saved to", os.path.join(out, "fig.png"))

# %%
x = 1
"""


def _record_run(tmp_path, source, *flags):
    path = tmp_path / "tiny.py"
    path.write_text(source)
    out = tmp_path / "out" / "tiny"
    env = dict(os.environ, NETDYN_TUTORIAL_OUT=str(out))
    done = subprocess.run(
        [sys.executable, str(ROOT / "tutorials" / "_record.py"), str(path), str(out), *flags],
        env=env, capture_output=True, text=True, timeout=120,
    )
    record = json.loads((out / "outputs.json").read_text())
    return done, record, out


def test_record_keeps_each_cells_output_and_figures(tmp_path):
    done, record, out = _record_run(tmp_path, _TINY, "--quick")
    assert done.returncode == 0, done.stderr
    assert "quick: True main: __main__" in done.stdout  # still printed as it runs
    assert record["tutorial"] == "tiny" and record["quick"] and record["complete"]
    assert [c["index"] for c in record["cells"]] == [1, 3, 4]  # code cells, counted as cells
    first, second, third = record["cells"]
    # The progress line shows its last state; the folder is named, not spelled out.
    assert first["stdout"] == "quick: True main: __main__\nstep 2/2"
    assert first["figures"] == [] and third == {**third, "stdout": "", "figures": []}
    assert second["stdout"] == "saved to $NETDYN_TUTORIAL_OUT/fig.png"
    assert second["figures"] == ["fig.png"] and (out / "fig.png").is_file()


def test_record_stops_at_an_error_with_the_tutorials_line_numbers(tmp_path):
    source = _TINY.replace("x = 1", "print('before')\nx = 1 / 0\nprint('after')")
    done, record, _ = _record_run(tmp_path, source)
    assert done.returncode == 1 and not record["complete"] and not record["quick"]
    line = source.splitlines().index("x = 1 / 0") + 1
    assert f'tiny.py", line {line}' in done.stderr and "ZeroDivisionError" in done.stderr
    assert record["cells"][-1]["stdout"] == "before"  # what it printed up to the error


def test_hook_shows_recorded_outputs_and_figures_under_their_cells(tmp_path):
    hook = _load(ROOT / "docs" / "_hooks" / "tutorials.py", "tutorials_hook")
    done, record, out = _record_run(tmp_path, _TINY, "--quick")
    assert done.returncode == 0, done.stderr
    assert hook.read_record("tiny", out.parent) == record
    page = hook.to_markdown(_TINY, "tiny", record=record, figures={"fig.png"})
    _assert_in_order(page, [
        'print("step 1/2\\rstep 2/2")\n```',
        "```{.text .tutorial-output}\nquick: True main: __main__\nstep 2/2\n```",
        "A figure.",
        "```{.text .tutorial-output}\nsaved to $NETDYN_TUTORIAL_OUT/fig.png\n```",
        "![tiny: fig.png](tiny/fig.png){ .tutorial-figure }",
        "x = 1\n```\n",
    ])
    assert page.count("tutorial-output") == 2  # nothing for the silent cell
    assert "quick version" in page and "Outputs not included" not in page

    # An edited cell loses its (stale) output, and the page says so.
    edited = _TINY.replace('print("saved to"', 'print("written to"')
    page = hook.to_markdown(edited, "tiny", record=record, figures={"fig.png"})
    assert page.count("tutorial-output") == 1 and "](tiny/fig.png)" not in page
    assert "1 cell(s) changed since that run" in page

    # No record (CI's pytest runs before the tutorials): the code, and how to get outputs.
    page = hook.to_markdown(_TINY, "tiny")
    assert "tutorial-output" not in page and "Outputs not included" in page
    assert "python tutorials/run_all.py --quick --only tiny" in page
    (out / "outputs.json").write_text("{not json")
    assert hook.read_record("tiny", out.parent) is None


def test_output_blocks_are_fenced_and_shortened():
    hook = _load(ROOT / "docs" / "_hooks" / "tutorials.py", "tutorials_hook")
    block = hook._output_block("a ```` b")
    assert block.startswith("`````{.text") and block.endswith("\n`````")
    long = hook._output_block("\n".join(str(i) for i in range(100)))
    lines = long.splitlines()[1:-1]
    assert lines[:2] == ["0", "1"] and lines[-1] == "99" and "[... 40 lines not shown ...]" in lines


def test_architecture_map_names_modules_and_names_that_exist():
    text = (ROOT / "docs" / "architecture.md").read_text()
    paths = set(re.findall(r"\b((?:netdyn|docs|tutorials|tests)/[\w./]*\w/?)", text))
    assert {"netdyn/_simulate/simulate.py", "netdyn/_remat/", "netdyn/_loss/fc_loss.py",
            "netdyn/_cli/"} <= paths
    missing = sorted(p for p in paths if "NAME" not in p and not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
    sources = sorted((ROOT / "netdyn").rglob("*.py"))
    files = set(re.findall(r"`(\w+\.py)`", text))
    assert not files - {p.name for p in sources}, files
    code = "\n".join(p.read_text() for p in sources)
    public = set(re.findall(r"\bnd\.(\w+)", text))
    assert not [n for n in public if not hasattr(netdyn, n)], public
    classes = set(re.findall(r"`([A-Z][a-z]+[A-Z]\w*)[`(.]", text))
    assert {"MonitorSchedule", "CouplingTerms", "SimulationState"} <= classes
    assert not [c for c in classes if f"class {c}" not in code], classes
    names = set(re.findall(r"`(?:\w+\.)?([a-z]+_\w+)[`(]", text))
    assert {"make_step", "make_emit"} <= names
    assert not [n for n in names if not re.search(rf"\b{n}\b", code)], names
