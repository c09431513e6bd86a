"""Leaderboard: a Markdown table, one self-contained HTML page and figures from a results folder.

Table (:mod:`.table`): one row per model, best first by the mean of its main metrics; per set
(``split`` in the header) a column of its main metric and, where that is not MAP, one of MAP;
each cell marked with its setting when it is not zero-shot (``†``: in-domain, a zoo model on a
set built from its own forum); then ``Σ <metric>``: the mean of each metric over the sets the
row has (MultiCQA's average column); then ``role``: ``baseline`` (BM25, TF-IDF, an untrained
base), ``peer`` (a zero-shot sentence encoder, ``sbert:``) or ``ours`` (the zoo's models).
Published reference rows from the registry follow, marked "published". The latest record
wins when a run is repeated. Names are escaped in the Markdown as in the HTML.

Page (:mod:`.page`): ``leaderboard.html``, one file with its figures inline, sortable columns,
filters by role and setting.

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
import re
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
    model_role,
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
from stackexchange.io import atomic_write_bytes, atomic_write_json, atomic_write_text

__all__ = [
    "Table",
    "Transfer",
    "build_table",
    "figure_file",
    "is_leaderboard",
    "markdown_text",
    "model_role",
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


# Marks a folder as a leaderboard this command wrote (so a later run may replace it): which
# results it shows and its files.
MARKER = "leaderboard.json"
_TITLE = "<title>adapter-zoo leaderboard</title>"
_FIGURE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")


def is_leaderboard(folder: Path) -> bool:
    """Whether ``folder`` is a leaderboard this command wrote: it holds the marker, or (one
    written before the marker) only the files a leaderboard writes, its page among them."""
    if (folder / MARKER).is_file():
        return True
    page = folder / "leaderboard.html"
    names = [p.name for p in folder.iterdir()]
    ours = {"leaderboard.md", "leaderboard.html", "models.png", "zero_shot.png",
            "transfer.png", "transfer.svg"}  # fmt: skip
    return (
        page.is_file()
        and all(n in ours or (n.startswith("fusion_") and n.endswith(".png")) for n in names)
        and _TITLE in page.read_text(encoding="utf-8", errors="replace")
    )


def figure_file(model: str, taken: set[str]) -> str:
    """The file name of ``model``'s fusion figure: ``fusion_<name>.png`` for a plain name;
    for any other (a path, a long or odd name, one another model already has) the plain part
    of it and a hash of the whole, so no name leaves the folder, is too long or is shared.

    Example:
        >>> figure_file("fused", set())
        'fusion_fused.png'
        >>> figure_file("runs/fused", {"fusion_fused.png"})  # another model has the name
        'fusion_fused-e8fdd1d360.png'
        >>> len(figure_file("../../" + "x" * 300, set()))
        62
    """
    import hashlib

    name = Path(model).name
    if _FIGURE_NAME.fullmatch(name) and f"fusion_{name}.png" not in taken:
        return f"fusion_{name}.png"
    plain = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")[:40]
    digest = hashlib.sha256(model.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"fusion_{plain + '-' if plain else ''}{digest}.png"


def _fusion_cards(records: list[dict]) -> list[dict]:
    cards, taken = [], set()
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
            file = figure_file(model, taken)
            taken.add(file)
            cards.append({**card, "file": file})
    return cards


def write_leaderboard(
    results: str | os.PathLike, out: str | os.PathLike, *, overwrite: bool = False
) -> list[Path]:
    """Write leaderboard.md, leaderboard.html and the figures to ``out``; return the paths.

    ``out`` is checked before the results are read (its name, the results inside it or it
    inside the results folder, a folder the command did not write, its parent's
    writability), and appears complete or not at all (``atomic_directory``), marked by
    ``leaderboard.json``; a rerun replaces it, stale figures included.

    Args:
        results: a results folder or its results.jsonl.
        out: the folder to write: new, empty, or a leaderboard this command wrote.
        overwrite: replace ``out`` whatever it holds.

    Raises:
        BenchmarkError: ``out`` cannot be written (one line saying what to do); a results
            record is malformed (named by file, line and field).
    """
    from benchmarks.errors import BenchmarkError
    from stackexchange.io import atomic_directory, output_lock
    from stackexchange.paths import check_output_folder, refuse_output_inside_input

    # a board inside the results folder would go with it when the results are moved,
    # replaced or removed, and the project never writes into its input
    refuse_output_inside_input([results], out, BenchmarkError)
    out = check_output_folder(
        out, what="a leaderboard", ours=is_leaderboard, overwrite=overwrite, inputs=[results],
        error=BenchmarkError,
    )  # fmt: skip
    records = read_results(results)
    with output_lock(out, error=BenchmarkError), atomic_directory(out, overwrite=True) as tmp:
        names = _write_files(records, tmp)
        atomic_write_json(tmp / MARKER, {"results": str(Path(results).resolve()),
                                         "files": names})  # fmt: skip
    return [out / name for name in names]


def _write_files(records: list[dict], out: Path) -> list[str]:
    """Write the leaderboard of ``records`` into ``out``; return the file names, the page's
    and the table's first."""
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
            written.append(name)
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
        written += ["transfer.png", "transfer.svg"]
        transfer = Figure("transfer.svg", caption, svg=svg)
    table = build_table(records)
    markdown = "# Leaderboard\n\n" + to_markdown(table) + transfer_markdown(matrix)
    atomic_write_text(out / "leaderboard.md", markdown)
    atomic_write_text(out / "leaderboard.html", to_html(table, figures, transfer))
    return ["leaderboard.md", "leaderboard.html", *written]
