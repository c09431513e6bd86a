"""The leaderboard table: one row per model, one cell per set and metric, Σ averages.

A row is a model (``model[+adapter...]``; a fine-tuning, sweep or cascade run is a model of
its own and says so in its label). Whether a cell was scored zero-shot or in-domain (a zoo
model on a set built from its own forum) is the cell's setting, not a second row, so that
each row's Σ averages over every set the model was scored on.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path

from adapter_zoo.metrics import METRICS
from adapter_zoo.names import BM25, COMPOSITION, parse_model_name
from benchmarks.registry import get
from benchmarks.results import PATH_SCHEMES

IR_BASELINE = BM25
# settings that belong to a cell (the same model, scored on its own forum or another)
CELL_SETTINGS = ("zero-shot", "in-domain")
# how a cell scored in a setting other than zero-shot is marked, and the legend's words
MARKS = {
    "in-domain": (
        "†",
        "in-domain: scored on a set built from the forum the model was trained on "
        "(its test questions held out of training); unmarked cells are zero-shot",
    ),
}


def row_label(record: dict) -> str:
    """``model[+adapter...]``, and `` (mode)`` for a model made by a run (fine-tuning, a
    sweep, a cascade at its drop ratio) — the table row a record belongs to."""
    label = "+".join(
        [
            Path(record["model"]).name if os.sep in record["model"] else record["model"],
            *record.get("adapters", []),
        ]
    )
    mode = record["mode"]
    if "alpha" in record:  # cascade runs: one row per drop ratio
        mode = f"{mode} α={record['alpha']:g}"
    return label if mode in CELL_SETTINGS else f"{label} ({mode})"


def benchmark_label(record: dict) -> str:
    """Column title: the registry's label (its ``title`` where the name alone would hide
    what the set is, e.g. ``semeval2017 bodies only (derived test text)``, else its name),
    or a built benchmark's or BEIR folder's own name for ``local:PATH``/``beir:PATH``."""
    if str(record["benchmark"]).startswith(PATH_SCHEMES):
        path = str(record["benchmark"]).split(":", 1)[1]
        return record.get("benchmark_name") or Path(path).name
    try:
        return get(record["benchmark"]).label
    except ValueError:  # a record of a benchmark this version no longer registers
        return record["benchmark"]


def main_metric(record: dict) -> str:
    return record.get("main_metric") or get(record["benchmark"]).main_metric


def is_zoo_model(record: dict) -> bool:
    """A zoo model (not bm25/tfidf/sbert:/base:), alone or a base plus ``--adapter``."""
    return model_role(record) == "ours"


def model_role(record: dict) -> str:
    """``baseline`` (bm25, tfidf, an untrained ``base:``, a composition spec of those and
    zero-shot encoders only, such as the base fused with BM25 at any weight or the base with
    pseudo-relevance feedback: what a user has without training), ``peer`` (``sbert:``, a
    sentence encoder used zero-shot) or ``ours`` (a zoo model, alone, as ``--adapter`` or in
    a spec): the role of the model's kind (:mod:`adapter_zoo.kinds`).

    Example:
        >>> model_role({"model": "fusion:sbert:minilm-l6*0.8+bm25*0.2@minmax"})
        'baseline'
        >>> model_role({"model": "fusion:beer+sbert:minilm-l6*0.45+bm25*0.1"})
        'ours'
    """
    if record.get("adapters"):
        return "ours"
    return _name_role(str(record["model"]))


def _name_role(model: str) -> str:
    # the kinds register on import, which reaches the models (torch): on first use
    from adapter_zoo.compose import parse_spec
    from adapter_zoo.kinds import kind_for_name

    name = parse_model_name(model)
    kind = kind_for_name(name)
    if kind is None:
        return "ours"
    if name.category != COMPOSITION:
        return kind.role
    roles = {_name_role(member) for member in parse_spec(model).members}
    return "ours" if "ours" in roles else "baseline"


def column_metrics(main: str) -> list[str]:
    """A benchmark's columns: its main metric, and MAP too when that is not the main one."""
    return [main] if main == "map" else [main, "map"]


def latest_records(records: list[dict]) -> dict[tuple[str, str, str], dict]:
    """``(row label, benchmark, split)`` → the latest record (a repeated run replaces)."""
    latest: dict[tuple, dict] = {}
    for record in records:
        latest[(row_label(record), record["benchmark"], record["split"])] = record
    return latest


@dataclass
class Cell:
    """A score (0–1, shown ×100) or none; its setting; whether it is its column's best."""

    value: float | None = None
    setting: str = ""
    best: bool = False
    of: tuple[int, int] | None = None  # a Σ over k of n sets, when k < n

    @property
    def text(self) -> str:
        if self.value is None:
            return "–"
        text = f"{100 * self.value:.1f}"
        return text if self.of is None else f"{text} ({self.of[0]}/{self.of[1]})"

    @property
    def mark(self) -> str:
        return MARKS[self.setting][0] if self.setting in MARKS else ""


@dataclass
class Row:
    label: str
    role: str  # baseline, peer, ours or published
    cells: list[Cell] = field(default_factory=list)

    @property
    def settings(self) -> list[str]:
        return sorted({cell.setting for cell in self.cells if cell.setting})


