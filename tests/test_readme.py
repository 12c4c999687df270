"""The README is what a new user runs first: its commands must work (its Python examples
run in tests/test_doc_examples.py, with the docs pages')."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_ci_runs_the_readme_install_and_test_commands():
    bash = [line.strip() for block in _blocks("bash") for line in block.splitlines()]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    install = next(line for line in bash if line.startswith("pip install"))
    assert install in ci
    assert "pytest" in bash and "pytest" in ci


def _commands(text: str) -> list[str]:
    return [line.split(" #")[0].strip() for line in text.splitlines() if line.strip()]


def test_install_is_clone_cd_venv_then_the_command_ci_runs():
    (install,) = [b for b in _blocks("bash") if "pip install" in b]
    assert _commands(install) == [
        "git clone <repository-url> netdyn",
        "cd netdyn",
        "python3 -m venv .venv",
        ". .venv/bin/activate",
        'pip install -e ".[dev]"',
    ]
    # CI does the same in a fresh environment of its own: venv, activate, then install.
    ci = _commands((ROOT / ".ci" / "run").read_text())
    venv = next(i for i, c in enumerate(ci) if c.startswith("python3 -m venv "))
    folder = ci[venv].split()[-1]
    assert ci.index(f". {folder}/bin/activate") > venv
    assert ci.index('pip install -e ".[dev]"') > ci.index(f". {folder}/bin/activate")


def _dtype_in_fresh_process(code: str, **env) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport jax.numpy as jnp\n"
         "print(jnp.asarray(1.0).dtype, jnp.zeros(3).dtype)"],
        env=environment | env, capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.slow
def test_readme_float64_switches_work_in_a_fresh_process():
    (example,) = [b for b in _blocks("python") if "jax_enable_x64" in b]
    assert example.index("jax_enable_x64") < example.index("import netdyn")
    # The example's head, as written: the switch, then the imports.
    snippet = example[: example.index("\n", example.index("import netdyn"))]
    assert _dtype_in_fresh_process(snippet) == ["float64", "float64"]
    assert "export JAX_ENABLE_X64=1" in _commands("\n".join(_blocks("bash")))
    assert _dtype_in_fresh_process("import netdyn as nd", JAX_ENABLE_X64="1") == [
        "float64", "float64"]
    # Without either, JAX's default: float32 (what the switch is for).
    assert _dtype_in_fresh_process("import netdyn as nd") == ["float32", "float32"]


def test_readme_main_command_is_the_console_script():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    bash = [line.strip() for block in _blocks("bash") for line in block.splitlines()]
    commands = {shlex.split(line)[0] for line in bash if line}
    assert "netdyn" in commands and scripts["netdyn"] == "netdyn.cli:main"


_NUMBER = re.compile(r"(?<![\w.,])(\d+(?:,\d{3})*\.\d+|\d+(?:,\d{3})*(?= ?(?:%|MB)))(?![\w.]?\d)")
_BENCHMARK_LINK = re.compile(r"\]\((benchmarks/[\w.-]+\.md)\)")


def _paragraphs(text: str) -> list[str]:
    """The README's blocks of text between blank lines, code blocks left out."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    return [p for p in re.split(r"\n\s*\n", prose) if p.strip()]


def test_readme_figures_are_the_benchmarks():
    # A paragraph that links a benchmark report quotes its figures (decimals, percentages,
    # megabytes) from it; a table takes the reports of the paragraph before it. Each
    # figure must appear in the report as written, so that a rerun benchmark whose numbers
    # moved makes this test fail until the README says the same.
    checked, previous = 0, []
    for paragraph in _paragraphs(README):
        links = _BENCHMARK_LINK.findall(paragraph)
        is_table = paragraph.lstrip().startswith("|")
        reports = links or (previous if is_table else [])
        if not is_table:
            previous = links
        if not reports:
            continue
        text = "\n".join((ROOT / r).read_text() for r in reports)
        for figure in _NUMBER.findall(paragraph):
            checked += 1
            pattern = rf"(?<![\d.]){re.escape(figure)}(?![\d])"
            assert re.search(pattern, text), (figure, reports, paragraph[:200])
    assert checked >= 10  # the README does quote its benchmarks
