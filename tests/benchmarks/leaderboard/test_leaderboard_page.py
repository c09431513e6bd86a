"""The leaderboard page as a reader gets it: opened in headless Chromium (Debian's
``chromium`` through Playwright), copied alone into an empty folder, on the real scores of the
quality benchmark's run (tests/benchmarks/fixtures/leaderboard).

Set ``SAVE_SCREENSHOT=1`` to also write the page's screenshot to
``benchmarks/results/leaderboard_screenshot.png`` for review.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import benchmarks
from adapter_zoo.cli import main
from benchmarks import BenchmarkError

# one xdist process runs this module (--dist loadgroup): one browser for the module
pytestmark = pytest.mark.xdist_group("browser")

FIXTURE = Path(__file__).parents[1] / "fixtures" / "leaderboard" / "results.jsonl"
CHROMIUM = "/usr/bin/chromium"
SCREENSHOT = Path(__file__).parents[3] / "benchmarks" / "results" / "leaderboard_screenshot.png"
PAYLOAD = "<svg onload=alert(1)>"


@pytest.fixture(scope="module")
def browser():
    """Headless Debian chromium; under CI a missing browser or Playwright fails the test."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install -e '.[test]')")
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"{CHROMIUM} is missing (.ci/install installs Debian's chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


def _missing(why: str):
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


