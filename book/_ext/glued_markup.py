"""Render the inline markup in glued sentences: `code`, *emphasis*, **strong**.

Chapters glue verdicts computed from their run as strings, for example
"CUDA graphs did *not* beat plain fusion: `reduce-overhead` took 2.1 times as long per call as
`default`". myst-nb's ``{glue:text}`` role pastes a glued value as literal text, so the reader
would see the backticks and asterisks. This extension turns those three kinds of inline markup in
pasted text (myst-nb's ``pasted-text`` nodes) into the nodes the rest of the page uses for them.
Anything else in the text stays literal.
"""

from __future__ import annotations

import re

from docutils import nodes

# `code`, **strong** or *emphasis* (an asterisk followed by a space is not markup: "2 * 3").
_MARKUP = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*")


def markup_nodes(text: str) -> list[nodes.Node]:
    """The nodes for ``text``: literal, strong and emphasis nodes where it has inline markup."""
    result: list[nodes.Node] = []
    position = 0
    for match in _MARKUP.finditer(text):
        if match.start() > position:
            result.append(nodes.Text(text[position:match.start()]))
        code, strong, emphasis = match.groups()
        if code is not None:
            result.append(nodes.literal(code, code))
        elif strong is not None:
            result.append(nodes.strong(strong, strong))
        else:
            result.append(nodes.emphasis(emphasis, emphasis))
        position = match.end()
    if position < len(text):
        result.append(nodes.Text(text[position:]))
    return result


def _render_glued_markup(app, doctree, docname) -> None:
    for node in list(doctree.findall(nodes.inline)):
        if "pasted-text" not in node.get("classes", []):
            continue
        text = node.astext()
        if _MARKUP.search(text) is None:
            continue
        node.children = []
        node.extend(markup_nodes(text))


def setup(app):
    app.connect("doctree-resolved", _render_glued_markup)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
