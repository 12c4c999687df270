"""Links in the README and the documentation pages resolve in the repository, without a
site build; the site's hook turns a link to a tutorial's script into one to its page."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md")
                                     if "_hooks" not in p.parts)]
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _hook():
    spec = importlib.util.spec_from_file_location(
        "tutorials_hook_links", ROOT / "docs" / "_hooks" / "tutorials.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _without_code(text: str) -> str:
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve_in_the_repository(page):
    name = page.relative_to(ROOT).as_posix()
    broken = []
    for target in _LINK.findall(_without_code(page.read_text())):
        path = target.partition("#")[0]
        if not path or re.match(r"^[a-z]+:", path):
            continue
        if not (page.parent / path).exists():
            broken.append(target)
    assert not broken, (
        f"{name} links to files that are not in the repository: {broken} (link a "
        "tutorial's script, ../tutorials/NAME.py: the site turns it into its page)")


def test_hook_points_repository_links_to_published_pages():
    hook = _hook()
    pages = {"index.md", "api/remat.md", "tutorials/sweeps_and_scale.md",
             "benchmarks/unroll.md"}
    index = ("[Sweeps](../tutorials/sweeps_and_scale.py#batches) and "
             "[a script](../tutorials/run_all.py), [remat](api/remat.md), "
             "![figure](../tutorials/sweeps_and_scale.py), [web](https://example.org/a.py)")
    assert hook.repository_links(index, "index.md", pages) == (
        "[Sweeps](tutorials/sweeps_and_scale.md#batches) and "
        "[a script](../tutorials/run_all.py), [remat](api/remat.md), "
        "![figure](../tutorials/sweeps_and_scale.py), [web](https://example.org/a.py)")
    remat = ("[`benchmarks/unroll.md`](../../benchmarks/unroll.md), "
             "[S](../../tutorials/sweeps_and_scale.py)")
    assert hook.repository_links(remat, "api/remat.md", pages) == (
        "[`benchmarks/unroll.md`](../benchmarks/unroll.md), "
        "[S](../tutorials/sweeps_and_scale.md)")