def _open(browser, page_file: Path):
    """The page, with every console error, page error and dialog it raised."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on(
        "dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss())
    )
    page.on("requestfailed", lambda request: problems.append(f"requestfailed: {request.url}"))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")
    return page, problems


def _column(page, title: str) -> list[str]:
    """The visible texts of the column titled ``title``, top to bottom (marks left out)."""
    return page.evaluate(
        """title => {
          const table = document.getElementById("leaderboard");
          const i = [...table.tHead.rows[0].cells].findIndex(c => c.textContent === title);
          return [...table.tBodies[0].rows].filter(r => !r.hidden)
            .map(r => r.cells[i].firstChild.textContent);
        }""",
        title,
    )


def test_the_page_sorts_filters_and_shows_its_figures_copied_alone(browser, tmp_path):
    board = tmp_path / "board"
    benchmarks.write_leaderboard(FIXTURE, board)
    alone = tmp_path / "elsewhere" / "leaderboard.html"  # no figure files beside it
    alone.parent.mkdir()
    shutil.copy(board / "leaderboard.html", alone)
    page, problems = _open(browser, alone)
    page.screenshot(path=tmp_path / "leaderboard.png", full_page=True)  # as a reader opens it
    if os.environ.get("SAVE_SCREENSHOT"):
        page.screenshot(path=SCREENSHOT, full_page=True)

    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.locator("#leaderboard caption").count() == 1
    heads = page.locator("#leaderboard thead th[scope=col]")
    assert heads.count() == 9  # model, 2 forums × (p@1, map), wikiqa map, Σ map, Σ p@1, kind
    assert page.locator("#leaderboard tbody th[scope=row]").count() == 23  # 20 models + 3 published

    # best first by default: of the models scored on all three sets, the best mean main metric
    models = _column(page, "model")
    assert models[:2] == ["beer-bi-hard", "beer-bi-full"] and models[11] == "bm25"
    assert models[12] == "beer-bi+bm25"  # then the models scored on one set only
    # one row per model: a zoo model scored on its own forum is marked in the cell
    assert len(models) == len(set(models)) and not any("in-domain" in m for m in models)
    beer = page.locator("#leaderboard tbody tr", has_text="multitask-bi").locator("td").nth(0)
    assert beer.get_attribute("data-setting") == "in-domain" and "†" in beer.inner_text()
    reference = page.locator("#leaderboard tbody tr.reference")
    assert reference.count() == 1 and reference.locator("th").inner_text() == "sbert:minilm-l6"
    sigma = _column(page, "Σ map")
    assert all("/" not in s for s in sigma[:12])  # every set scored: no "(1/2)"

    # clicking a header sorts by it: numbers best first, a second click reverses
    title = "wikiqa (test, map)"
    page.get_by_role("button", name=title, exact=True).click()
    head = page.locator("#leaderboard thead th", has_text=title)
    assert head.get_attribute("aria-sort") == "descending"
    scores = [float(s) for s in _column(page, title) if s != "–"]
    assert scores == sorted(scores, reverse=True) and scores[0] == 92.0  # TANDA's published
    assert _column(page, "model")[3] == "beer-cross"  # after 3 published: the best here, 72.8
    page.get_by_role("button", name=title, exact=True).click()
    assert head.get_attribute("aria-sort") == "ascending"
    assert [float(s) for s in _column(page, title) if s != "–"] == sorted(scores)
    assert _column(page, title)[-1] == "–"  # unscored cells stay last
    page.get_by_role("button", name="model", exact=True).click()
    names = _column(page, "model")  # A-Z in the reader's locale (punctuation aside)
    assert [n[0].lower() for n in names] == sorted(n[0].lower() for n in names)
    assert names[0] == "beer-bi" and names.index("beer-bi-drop2") < names.index("beer-bi-drop3")
    page.get_by_role("button", name="model", exact=True).click()
    assert _column(page, "model") == names[::-1]

    # the best of each column is bold, classed and titled
    best = page.locator("td.best", has_text="72.8")
    assert best.count() == 1 and best.get_attribute("title") == "best in this column"
    assert best.evaluate("e => getComputedStyle(e).fontWeight") == "700"
    assert best.evaluate("e => getComputedStyle(e).textAlign") == "right"
    assert best.evaluate("e => getComputedStyle(e).fontVariantNumeric") == "tabular-nums"

    # filters: role and setting
    page.select_option("#role", "baseline")
    assert _column(page, "model") == ["bm25"]
    page.select_option("#role", "")
    page.select_option("#setting", "in-domain")
    shown = _column(page, "model")
    assert "multitask-bi" in shown and "bm25" not in shown and "sbert:minilm-l6" not in shown
    page.select_option("#setting", "")

    # every figure is inside the page and drawn
    images = page.evaluate("[...document.images].map(i => [i.src.slice(0, 22), i.naturalWidth])")
    assert [src for src, _ in images] == ["data:image/png;base64,"] * 2  # models, zero-shot
    assert all(width > 400 for _, width in images)
    svg = page.locator("figure svg")
    assert svg.count() == 1 and svg.bounding_box()["width"] > 300  # the transfer matrix
    assert "+0.033†" in svg.text_content()  # multitask-bi on bicycles.meta, in-domain
    assert problems == []


def test_transfer_matrix_holds_the_deltas_to_the_zero_shot_bi_encoder(tmp_path):
    from benchmarks.leaderboard import transfer_matrix

    records = benchmarks.read_results(FIXTURE)
    matrix = transfer_matrix(records)
    assert matrix.columns == ["beer.stackexchange.com-las (test)",
                              "bicycles.meta.stackexchange.com-las (test)", "wikiqa (test)"]  # fmt: skip
    row = matrix.rows.index("multitask-bi")
    # quality.json: multitask-bi 0.791608 vs sbert:minilm-l6 0.758852 on bicycles.meta
    assert matrix.deltas[row] == [0.0027, 0.0328, -0.0012]  # as quality.json says
    assert matrix.settings[row] == ["in-domain", "in-domain", "zero-shot"]
    assert not {"bm25", "sbert:minilm-l6"} & set(matrix.rows)  # baselines are no rows
    written = {p.name for p in benchmarks.write_leaderboard(FIXTURE, tmp_path)}
    assert {"transfer.png", "transfer.svg"} <= written
    assert (tmp_path / "transfer.png").read_bytes()[:4] == b"\x89PNG"
    markdown = (tmp_path / "leaderboard.md").read_text()
    assert "| multitask-bi | +0.003† | +0.033† | -0.001 |" in markdown

    alone = [r for r in records if r["model"] != "sbert:minilm-l6"]
    assert transfer_matrix(alone) == (
        "No transfer matrix: the results hold no sbert:minilm-l6 (zero-shot bi-encoder) record "
        "to compare the zoo models with."
    )
    one_set = [r for r in records if r["benchmark"] == "wikiqa"]
    assert transfer_matrix(one_set).startswith("No transfer matrix: no zoo model was scored on two")
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in one_set))
    written = {p.name for p in benchmarks.write_leaderboard(tmp_path / "one", tmp_path / "b1")}
    assert "transfer.png" not in written
    assert "No transfer matrix: no zoo model" in (tmp_path / "b1" / "leaderboard.md").read_text()
    assert "No transfer matrix: no zoo model" in (tmp_path / "b1" / "leaderboard.html").read_text()


def test_transfer_figure_grows_with_the_matrix_and_its_names():
    from benchmarks.leaderboard.transfer import Transfer, transfer_figure

    def size(rows: int, columns: int, name: str):
        matrix = Transfer([f"{name}-{i}" for i in range(rows)], [f"set-{j}" for j in range(columns)],
                          [[0.01 * (i - j) for j in range(columns)] for i in range(rows)],
                          [["zero-shot"] * columns for _ in range(rows)])  # fmt: skip
        return tuple(transfer_figure(matrix).get_size_inches())

    small, tall, wide = size(2, 2, "a"), size(30, 2, "a"), size(2, 12, "a" * 60)
    assert tall[1] > small[1] and wide[0] > small[0]


def test_names_are_escaped_in_the_markdown_and_the_page(browser, tmp_path):
    """A model or set named ``<svg onload=alert(1)>`` stays text in both outputs."""
    lines = FIXTURE.read_text().splitlines()[:3]
    records = [json.loads(line) for line in lines]
    records[0]["model"] = PAYLOAD
    records[1]["benchmark_name"] = PAYLOAD + "|`x`"
    results = tmp_path / "results.jsonl"  # a board inside a results folder is refused
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    benchmarks.write_leaderboard(results, tmp_path / "board")
    markdown = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "<svg" not in markdown and "&lt;svg onload=alert(1)&gt;" in markdown
    assert "&lt;svg onload=alert(1)&gt;\\|\\`x\\` (test, p@1)" in markdown
    table = [line for line in markdown.splitlines() if line.startswith("|")]
    cells = {len(re.findall(r"(?<!\\)\|", line)) for line in table}
    assert len(table) == 2 + 2 + 3 and cells == {len(table[0].split(" | ")) + 1}  # none split
    page_html = (tmp_path / "board" / "leaderboard.html").read_text()
    assert PAYLOAD not in page_html
    page, problems = _open(browser, tmp_path / "board" / "leaderboard.html")
    assert PAYLOAD in _column(page, "model")
    assert page.locator("#leaderboard svg").count() == 0 and problems == []


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("[]", "expected a JSON object (a record), got a list []"),
        ("null", "expected a JSON object (a record), got null"),
        ('"bm25"', 'expected a JSON object (a record), got a string "bm25"'),
        ("{}", "benchmark: missing"),
        ('{"benchmark": "wikiqa", "split": "test", "model": "bm25", "mode": "zero-shot"}',
         "metrics: missing"),
        ('{"benchmark": 5, "split": "test", "model": "m", "mode": "zero-shot", "metrics": {}}',
         "benchmark: expected a string, got int 5"),
        ('{"benchmark": "wikiqa", "split": "test", "model": "m", "mode": "zero-shot", '
         '"metrics": [0.5]}', "metrics: expected an object, got a list [0.5]"),
        ('{"benchmark": "wikiqa", "split": "test", "model": "m", "mode": "zero-shot", '
         '"metrics": {"map": NaN}}', "metrics.map: expected a finite number, got nan"),
        ('{"benchmark": "wikiqa", "split": "test", "model": "m", "mode": "zero-shot", '
         '"metrics": {"map": 0.5, "p@1": Infinity}}', "metrics.p@1: expected a finite number, got inf"),
        ('{"benchmark": "wikiqa", "split": "test", "model": "m", "mode": "zero-shot", '
         '"metrics": {"map": "0.5"}}', 'metrics.map: expected a number, got a string "0.5"'),
        ('{"benchmark": "wikiqa", "split": "test", "model": "m", "mode": "zero-shot", '
         '"metrics": {"map": 0.5}, "adapters": "beer"}', 'adapters: expected a list, got a string "beer"'),
        ('{"benchmark": "wikiqa", "split": "test", "model": "m", "mode": "zero-shot", '
         '"metrics": {"p@1": 0.5}}', "main_metric: 'map' is not among the metrics"),
        ('{"benchmark": "nope", "split": "test", "model": "m", "mode": "zero-shot", '
         '"metrics": {"map": 0.5}}', "main_metric: missing, and benchmark 'nope' is not in the registry"),
        ('{"benchmark": "wikiqa", "split": "test", "model": "m", "mode": "zero-shot", '
         '"metrics": {"map": 0.5}, "fusion_weights": {"0": {"beer": null}}}',
         "fusion_weights.0.beer: expected a number, got null"),
    ],
)  # fmt: skip
def test_a_bad_results_record_is_refused_by_file_line_and_field(tmp_path, capsys, line, field):
    """NaN, infinity, a non-object, a missing or mistyped field: one line naming the file, the
    record's line and the field, exit 2, and nothing written."""
    good = FIXTURE.read_text().splitlines()[0]
    results = tmp_path / "results.jsonl"
    results.write_text(f"{good}\n\n{line}\n")  # the bad record is line 3
    with pytest.raises(BenchmarkError) as error:
        benchmarks.read_results(results)
    assert str(error.value) == f"{results}:3: {field}"
    assert main(["leaderboard", str(results), "--out", str(tmp_path / "board")]) == 2
    assert capsys.readouterr().err == f"adapter-zoo leaderboard: error: {results}:3: {field}\n"
    assert not (tmp_path / "board" / "leaderboard.md").exists()


