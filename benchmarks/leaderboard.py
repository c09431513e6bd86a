"""Leaderboard: Markdown/HTML tables and plots from a results folder.

Tables: one row per model (model + adapters + setting), best first by the mean of its main
metrics; per benchmark (``split`` in the header) a column of its main metric and, where that
is not MAP, one of MAP; then ``Σ <metric>``: the mean of each metric over the benchmarks the
row has (MultiCQA's tables' average column); then ``kind``: ``baseline`` (BM25, TF-IDF, an
untrained base), ``peer`` (a zero-shot sentence encoder, ``sbert:``) or ``ours`` (the zoo's
models). Published reference rows from the registry follow, marked "published". The latest
record wins when a run is repeated.

Plots (matplotlib, Agg): ``models.png`` — every row's main metric per benchmark as bars, best
on top, the IR baseline marked (the comparison a reader looks for first); ``zero_shot.png`` — the zero-shot scores of all adapters per benchmark,
with the IR baseline (bm25) and the in-domain (fine-tuned) model as horizontal lines (MultiCQA
Figure 2; "adapters" = every zoo model evaluated zero-shot); ``fusion_<model>.png`` — fusion
weights per layer and adapter ({layer: {adapter: weight}}) carried by the result record (or else
the zoo card) of each fusion model in the results (Figure 4).

Example:
    >>> write_leaderboard("results", "board")  # doctest: +SKIP
    [PosixPath('board/leaderboard.md'), PosixPath('board/leaderboard.html'), ...]
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

from adapter_zoo.metrics import METRICS
from benchmarks.registry import get
from benchmarks.results import read_results
from stackexchange.io import atomic_write_bytes, atomic_write_text

IR_BASELINE = "bm25"


def row_label(record: dict) -> str:
    """``model[+adapter...] (mode)`` — the table row a record belongs to."""
    label = "+".join(
        [
            Path(record["model"]).name if os.sep in record["model"] else record["model"],
            *record.get("adapters", []),
        ]
    )
    mode = record["mode"]
    if "alpha" in record:  # cascade runs: one row per drop ratio
        mode = f"{mode} α={record['alpha']:g}"
    return label if mode == "zero-shot" else f"{label} ({mode})"


def _benchmark_label(record: dict) -> str:
    """Column title: the registry name, or a built benchmark's own name for ``local:PATH``."""
    if str(record["benchmark"]).startswith("local:"):
        return record.get("benchmark_name") or Path(record["benchmark"][6:]).name
    return record["benchmark"]


def _main_metric(record: dict) -> str:
    return record.get("main_metric") or get(record["benchmark"]).main_metric


def model_kind(record: dict) -> str:
    """``baseline`` (bm25, tfidf, an untrained ``base:``), ``peer`` (``sbert:``, a sentence
    encoder used zero-shot) or ``ours`` (a zoo model, alone or as ``--adapter``)."""
    if _is_adapter(record):
        return "ours"
    return "peer" if str(record["model"]).startswith("sbert:") else "baseline"


def _column_metrics(main: str) -> list[str]:
    """A benchmark's columns: its main metric, and MAP too when that is not the main one."""
    return [main] if main == "map" else [main, "map"]


def build_table(records: list[dict]) -> tuple[list[str], list[list[str]]]:
    """Header and rows (strings) of the leaderboard."""
    latest: dict[tuple, dict] = {}
    for record in records:
        latest[(row_label(record), record["benchmark"], record["split"])] = record
    columns = sorted({(b, s) for _, b, s in latest})
    firsts = {b: next(r for (_, rb, _), r in latest.items() if rb == b) for b, _ in columns}
    mains = {b: _main_metric(r) for b, r in firsts.items()}
    header = [
        "model",
        *[
            f"{_benchmark_label(firsts[b])} ({s}, {metric})"
            for b, s in columns
            for metric in _column_metrics(mains[b])
        ],
        *[f"Σ {m}" for m in METRICS],
        "kind",
    ]
    scored = []
    for label in {key[0] for key in latest}:
        cells, sums, main_scores, kind = [], {m: [] for m in METRICS}, [], ""
        for benchmark, split in columns:
            record = latest.get((label, benchmark, split))
            if record is None:
                cells += ["–"] * len(_column_metrics(mains[benchmark]))
                continue
            kind = model_kind(record)
            cells += [
                f"{100 * record['metrics'][m]:.1f}" for m in _column_metrics(mains[benchmark])
            ]
            main_scores.append(record["metrics"][mains[benchmark]])
            for m in METRICS:
                sums[m].append(record["metrics"][m])
        averages = [_mean(sums[m], len(columns)) for m in METRICS]
        mean = sum(main_scores) / len(main_scores)
        scored.append((-mean, label, [label, *cells, *averages, kind]))
    rows = [row for *_, row in sorted(scored)]  # best first; equal scores by name
    rows += _published_rows(columns, mains)
    return header, rows


