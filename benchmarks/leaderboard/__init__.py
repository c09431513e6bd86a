"""Leaderboard: a Markdown table, one self-contained HTML page and figures from a results folder.

Table (:mod:`.table`): one row per model, best first by the mean of its main metrics; per set
(``split`` in the header) a column of its main metric and, where that is not MAP, one of MAP;
each cell marked with its setting when it is not zero-shot (``†``: in-domain, a zoo model on a
set built from its own forum); then ``Σ <metric>``: the mean of each metric over the sets the
row has (MultiCQA's average column); then ``kind``: ``baseline`` (BM25, TF-IDF, an untrained
base), ``peer`` (a zero-shot sentence encoder, ``sbert:``) or ``ours`` (the zoo's models).
Published reference rows from the registry follow, marked "published". The latest record
wins when a run is repeated. Names are escaped in the Markdown as in the HTML.

Page (:mod:`.page`): ``leaderboard.html``, one file with its figures inline, sortable columns,
filters by kind and setting.

Figures (:mod:`.plots`, :mod:`.transfer`), each also written beside the page:
``models.png`` (every row's main metric per set), ``zero_shot.png`` (MultiCQA Figure 2, with
the zero-shot bi-encoder as the reference line), ``transfer.png``/``.svg`` (MAP minus the
zero-shot bi-encoder's, zoo models × sets) and ``fusion_<model>.png`` (Figure 4) for each
fusion model whose record (or else zoo card) carries its weights.

Example:
    >>> write_leaderboard("results", "board")  # doctest: +SKIP
    [PosixPath('board/leaderboard.md'), PosixPath('board/leaderboard.html'), ...]
"""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks.leaderboard.page import Figure, to_html
from benchmarks.leaderboard.plots import (
    figure_bytes,
    fusion_figure,
    models_figure,
    zero_shot_figure,
)
from benchmarks.leaderboard.table import (
    Table,
    build_table,
    markdown_text,
    model_kind,
    row_label,
    to_markdown,
)
from benchmarks.leaderboard.transfer import (
    Transfer,
    transfer_figure,
    transfer_markdown,
    transfer_matrix,
)
from benchmarks.results import read_results
from stackexchange.io import atomic_write_bytes, atomic_write_text

__all__ = [
    "Table",
    "Transfer",
    "build_table",
    "markdown_text",
    "model_kind",
    "row_label",
    "to_markdown",
    "transfer_matrix",
    "write_leaderboard",
    "zero_shot_figure",
]


def _card(model: str) -> dict | None:
    """The checked card of the local zoo entry ``model`` names (the store's reader: a broken
    card is one line naming its file), None for a model with no local entry."""
    from adapter_zoo.zoo.store import find_card

    return find_card(model)


def _fusion_cards(records: list[dict]) -> list[dict]:
    cards = []
    for model in sorted({r["model"] for r in records}):
        carried = next(
            (r for r in records if r["model"] == model and r.get("fusion_weights")), None
        )
        card = (
            {"name": model, "fusion_weights": carried["fusion_weights"]}
            if carried
            else _card(model)
        )
        if card and card.get("fusion_weights"):
            cards.append({**card, "file": f"fusion_{Path(model).name}.png"})
    return cards


def write_leaderboard(results: str | os.PathLike, out: str | os.PathLike) -> list[Path]:
    """Write leaderboard.md, leaderboard.html and the figures to ``out``; return the paths.

    Raises:
        BenchmarkError: a results record is malformed (named by file, line and field).
    """
    records = read_results(results)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, figures = [], []
    plots = [
        ("models.png", "Every model's main metric on each set, best on top", models_figure(records)),
        ("zero_shot.png", "Zoo models scored zero-shot on each set, against the zero-shot "
         "bi-encoder, BM25 and the in-domain model", zero_shot_figure(records)),
    ]  # fmt: skip
    for card in _fusion_cards(records):
        plots.append((card["file"], f"Fusion weights of {card.get('name', '')} per layer",
                      fusion_figure(card)))  # fmt: skip
    for name, caption, figure in plots:
        if figure is not None:
            png = figure_bytes(figure, "png")
            atomic_write_bytes(out / name, png)
            written.append(out / name)
            figures.append(Figure(name, caption, png=png))
    matrix = transfer_matrix(records)
    transfer: Figure | str = matrix if isinstance(matrix, str) else ""
    if isinstance(matrix, Transfer):
        caption = (f"MAP minus the zero-shot bi-encoder's ({matrix.reference}) per zoo model "
                   "and set: blue better, red worse")  # fmt: skip
        png = figure_bytes(transfer_figure(matrix), "png")
        svg = figure_bytes(transfer_figure(matrix), "svg").decode("utf-8")
        atomic_write_bytes(out / "transfer.png", png)
        atomic_write_text(out / "transfer.svg", svg)
        written += [out / "transfer.png", out / "transfer.svg"]
        transfer = Figure("transfer.svg", caption, svg=svg)
    table = build_table(records)
    markdown = "# Leaderboard\n\n" + to_markdown(table) + transfer_markdown(matrix)
    atomic_write_text(out / "leaderboard.md", markdown)
    atomic_write_text(out / "leaderboard.html", to_html(table, figures, transfer))
    return [out / "leaderboard.md", out / "leaderboard.html", *written]
