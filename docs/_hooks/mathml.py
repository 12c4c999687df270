"""MkDocs hook: typeset the math at build time, as MathML, so that the site needs no
JavaScript and no network to show formulas.

``pymdownx.arithmatex`` (generic mode) finds the math in pages and docstrings (``$...$``,
``$$...$$``, ``\\(...\\)``, ``\\[...\\]``) and leaves it, escaped, in
``<span class="arithmatex">\\(...\\)</span>`` (inline) and
``<div class="arithmatex">\\[...\\]</div>`` (display). This hook replaces the TeX inside
with MathML from ``latex2mathml`` (pure Python), which every current browser renders
natively (MathML Core). The TeX source is kept as the formula's annotation.

A formula that ``latex2mathml`` cannot convert, or in which it leaves a command it does
not know as text (``<mi>\\foo</mi>``), is a warning, so that ``mkdocs build --strict``
fails and names the page and the formula; it then stays on the page as TeX code.
"""

import html
import logging
import re

from latex2mathml.converter import convert

# A logger under "mkdocs." so that its warnings count in strict mode.
log = logging.getLogger("mkdocs.hooks.mathml")

_ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', flags=re.DOTALL
)
_DELIMITERS = {"span": (r"\(", r"\)"), "div": (r"\[", r"\]")}
# latex2mathml has align*, split, ... but not amsmath's `aligned`; `split` lays out the
# same rows (right-aligned left sides, `&=` columns, no equation numbers).
_ALIGNED = re.compile(r"\\(begin|end)\{aligned\}")
# Standard LaTeX operators that latex2mathml does not know, written as operator names.
_OPERATORS = re.compile(r"\\(arg)(?![A-Za-z])")
_UNKNOWN = re.compile(r">\\[A-Za-z]+<")  # an element whose text is a TeX command


def tex_to_mathml(tex: str, display: bool) -> str:
    """MathML for the TeX ``tex`` (no delimiters), with ``tex`` as its annotation."""
    source = _OPERATORS.sub(r"\\operatorname{\1}", _ALIGNED.sub(r"\\\1{split}", tex))
    mathml = convert(source, display="block" if display else "inline")
    unknown = _UNKNOWN.search(mathml)
    if unknown:
        raise ValueError(f"unknown command {unknown.group(0)[1:-1]}")
    # `<math ...>...</math>` -> `<math ...><semantics><mrow>...</mrow><annotation ...>tex
    # </annotation></semantics></math>`: browsers show the first child of `semantics`
    # (hence one `mrow`); the annotation keeps the source for copying and for tools.
    head, _, rest = mathml.partition(">")
    body = rest.removesuffix("</math>")
    note = f'<annotation encoding="application/x-tex">{html.escape(tex)}</annotation>'
    return f"{head}><semantics><mrow>{body}</mrow>{note}</semantics></math>"


def render_math(text: str, where: str = "page") -> str:
    """``text`` (HTML) with every arithmatex span/div's TeX replaced by MathML."""

    def replace(match: re.Match) -> str:
        tag = match.group("tag")
        tex = html.unescape(match.group("tex")).strip()
        left, right = _DELIMITERS[tag]
        if tex.startswith(left) and tex.endswith(right):
            tex = tex[len(left):-len(right)]
        try:
            mathml = tex_to_mathml(tex.strip(), display=tag == "div")
        except Exception as error:  # latex2mathml raises several types; name the formula
            log.warning("%s: cannot convert the formula %r to MathML (%s: %s)", where, tex,
                        type(error).__name__, error)
            return f'<{tag} class="arithmatex"><code>{html.escape(tex)}</code></{tag}>'
        return f'<{tag} class="arithmatex">{mathml}</{tag}>'

    return _ARITHMATEX.sub(replace, text)


def on_page_content(html_text, page, config, files):
    return render_math(html_text, page.file.src_uri)
