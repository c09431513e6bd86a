"""Griffe extension: the project's docstrings title their doctests ``Example:``.

Griffe's Google-style parser knows the section as ``Examples:`` and reads the singular as an
admonition, whose ``>>>`` lines would render as Markdown text (and ``x[0]`` as a link). The
docstrings keep the project's spelling (``tests/test_doctests.py`` runs them as they are);
this renames the heading in the text griffe parses, so the API reference shows each example
as a Python console block. Sphinx roles (``:class:`Ranker```, ``:func:`~m.f```) in the
docstrings become code spans, which Markdown shows as the name.
"""

from __future__ import annotations

import re

import griffe

_HEADING = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)
_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`~?([^`]+)`")


class ExampleSections(griffe.Extension):
    """Read every ``Example:`` heading of a docstring as griffe's ``Examples:`` section."""

    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            text = _HEADING.sub(r"\1Examples:", obj.docstring.value)
            obj.docstring.value = _ROLE.sub(r"`\1`", text)
