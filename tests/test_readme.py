"""The README is what a new user runs first: its commands and its example must work."""

import re
import shlex
from pathlib import Path

import numpy as np

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


def test_readme_main_command_is_the_console_script():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    bash = [line.strip() for block in _blocks("bash") for line in block.splitlines()]
    commands = {shlex.split(line)[0] for line in bash if line}
    assert "netdyn" in commands and scripts["netdyn"] == "netdyn._cli:main"


def test_readme_example_runs_and_matches_the_empirical_fc(capsys):
    (example,) = _blocks("python")
    exec(compile(example, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    match = re.search(r"FC r = (-?[0-9.]+)", printed)
    assert match, printed
    r = float(match.group(1))
    # The reference model on the HCP connectome reproduces a good part of the empirical
    # FC structure (homotopic and intra-hemispheric correlations): far above chance.
    assert np.isfinite(r) and 0.4 < r < 0.9
    # The README states the float32 value and, in brackets, the float64 one (the tests run
    # in float64; the noise draws differ between precisions).
    stated = re.search(r"\(float64: (0\.[0-9]+)\)", example)
    assert stated and abs(r - float(stated.group(1))) < 0.01