def _mean(values: list[float], expected: int) -> str:
    if not values:
        return "–"
    text = f"{100 * sum(values) / len(values):.1f}"
    return text if len(values) == expected else f"{text} ({len(values)}/{expected})"


def _published_rows(columns, mains) -> list[list[str]]:
    rows: dict[str, list[str]] = {}
    width = sum(len(_column_metrics(mains[b])) for b, _ in columns)
    start = 1
    for benchmark, split in columns:
        metrics = _column_metrics(mains[benchmark])
        try:
            references = get(benchmark).published
        except ValueError:  # a local: or unknown benchmark has no published rows
            references = ()
        for ref in references:
            if ref.split == split and mains[benchmark] in ref.metrics:
                label = f"{ref.model} [{ref.source}]"
                row = rows.setdefault(
                    label, [label, *["–"] * width, *["–"] * len(METRICS), "published"]
                )
                for offset, metric in enumerate(metrics):
                    if metric in ref.metrics:
                        row[start + offset] = f"{100 * ref.metrics[metric]:.1f}"
        start += len(metrics)
    return list(rows.values())


def to_markdown(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_html(header, rows, images) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        f'<tr class="{html.escape(row[-1])}">'
        + "".join(f"<td>{html.escape(c)}</td>" for c in row)
        + "</tr>"
        for row in rows
    )
    figures = "".join(
        f'<p><img src="{html.escape(name)}" alt="{html.escape(name)}"></p>' for name in images
    )
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>adapter-zoo leaderboard</title>'
        "<style>table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}"
        "tr.published{font-style:italic;color:#555}</style></head><body>"
        f"<h1>Leaderboard</h1><table><tr>{head}</tr>{body}</table>{figures}</body></html>\n"
    )


def _save(figure, path: Path) -> Path:
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(figure)  # many benchmarks or fusion models would otherwise pile up open figures
    atomic_write_bytes(path, buffer.getvalue())
    return path


def _is_adapter(record: dict) -> bool:
    """A zoo model (not bm25/tfidf/sbert:/base:), alone or a base plus ``--adapter``."""
    model = str(record["model"])
    return bool(record.get("adapters")) or not (
        model in ("bm25", "tfidf") or model.startswith(("sbert:", "base:"))
    )


def plot_zero_shot(records: list[dict], path: Path) -> Path | None:
    """MultiCQA Figure 2: adapter zero-shot scores per benchmark, IR baseline and in-domain lines."""
    figure = zero_shot_figure(records)
    return None if figure is None else _save(figure, path)


