"""The report's renderer: a hand-made description on a hand-made record gives exactly its
Markdown, and the pages' markers name known tables only."""

from __future__ import annotations

import json

import pytest

from benchmarks.report import pages, paths
from benchmarks.report.render import Column, Rows, Table, render

RECORD = {
    "queries": 1234,
    "sets": {
        "beer": {"map": {"base": 0.51234, "adapt": 0.5349}, "chosen": "beer-bi",
                 "vs": {"delta": 0.0226, "interval": [0.004, 0.051]}},
        "music-meta": {"map": {"base": 0.4, "adapt": 0.38}, "chosen": "base",
                       "vs": {"delta": -0.02, "interval": [-0.05, 0.01]}},
    },
    "models": ["base", "adapt"],
}  # fmt: skip

TABLE = Table(
    marker="tiny",
    source="tiny",
    rows=(
        Rows("sets.<set>"),
        Rows(cells=("**all**", "{queries:,}", "", "", lambda r: len(r["sets"]), "")),
    ),
    columns=(
        Column("set", "{set.key:forum}"),
        Column("{queries:,} queries", "`{set[chosen]}`"),
        Column("$ MAP", "{set[map][$]:.3f}", align="--:", over="models"),
        Column("adapt − base [95%]", "{set[vs]:interval}", align="--:"),
        Column("clear gain", lambda r: "yes" if r["set"]["vs"]["interval"][0] > 0 else "no"),
    ),
)


@pytest.fixture
def results(tmp_path, monkeypatch):
    """A results folder holding only ``tiny.json``."""
    (tmp_path / "tiny.json").write_text(json.dumps(RECORD), encoding="utf-8")
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    return tmp_path


def test_a_description_renders_its_record_exactly(results):
    assert render(TABLE) == "\n".join([
        "| set | 1,234 queries | base MAP | adapt MAP | adapt − base [95%] | clear gain |",
        "|---|---|--:|--:|--:|---|",
        "| beer | `beer-bi` | 0.512 | 0.535 | +0.023 [+0.004, +0.051] | yes |",
        "| music.meta | `base` | 0.400 | 0.380 | −0.020 [−0.050, +0.010] | no |",
        "| **all** | 1,234 |  |  | 2 |  |",
    ])  # fmt: skip


def test_a_rows_walk_sorts_by_a_field_filters_and_nests():
    record = {"runs": {"b": {"points": [{"min": 5, "map": 0.2}, {"min": 1, "map": 0.1}]},
                       "a": {"points": [{"min": 2, "map": 0.3}]}}}  # fmt: skip
    table = Table(
        marker="walk",
        source=lambda: record,
        columns=(Column("run"), Column("minutes"), Column("MAP")),
        rows=(
            Rows("runs.<run>", cells=("**{run.key}**", "", ""), then=(
                Rows("points.<point:min>", cells=("", "{point[min]}", "{point[map]:map}"),
                     where=lambda r: r["point"]["map"] > 0.15),
            )),
        ),
    )  # fmt: skip
    assert render(table).splitlines()[2:] == [
        "| **b** |  |  |",
        "|  | 5 | 0.200 |",
        "| **a** |  |  |",
        "|  | 2 | 0.300 |",
    ]


def test_a_missing_field_is_an_error_naming_it(results):
    table = Table(marker="tiny", source="tiny", rows="sets.<set>",
                  columns=(Column("x", "{set[recall]}"),))  # fmt: skip
    with pytest.raises(KeyError, match="recall"):
        render(table)


def test_an_unknown_marker_is_an_error_naming_the_page_and_the_marker():
    text = "# A page\n<!-- table: no-such-table -->\n| old |\n<!-- /table: no-such-table -->\n"
    with pytest.raises(KeyError) as error:
        pages.fill(text, "docs/a-page.md")
    message = error.value.args[0]
    assert message.startswith("docs/a-page.md: unknown table 'no-such-table'; known: perf, ")


def test_a_stale_page_is_found_and_rewritten(tmp_path):
    """``--check``'s and the rewrite's way: a page whose table differs from the record."""
    (tmp_path / "docs").mkdir()
    page = tmp_path / "README.md"
    page.write_text("Intro\n<!-- table: learning-rates -->\n| stale |\n"
                    "<!-- /table: learning-rates -->\nEnd\n", encoding="utf-8")  # fmt: skip
    assert pages.stale_pages(tmp_path) == [page]
    assert pages.write_pages(tmp_path) == [page]
    text = page.read_text(encoding="utf-8")
    assert "| stale |" not in text and text.startswith("Intro\n<!-- table: learning-rates -->\n")
    assert text.splitlines()[2].startswith("| encoder | ")
    assert pages.stale_pages(tmp_path) == [] and pages.write_pages(tmp_path) == []
