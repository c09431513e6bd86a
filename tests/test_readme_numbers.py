"""The README's and the docs' numbers are the recorded ones.

Every results or performance table in README.md and docs/ sits between ``<!-- table: NAME -->``
markers and is generated from the JSON in ``benchmarks/results/`` (or the benchmark
registry's recorded scores) by the report (``benchmarks/report/``: a description per table,
one renderer); ``python -m benchmarks.report`` rewrites them. These tests regenerate every table and compare, so a
number edited by hand, or a JSON re-recorded without the pages, fails here.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from benchmarks.report import pages, paths, render
from benchmarks.report.descriptions import TABLES
from benchmarks.report.descriptions.perf import PERF

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The README's tables, and the docs pages that must carry the full ones.
REQUIRED = {
    "README.md": {"readme-shipped", "readme-quality", "readme-adapt", "readme-outside", "readme-curve",
                  "readme-insuranceqa", "readme-perf"},  # fmt: skip
    "docs/performance.md": {"perf", "train-memory", "html-to-text", "sentence-splitters", "int8",
                            "ci-time"},
    "docs/results.md": {
        "quality", "quality-choice", "quality-length", "quality-retrained", "quality-lr",
        "quality-drop-lower", "quality-tanda", "quality-lora", "quality-cross-rerun",
        "transfer-matrix", "transfer-strategies", "adapt-study", "outside-study",
        "outside-agreement", "adapt-curve", "recommend", "cascade", "sentence-objectives",
        "sentence-objectives-long",
    },
    "docs/benchmarks.md": {"semeval", "outside", "insuranceqa", "beir-arguana"},
    "docs/reliability.md": {"crash", "fuzz"},
}  # fmt: skip
# A measured number as the README writes one: 0.924, +0.021, −0.007, 1.42×, 31.7%.
MEASURED = re.compile(r"[+−-]?\d+\.\d{3,}|\d+\.\d+×|\d+(?:\.\d+)?%")


def _pages() -> list[Path]:
    return pages.pages(ROOT)


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_marked_table_is_what_the_recorded_json_gives(page):
    text = page.read_text(encoding="utf-8")
    written = pages.marked_tables(text)
    expected = pages.marked_tables(pages.fill(text, str(page)))
    for name, body in written.items():
        assert body == expected[name], (
            f"{page.relative_to(ROOT)}: table {name!r} differs from the recorded JSON; "
            "run .venv/bin/python -m benchmarks.report\n"
            f"--- page\n{body}--- from the JSON\n{expected[name]}"
        )


@pytest.mark.parametrize("page", sorted(REQUIRED))
def test_the_pages_carry_their_generated_tables(page):
    names = set(pages.marked_tables((ROOT / page).read_text(encoding="utf-8")))
    assert REQUIRED[page] <= names, f"{page}: missing tables {sorted(REQUIRED[page] - names)}"


def test_every_recorded_json_is_shown_on_a_page(monkeypatch, tmp_path):
    """Each perf script's JSON in results/ reaches the pages: through a table that loads it
    (``render.load``) or as rows of the performance table (which reads the whole folder: the
    table changes when the file is taken away)."""
    read = set()
    real_load = render.load
    monkeypatch.setattr(render, "load", lambda name: (read.add(name), real_load(name))[1])
    for table in TABLES.values():
        render.render(table)
    full = render.render(PERF)
    unshown = []
    for path in sorted(paths.RESULTS.glob("*.json")):
        if path.stem in read:
            continue
        others = tmp_path / path.stem
        others.mkdir()
        for other in paths.RESULTS.glob("*.json"):
            if other != path:
                shutil.copy(other, others / other.name)
        monkeypatch.setattr(paths, "RESULTS", others)
        if render.render(PERF) == full:
            unshown.append(path.name)
    assert unshown == []


def test_a_number_changed_by_hand_fails_the_check():
    """The comparison can fail: a README number edited in a table is caught."""
    text = README.read_text(encoding="utf-8")
    body = pages.marked_tables(text)["readme-quality"]
    number = re.search(r"\d\.\d{3}", body)[0]
    changed = text.replace(body, body.replace(number, f"{float(number) + 0.001:.3f}", 1))
    assert changed != text
    assert pages.fill(changed) != changed
    assert pages.fill(text) == text


def test_a_re_recorded_json_fails_the_check(monkeypatch):
    """The other way round: the JSON changes (a new run), the page does not."""
    text = README.read_text(encoding="utf-8")
    quality = render.load("quality")
    quality["table"]["bm25"]["beer"]["map"] += 0.01
    real_load = render.load
    monkeypatch.setattr(
        render, "load", lambda name: quality if name == "quality" else real_load(name)
    )
    assert pages.fill(text) != text


def test_the_readme_prose_quotes_no_number_its_tables_do_not_hold():
    """A measured number in the README's prose (outside tables and code) must appear in one
    of its generated tables: the prose may quote the JSON, never a number of its own."""
    text = README.read_text(encoding="utf-8")
    generated = "\n".join(pages.marked_tables(text).values())
    prose = pages.MARKED.sub("", text)
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)
    strays = [n for n in MEASURED.findall(prose) if n not in generated]
    assert strays == []


def test_the_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    # the two set-up commands, exactly
    assert "bash .ci/install && .venv/bin/adapter-zoo quickstart" in text
    assert "bash .ci/install && .venv/bin/python -m pytest -n auto --durations=25" in text
    for page in ("docs/getting-started.md", "docs/results.md", "docs/performance.md"):
        assert f"]({page}" in text, page


def test_ci_runs_the_readme_test_command_exactly():
    """CI's last step is the README's test command, word for word, as its timed stage ``tests``
    (and so is the docs')."""
    readme = README.read_text(encoding="utf-8")
    command = re.search(r"bash \.ci/install && (\.venv/bin/python -m pytest[^#\n]*?)\s+#", readme)
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert command and ci[-1] == f"stage tests {command.group(1)}"
    started = (README.parent / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert f"bash .ci/install && {command.group(1)}" in started


def test_the_readme_links_into_the_docs_resolve():
    """Every relative link of the README names a file of the checkout and, with ``#``, one of
    its headings (the slug MkDocs and GitHub both give these headings)."""
    from markdown.extensions.toc import slugify

    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(relative) >= 10
    for link in relative:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), link
        if anchor:
            headings = re.findall(r"^#+ (.+)$", target.read_text(encoding="utf-8"), re.M)
            assert anchor in {slugify(h.replace("`", ""), "-") for h in headings}, link