def zero_shot_figure(records: list[dict]):
    """The figure of :func:`plot_zero_shot` (None without zero-shot zoo models).

    Readable at any number of adapters: the metric axis starts at 0 and reaches past every
    score and line, each adapter is a named bar, and the legend sits below the panels.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    zero = [r for r in records if r["mode"] == "zero-shot" and _is_adapter(r)]
    benchmarks = sorted({r["benchmark"] for r in zero})
    if not benchmarks:
        return None
    most = max(sum(r["benchmark"] == b for r in zero) for b in benchmarks)
    figure, axes = plt.subplots(
        1, len(benchmarks), figsize=(max(4.0, 0.35 * most + 2) * len(benchmarks), 4.0),
        squeeze=False,
    )  # fmt: skip
    for axis, benchmark in zip(axes[0], benchmarks):
        mine = sorted(
            (r for r in zero if r["benchmark"] == benchmark),
            key=lambda r: r["metrics"][_main_metric(r)],
        )
        metric = _main_metric(mine[0])
        scores = [r["metrics"][metric] for r in mine]
        axis.bar(range(len(mine)), scores, color="tab:blue", label="zoo models (zero-shot)")
        axis.set_xticks(range(len(mine)), [row_label(r) for r in mine], rotation=60, ha="right",
                        fontsize=7)  # fmt: skip
        lines = []
        for record in records:
            if record["benchmark"] != benchmark:
                continue
            value = record["metrics"][metric]
            if record["model"] == IR_BASELINE and record["mode"] == "zero-shot":
                lines.append(value)
                axis.axhline(value, color="red", linestyle="--", label="BM25")
            elif record["mode"].startswith("finetune") or record["mode"] == "in-domain":
                lines.append(value)
                axis.axhline(value, color="green", label="in-domain")
        axis.set_ylim(0, min(1.0, 1.1 * max(scores + lines)) or 1.0)
        axis.set_xlim(-0.6, len(mine) - 0.4)
        axis.set_title(_benchmark_label(mine[0]), fontsize=9)
        axis.set_ylabel(metric)
    handles = {}
    for axis in axes[0]:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    figure.legend(handles.values(), handles.keys(), loc="lower center", ncol=len(handles),
                  fontsize=8, frameon=False)  # fmt: skip
    figure.tight_layout(rect=(0, 0.08, 1, 1))  # room for the legend below the panels
    return figure


def _card(model: str) -> dict | None:
    candidates = [Path(model) / "card.json"]
    try:
        from adapter_zoo.zoo import zoo_home

        candidates.append(Path(zoo_home()) / model / "card.json")
    except ImportError:
        pass
    for candidate in candidates:
        if candidate.is_file():
            return json.loads(candidate.read_text(encoding="utf-8"))
    return None


def plot_fusion(card: dict, path: Path) -> Path:
    """MultiCQA Figure 4: a heat map of fusion weights, layers × adapters."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    weights = card["fusion_weights"]
    layers = sorted(weights, key=lambda layer: int(layer) if str(layer).isdigit() else str(layer))
    adapters = sorted({a for layer in layers for a in weights[layer]})
    grid = [[weights[layer].get(a, 0.0) for a in adapters] for layer in layers]
    figure, axis = plt.subplots(figsize=(1 + 0.6 * len(adapters), 1 + 0.35 * len(layers)))
    image = axis.imshow(grid, aspect="auto", cmap="viridis")
    axis.set_xticks(range(len(adapters)), adapters, rotation=60, ha="right", fontsize=7)
    axis.set_yticks(range(len(layers)), [str(layer) for layer in layers], fontsize=7)
    axis.set_ylabel("layer")
    axis.set_title(f"fusion weights: {card.get('name', '')}")
    figure.colorbar(image)
    return _save(figure, path)


def plot_models(records: list[dict], path: Path) -> Path | None:
    """Bars of every row's main metric, one panel per benchmark, best first, BM25 in red."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latest = {(r["benchmark"], row_label(r)): r for r in records}  # the latest run wins
    benchmarks = sorted({benchmark for benchmark, _ in latest})
    if not benchmarks:
        return None
    rows = max(sum(b == benchmark for b, _ in latest) for benchmark in benchmarks)
    figure, axes = plt.subplots(
        1, len(benchmarks), figsize=(4.5 * len(benchmarks), 0.9 + 0.4 * rows), squeeze=False
    )
    for axis, benchmark in zip(axes[0], benchmarks):
        mine = [r for (b, _), r in latest.items() if b == benchmark]
        metric = _main_metric(mine[0])
        mine.sort(key=lambda r: r["metrics"][metric])
        values = [r["metrics"][metric] for r in mine]
        colors = ["tab:red" if r["model"] == IR_BASELINE else "tab:blue" for r in mine]
        axis.barh(range(len(mine)), values, color=colors)
        axis.set_yticks(range(len(mine)), [row_label(r) for r in mine], fontsize=8)
        for y, value in enumerate(values):
            axis.text(value, y, f" {value:.3f}", va="center", fontsize=7)
        axis.set_xlim(0, min(1.0, max(values) * 1.2) or 1.0)
        axis.set_xlabel(metric)
        axis.set_title(_benchmark_label(mine[0]), fontsize=9)
    figure.tight_layout()
    return _save(figure, path)


def write_leaderboard(results: str | os.PathLike, out: str | os.PathLike) -> list[Path]:
    """Write leaderboard.md, leaderboard.html and the plots to ``out``; return the paths."""
    records = read_results(results)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    images = []
    for plot, name in ((plot_models, "models.png"), (plot_zero_shot, "zero_shot.png")):
        written = plot(records, out / name)
        if written is not None:
            images.append(written)
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
            images.append(plot_fusion(card, out / f"fusion_{Path(model).name}.png"))
    header, rows = build_table(records)
    markdown = to_markdown(header, rows)
    atomic_write_text(out / "leaderboard.md", "# Leaderboard\n\n" + markdown)
    atomic_write_text(out / "leaderboard.html", to_html(header, rows, [p.name for p in images]))
    return [out / "leaderboard.md", out / "leaderboard.html", *images]
