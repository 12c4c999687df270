"""The API pages read in the repository: each ``docs/api/*.md`` lists the names it
documents with the first sentence of their docstrings, up to date
(``python scripts/api_names.py`` rewrites the lists)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs" / "api").glob("*.md"))


def _api_names():
    spec = importlib.util.spec_from_file_location("api_names", ROOT / "scripts" / "api_names.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_names = _api_names()


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_api_page_lists_its_names(page):
    text = page.read_text()
    assert api_names.documented(text), f"{page.name} documents nothing"
    assert api_names.updated(text) == text, (
        f"docs/api/{page.name}: its list of names is out of date with its '::: netdyn.NAME' "
        "entries or their docstrings; run `python scripts/api_names.py`.")


def test_summary_is_the_docstrings_first_sentence():
    summary = api_names.summary
    assert summary("netdyn.ReducedWongWang") == (
        "Reduced Wong-Wang model of an excitatory population (Deco et al. 2013).")
    # Running into an equation: cut at the colon, RST code as Markdown code.
    assert summary("netdyn.Kuramoto") == "Kuramoto phase oscillator (TVB's `Kuramoto`)."
    # "e.g." and "et al." do not end a sentence; the next sentence is left out.
    assert summary("netdyn.fc_correlation") == (
        'Pearson correlation between the upper triangles ($k = 1$) of two FC matrices, the '
        'usual "FC fit" (e.g. Deco et al. 2013).')
    # A sentence that runs on past the paragraph into an equation: cut at its colon.
    assert summary("netdyn.block_lyapunov") == (
        "The stationary covariance of a block lower-triangular linear system.")
    # autorefs links become plain code (they would show as brackets in the repository).
    assert summary("netdyn.datasets.available") == (
        "Names of the datasets embedded in netdyn, for `netdyn.datasets.load`.")
    assert summary("netdyn.datasets").startswith("Connectome data")


def test_a_new_entry_gets_a_line():
    page = "# Title\n\nIntro.\n\n::: netdyn.Heun\n\n## More\n\n::: netdyn.RK4\n"
    text = api_names.updated(page)
    assert text.index("Intro.") < text.index("[`nd.Heun`](#netdyn.Heun)") < text.index(
        "**More**") < text.index("[`nd.RK4`](#netdyn.RK4)") < text.index("::: netdyn.Heun")
    assert api_names.updated(text) == text
    added = api_names.updated(text + "\n::: netdyn.Euler\n")
    assert "- [`nd.Euler`](#netdyn.Euler): " in added