@dataclass
class Table:
    """``columns``: the score columns' titles (between ``model`` and ``role``)."""

    columns: list[str]
    rows: list[Row]

    @property
    def header(self) -> list[str]:
        return ["model", *self.columns, "role"]

    def text_rows(self) -> list[list[str]]:
        """Each row as the Markdown shows it: label, cells (marked), role."""
        return [[r.label, *[c.text + c.mark for c in r.cells], r.role] for r in self.rows]


def build_table(records: list[dict]) -> Table:
    """The leaderboard of ``records``: measured rows best first (those scored on more sets
    first, then by the mean of each set's main metric; equal means by name), then the published reference rows; each column's best
    measured cell marked (a Σ only among rows scored on every set).

    Example:
        >>> table = build_table(read_results("results"))  # doctest: +SKIP
        >>> table.header[:2], table.rows[0].label  # doctest: +SKIP
        (['model', 'wikiqa (test, map)'], 'beer-bi')
    """
    latest = latest_records(records)
    columns = sorted({(b, s) for _, b, s in latest})
    firsts = {b: next(r for (_, rb, _), r in latest.items() if rb == b) for b, _ in columns}
    mains = {b: main_metric(r) for b, r in firsts.items()}
    # a Σ column for each metric some record has (records of older runs may lack some)
    sums_of = [m for m in METRICS if any(m in r["metrics"] for r in latest.values())]
    titles = [
        f"{benchmark_label(firsts[b])} ({s}, {metric})"
        for b, s in columns
        for metric in column_metrics(mains[b])
    ]
    scored = []
    for label in {key[0] for key in latest}:
        row, sums, main_scores = Row(label, ""), {m: [] for m in sums_of}, []
        for benchmark, split in columns:
            record = latest.get((label, benchmark, split))
            metrics = column_metrics(mains[benchmark])
            if record is None:
                row.cells += [Cell() for _ in metrics]
                continue
            row.role = model_role(record)
            row.cells += [Cell(record["metrics"].get(m), record["mode"]) for m in metrics]
            main_scores.append(record["metrics"][mains[benchmark]])
            for m in sums_of:
                if m in record["metrics"]:
                    sums[m].append(record["metrics"][m])
        row.cells += [_mean(sums[m], len(columns)) for m in sums_of]
        # a model scored on more sets first: a mean over one easy set is not "best"
        scored.append((-len(main_scores), -sum(main_scores) / len(main_scores), label, row))
    rows = [row for *_, row in sorted(scored, key=lambda item: item[:3])]
    _mark_best(rows)
    rows += _published_rows(columns, mains, len(sums_of))
    return Table([*titles, *[f"Σ {m}" for m in sums_of]], rows)


def _mean(values: list[float], expected: int) -> Cell:
    if not values:
        return Cell()
    partial = None if len(values) == expected else (len(values), expected)
    return Cell(sum(values) / len(values), of=partial)


def _mark_best(rows: list[Row]) -> None:
    """Mark each column's best cell (all of them on a tie); a partial Σ does not compete."""
    for column in range(len(rows[0].cells) if rows else 0):
        cells = [r.cells[column] for r in rows]
        values = [c.value for c in cells if c.value is not None and c.of is None]
        if values:
            best = max(values)
            for cell in cells:
                cell.best = cell.of is None and cell.value == best


def _published_rows(columns, mains, sums: int) -> list[Row]:
    rows: dict[str, Row] = {}
    width = sum(len(column_metrics(mains[b])) for b, _ in columns) + sums
    start = 0
    for benchmark, split in columns:
        metrics = column_metrics(mains[benchmark])
        try:
            references = get(benchmark).published
        except ValueError:  # a local: or unknown benchmark has no published rows
            references = ()
        for ref in references:
            if ref.split == split and mains[benchmark] in ref.metrics:
                label = f"{ref.model} [{ref.source}]"
                row = rows.setdefault(
                    label, Row(label, "published", [Cell() for _ in range(width)])
                )
                for offset, metric in enumerate(metrics):
                    if metric in ref.metrics:
                        row.cells[start + offset] = Cell(ref.metrics[metric])
        start += len(metrics)
    return list(rows.values())


def markdown_text(text: str) -> str:
    """``text`` safe in a Markdown table cell: HTML-escaped (a name such as
    ``<svg onload=...>`` stays text where Markdown renders HTML), ``|`` and backticks escaped,
    line breaks joined.

    Example:
        >>> markdown_text("<svg onload=alert(1)>|`x`")
        '&lt;svg onload=alert(1)&gt;\\\\|\\\\`x\\\\`'
    """
    text = html.escape(" ".join(str(text).splitlines()))
    return text.replace("|", "\\|").replace("`", "\\`")


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, every cell through :func:`markdown_text`."""
    lines = ["| " + " | ".join(markdown_text(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_text(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_markdown(table: Table) -> str:
    """The table in Markdown (names escaped), best cells in bold, and the legend of its
    cell marks."""
    lines = markdown_table(table.header, []).splitlines()
    for row in table.rows:
        cells = [f"**{c.text}**{c.mark}" if c.best else c.text + c.mark for c in row.cells]
        lines.append(
            "| " + " | ".join([markdown_text(row.label), *cells, markdown_text(row.role)]) + " |"
        )
    return "\n".join(lines) + "\n" + legend(table)


def legend(table: Table) -> str:
    """One line per cell mark the table uses (none: empty)."""
    used = {c.setting for r in table.rows for c in r.cells if c.mark}
    return "".join(f"\n{MARKS[s][0]} {MARKS[s][1]}.\n" for s in sorted(used))
