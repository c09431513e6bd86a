"""The transfer matrix: how much each zoo model gains over the model a user already has.

Rows are zoo models (adapters, multi-task adapters, soups, fusions...; not the baselines),
columns the target sets, and a cell is the model's MAP minus the zero-shot bi-encoder's
(``sbert:minilm-l6``) MAP on that set, from the same results. Drawn as a heatmap on a
diverging scale centred on 0 (blue: better than the bi-encoder, red: worse), values written
in the cells; the same deltas go into the leaderboard's Markdown.

Example:
    >>> matrix = transfer_matrix(read_results("results"))  # doctest: +SKIP
    >>> matrix.rows[0], matrix.deltas[0]  # doctest: +SKIP
    ('multitask-bi', [0.0027, 0.0328, -0.0012])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from adapter_zoo.names import ZERO_SHOT_MODEL
from benchmarks.leaderboard.plots import pyplot
from benchmarks.leaderboard.table import (
    MARKS,
    benchmark_label,
    latest_records,
    markdown_table,
    model_role,
)

METRIC = "map"


@dataclass
class Transfer:
    """``deltas[i][j]``: row ``i``'s MAP minus the reference's on column ``j`` (None: not
    scored); ``settings[i][j]``: that cell's setting (``in-domain`` or ``zero-shot``)."""

    rows: list[str]
    columns: list[str]
    deltas: list[list[float | None]]
    settings: list[list[str]]
    reference: str = ZERO_SHOT_MODEL


def transfer_matrix(records: list[dict]) -> Transfer | str:
    """The matrix of ``records``, or the one-line reason it cannot be drawn: it needs the
    zero-shot bi-encoder's records and one zoo model scored on two of the same sets.

    Rows scored on more sets first, then best first (mean delta over the sets scored);
    columns by name.
    """
    latest = latest_records(records)
    reference = {
        (b, s): r["metrics"][METRIC]
        for (_, b, s), r in latest.items()
        if r["model"] == ZERO_SHOT_MODEL and not r.get("adapters") and r["mode"] == "zero-shot"
        and METRIC in r["metrics"]
    }  # fmt: skip
    if not reference:
        return (
            f"No transfer matrix: the results hold no {ZERO_SHOT_MODEL} (zero-shot bi-encoder) "
            "record to compare the zoo models with."
        )
    keys = sorted(reference)
    titles = {}
    for (_, b, s), record in latest.items():
        if (b, s) in reference:
            titles[(b, s)] = f"{benchmark_label(record)} ({s})"
    cells: dict[str, dict] = {}
    for (label, b, s), record in latest.items():
        if (b, s) in reference and model_role(record) == "ours" and METRIC in record["metrics"]:
            delta = record["metrics"][METRIC] - reference[(b, s)]
            cells.setdefault(label, {})[(b, s)] = (round(delta, 4), record["mode"])
    if len(keys) < 2 or not any(len(row) >= 2 for row in cells.values()):
        return (
            "No transfer matrix: no zoo model was scored on two or more of the sets "
            f"{ZERO_SHOT_MODEL} was scored on."
        )
    order = sorted(cells, key=lambda label: (  # scored on more sets first, then best
        -len(cells[label]), -_mean([d for d, _ in cells[label].values()]), label))  # fmt: skip
    return Transfer(
        rows=order,
        columns=[titles[key] for key in keys],
        deltas=[[cells[label].get(key, (None, ""))[0] for key in keys] for label in order],
        settings=[[cells[label].get(key, (None, ""))[1] for key in keys] for label in order],
    )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _cell(delta: float | None, setting: str) -> str:
    if delta is None:
        return "–"
    text = f"{delta:+.3f}" if round(delta, 3) else "0.000"  # no "-0.000"
    return text + (MARKS[setting][0] if setting in MARKS else "")


def transfer_markdown(matrix: Transfer | str) -> str:
    """The matrix as a Markdown section (names escaped), or the note on why there is none."""
    if isinstance(matrix, str):
        return f"\n## Transfer matrix\n\n{matrix}\n"
    rows = [
        [label, *[_cell(d, s) for d, s in zip(deltas, settings)]]
        for label, deltas, settings in zip(matrix.rows, matrix.deltas, matrix.settings)
    ]
    table = markdown_table(["model", *matrix.columns], rows)
    used = {s for row in matrix.settings for s in row if s in MARKS}
    notes = "".join(f"\n{MARKS[s][0]} {MARKS[s][1]}.\n" for s in sorted(used))
    return (
        f"\n## Transfer matrix\n\n{METRIC.upper()} minus the zero-shot bi-encoder's "
        f"({matrix.reference}) on each set; positive: the zoo model ranks better than the "
        f"model a user already has.\n\n{table}{notes}"
    )


def transfer_figure(matrix: Transfer):
    """The heatmap: a diverging colour scale centred on 0, deltas written in the cells, a
    colour bar; the figure grows with the matrix and its longest names."""
    plt = pyplot()
    import numpy as np
    from matplotlib.colors import SymLogNorm

    grid = np.array([[math.nan if d is None else d for d in row] for row in matrix.deltas])
    finite = np.abs(grid[np.isfinite(grid)])
    limit = max(float(finite.max()) if finite.size else 0.0, 0.02)
    # linear within ±0.01 MAP, logarithmic beyond: a +0.01 gain is still visibly blue
    # beside a -0.3 loss; centred on 0 either way
    norm = SymLogNorm(linthresh=0.01, linscale=0.5, vmin=-limit, vmax=limit, base=10)
    longest_row = max(len(label) for label in matrix.rows)
    longest_column = max(len(title) for title in matrix.columns)
    width = 2.5 + 0.07 * longest_row + 1.1 * len(matrix.columns)
    height = 1.4 + 0.045 * longest_column + 0.4 * len(matrix.rows)
    figure, axis = plt.subplots(figsize=(max(5.5, width), max(3.0, height)))
    colours = plt.get_cmap("RdBu").with_extremes(bad="#e0e0e0")  # grey: not scored
    image = axis.imshow(np.ma.masked_invalid(grid), cmap=colours, norm=norm, aspect="auto")
    for i, (deltas, settings) in enumerate(zip(matrix.deltas, matrix.settings)):
        for j, (delta, setting) in enumerate(zip(deltas, settings)):
            dark = delta is not None and abs(float(norm(delta)) - 0.5) > 0.3
            axis.text(j, i, _cell(delta, setting), ha="center", va="center", fontsize=8,
                      color="white" if dark else "black")  # fmt: skip
    axis.set_xticks(range(len(matrix.columns)), matrix.columns, rotation=30, ha="right",
                    fontsize=8)  # fmt: skip
    axis.set_yticks(range(len(matrix.rows)), matrix.rows, fontsize=8)
    axis.set_title(f"Transfer: {METRIC.upper()} minus {matrix.reference}", fontsize=10)
    bar = figure.colorbar(image, ax=axis, fraction=0.05, pad=0.03)
    steps = [t for t in (0.01, 0.03, 0.1, 0.3, 1.0) if t <= limit]
    ticks = [-t for t in reversed(steps)] + [0.0] + steps
    bar.set_ticks(ticks, labels=[f"{t:+g}" if t else "0" for t in ticks], fontsize=7)
    bar.set_label(f"Δ {METRIC.upper()} vs zero-shot bi-encoder", fontsize=8)
    if any(s in MARKS for row in matrix.settings for s in row):
        figure.text(0.01, 0.005, "† in-domain (the model's own forum)", fontsize=7)
    figure.tight_layout()
    return figure
