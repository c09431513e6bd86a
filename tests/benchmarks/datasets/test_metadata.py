"""Each benchmark's metadata is data, first in its module (after the docstring and imports):
name, description, splits, metrics, reference and a BibTeX citation of its paper."""

from __future__ import annotations

import ast
import inspect
import re

import pytest

import benchmarks
from benchmarks.registry import METRICS, DatasetMetadata

ENTRY = re.compile(r"@(\w+)\{([^,\s{}]+),")
FIELD = re.compile(r"(?:^|,)\s*(\w+)\s*=\s*[\"{]")


def bibtex_entries(text: str) -> list[tuple[str, str, set[str]]]:
    """``(type, key, field names)`` of each entry of ``text``; a ValueError where the text is
    not BibTeX-shaped (``@type{key, name = "..." or {...}, ... }``, braces balanced, nothing
    between entries)."""
    entries, rest = [], text.strip()
    while rest:
        head = ENTRY.match(rest)
        if head is None:
            raise ValueError(f"not an entry: {rest[:40]!r}")
        depth, end = 0, None
        for index, char in enumerate(rest):
            if char == "{" and rest[index - 1] != "\\":
                depth += 1
            elif char == "}" and rest[index - 1] != "\\":
                depth -= 1
                if depth == 0:
                    end = index
                    break
        if end is None:
            raise ValueError(f"unbalanced braces in {head.group(2)}")
        body = rest[head.end() : end]
        fields = set(FIELD.findall(body))
        if not fields or body.replace('\\"', "").count('"') % 2:  # \" is an accent
            raise ValueError(f"no fields, or an open quote, in {head.group(2)}")
        entries.append((head.group(1).lower(), head.group(2), fields))
        rest = rest[end + 1 :].strip()
    return entries


def test_the_bibtex_check_refuses_what_is_not_an_entry():
    good = '@article{k1, title = "A {B} c", author = "D, E", year = "2020"}'
    assert bibtex_entries(good) == [("article", "k1", {"title", "author", "year"})]
    for bad in ("Yang et al. WikiQA. EMNLP 2015", "@article{k1, title = {A}", "@article{, x=1}",
                '@misc{k, title = "open}'):  # fmt: skip
        with pytest.raises(ValueError):
            bibtex_entries(bad)


@pytest.mark.parametrize("name", benchmarks.names())
def test_every_registered_benchmark_has_its_metadata_and_a_bibtex_citation(name):
    bench = benchmarks.get(name)
    meta = bench.metadata
    assert isinstance(meta, DatasetMetadata)
    assert meta.name and meta.description and meta.citation
    assert meta.reference.startswith("https://") and bench.homepage == meta.reference
    entries = bibtex_entries(meta.bibtex)
    assert entries and all({"title", "author", "year"} <= fields for _, _, fields in entries)
    assert meta.splits == bench.splits
    assert bench.main_metric in meta.metrics and set(meta.metrics) <= set(METRICS)


@pytest.mark.parametrize(
    "module", sorted({type(benchmarks.get(n)).__module__ for n in benchmarks.names()})
)
def test_the_metadata_comes_first_in_its_module(module):
    tree = ast.parse(inspect.getsource(__import__(module, fromlist=["_"])))
    body = [node for node in tree.body if not isinstance(node, ast.Import | ast.ImportFrom)]
    docstring, first = body[0], body[1]
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    assert isinstance(first, ast.Assign) and ast.unparse(first.targets[0]) == "METADATA"
    assert ast.unparse(first.value.func) == "DatasetMetadata"
