"""Post bodies (HTML) to plain text, questions as query texts, and both ``Tags`` forms to a list."""

from __future__ import annotations

import re

from lxml import etree

# Elements that end a line in the rendered post: paragraphs, list items, headings, code blocks.
LINE_ENDING_TAGS = frozenset((
    "p", "li", "br", "div", "pre", "blockquote", "tr", "hr", "ul", "ol", "table",
    "h1", "h2", "h3", "h4", "h5", "h6",
))  # fmt: skip
# lxml.etree's own HTML parser, not lxml.html: lxml.html looks up a Python element class for
# every element it creates, which made conversion 1.5x slower.
# collect_ids=False: nothing looks elements up by id, so libxml2 need not index them.
_HTML = etree.HTMLParser(remove_comments=True, remove_pis=True, no_network=True, collect_ids=False)
# A line break, blanks, then at least one more line break and everything blank after it:
# the same matches as r"\n[ \t\r\f\v]*(?:\n[ \t\r\f\v]*)+", without the nested group.
BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n[ \t\r\f\v\n]*")
_ANGLE_TAGS = re.compile(r"<([^<>]+)>")


def html_to_text(body: str | None) -> str:
    """Render a post's HTML body as plain text.

    Paragraphs and list items become line breaks, code is kept as text (indentation
    included), entities are decoded and blank lines collapsed. lxml's HTML parser does the
    work in C; only the line-ending elements are touched from Python.

    Example:
        >>> html_to_text("<p>Stout &amp; porter</p><ul><li>one</li><li>two</li></ul>")
        'Stout & porter\\none\\ntwo'
    """
    if not body:
        return ""
    if "<" not in body and "&" not in body:
        return body.strip()
    try:
        root = etree.fromstring(body, _HTML)
    except etree.XMLSyntaxError:  # libxml2 gave up on this fragment entirely
        return ""
    if root is None:  # nothing parseable (e.g. only a comment)
        return ""
    return _rendered(root)


def html_document(html: str) -> tuple[str | None, str]:
    """A whole HTML page as ``(title, text)``: its ``<title>`` (else its first ``<h1>``) and
    its body rendered as :func:`html_to_text` renders a post, one block element a line;
    ``<head>``, ``<script>`` and ``<style>`` carry no text of the page.

    Example:
        >>> html_document("<title>Stouts</title><h1>Dry</h1><p>Roasted barley.</p><p>Black.</p>")
        ('Stouts', 'Dry\\nRoasted barley.\\nBlack.')
    """
    try:
        root = etree.fromstring(html, _HTML) if html.strip() else None
    except etree.XMLSyntaxError:
        root = None
    if root is None:
        return None, ""
    title = root.findtext(".//title") or root.findtext(".//h1")
    for element in list(root.iter("head", "script", "style")):
        _drop(element)
    return (" ".join(title.split()) or None) if title else None, _rendered(root)


def _drop(element) -> None:
    """Remove ``element`` and its text, keeping the text that follows it (its tail)."""
    parent, tail = element.getparent(), element.tail or ""
    if parent is None:
        return
    previous = element.getprevious()
    if previous is not None:
        previous.tail = (previous.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail
    parent.remove(element)


def _rendered(root) -> str:
    # every element, filtered here: root.iter(*tags) sets up a tag matcher per call, which
    # cost more than the test below over a post's few elements (comments and PIs are gone)
    for element in root.iter():
        if element.tag in LINE_ENDING_TAGS:
            element.tail = "\n" + element.tail if element.tail else "\n"
    text = etree.tostring(root, method="text", encoding="unicode")
    return BLANK_LINES.sub("\n", text).strip()


def question_text(title: str | None, body: str | None) -> str:
    """A question as one query text: its title, a space, its body (as LAS and MultiCQA do).

    The benchmark builder and the ``question_answer`` training pairs both use this, so a
    model trains on queries of the exact form it is evaluated on.

    Example:
        >>> question_text("Stout or porter?", "Which came first?")
        'Stout or porter? Which came first?'
    """
    return f"{title or ''} {body or ''}".strip()


def parse_tags(tags: str | None) -> list[str]:
    """Split a ``Tags`` attribute in either dump form: ``<a><b>`` (to 2023) or ``|a|b|`` (2024 on).

    Example:
        >>> parse_tags("<ale><brewing>"), parse_tags("|ale|brewing|"), parse_tags(None)
        (['ale', 'brewing'], ['ale', 'brewing'], [])
    """
    if not tags:
        return []
    if tags.startswith("<"):
        return _ANGLE_TAGS.findall(tags)
    return [tag for tag in tags.split("|") if tag]