def test_the_page_has_no_relative_resources(tmp_path):
    """Nothing the page loads lies outside it: no src/href but data: URIs and the inline
    SVG's references to itself, no CDN."""
    benchmarks.write_leaderboard(FIXTURE, tmp_path)
    text = (tmp_path / "leaderboard.html").read_text()
    links = re.findall(r'(?:src|href)="([^"]*)"', text)  # href: the SVG's own references
    assert links and all(link.startswith(("data:", "#")) for link in links)
    assert "http://" not in text.replace("http://www.w3.org/", "") and "https://" not in text


def test_the_figures_carry_legends_and_the_zero_shot_bi_encoder_as_reference():
    """Figure 2 draws the zero-shot bi-encoder's score as the reference line beside BM25, and
    the bars figure names every colour it uses, BM25's red included."""
    from benchmarks.leaderboard.plots import models_figure, zero_shot_figure

    records = benchmarks.read_results(FIXTURE)
    figure = zero_shot_figure(records)
    [legend] = figure.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert "zero-shot bi-encoder (sbert:minilm-l6)" in labels and "BM25" in labels
    wikiqa = next(axis for axis in figure.axes if axis.get_title() == "wikiqa")
    lines = {line.get_label(): line.get_ydata()[0] for line in wikiqa.get_lines()}
    assert lines["zero-shot bi-encoder (sbert:minilm-l6)"] == 0.71491  # its WikiQA MAP
    figure = models_figure(records)
    [legend] = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == ["zoo model", "zero-shot encoder", "BM25"]
    width, height = figure.get_size_inches() * 110  # the dpi the page's PNG is drawn at
    assert width > 1500 and height > 500  # not 440×160
