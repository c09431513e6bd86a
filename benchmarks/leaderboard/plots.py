"""The leaderboard's figures (matplotlib, Agg), each with its legend.

- :func:`models_figure`: every row's main metric per set as bars, best on top, coloured by
  role, BM25 in red (the comparison a reader looks for first).
- :func:`zero_shot_figure`: MultiCQA Figure 2, the zero-shot scores of every zoo model per
  set, with the zero-shot bi-encoder (the model a user already has) as the reference line,
  BM25 and the in-domain model as lines.
- :func:`fusion_figure`: MultiCQA Figure 4, fusion weights per layer and adapter.
"""

from __future__ import annotations

import io

from adapter_zoo.names import ZERO_SHOT_MODEL
from benchmarks.leaderboard.table import (
    IR_BASELINE,
    benchmark_label,
    is_zoo_model,
    latest_records,
    main_metric,
    model_role,
    row_label,
)

ROLE_COLOURS = {"ours": "tab:blue", "peer": "tab:orange", "baseline": "tab:gray"}
ROLE_NAMES = {"ours": "zoo model", "peer": "zero-shot encoder", "baseline": "baseline"}


def pyplot():
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_bytes(figure, fmt: str = "png") -> bytes:
    """``figure`` as PNG or SVG bytes (SVG text stays text, so it reads and scales), closed."""
    plt = pyplot()
    buffer = io.BytesIO()
    # no metadata: a page that names no outside address, and the same bytes from the same data
    metadata = dict.fromkeys(("Creator", "Date", "Format", "Type"))
    if fmt == "png":
        metadata = {"Software": None}
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "adapter-zoo"}):
        figure.savefig(buffer, format=fmt, dpi=110, bbox_inches="tight", metadata=metadata)
    plt.close(figure)  # many sets or fusion models would otherwise pile up open figures
    return buffer.getvalue()


def _legend_below(figure, axes, extra=()) -> None:
    handles = dict(extra)
    for axis in axes:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    figure.legend(handles.values(), handles.keys(), loc="lower center",
                  ncol=min(len(handles), 4), fontsize=8, frameon=False)  # fmt: skip
    rows = -(-len(handles) // 4)
    figure.tight_layout(rect=(0, 0.05 + 0.04 * rows, 1, 1))  # room for the legend below


def models_figure(records: list[dict]):
    """Bars of every row's main metric, one panel per set, best on top (None: no records)."""
    plt = pyplot()
    from matplotlib.patches import Patch

    latest = latest_records(records)
    benchmarks = sorted({(b, s) for _, b, s in latest})
    if not benchmarks:
        return None
    rows = max(sum((b, s) == key for _, b, s in latest) for key in benchmarks)
    longest = max(len(label) for label, _, _ in latest)
    width = max(6.5, 3.5 + 0.07 * longest)
    figure, axes = plt.subplots(
        1, len(benchmarks), figsize=(width * len(benchmarks), 1.6 + 0.3 * rows), squeeze=False
    )
    roles = set()
    for axis, key in zip(axes[0], benchmarks):
        mine = [r for (_, b, s), r in latest.items() if (b, s) == key]
        metric = main_metric(mine[0])
        mine.sort(key=lambda r: r["metrics"][metric])
        values = [r["metrics"][metric] for r in mine]
        colours = []
        for record in mine:
            if record["model"] == IR_BASELINE:
                colours.append("tab:red")
            else:
                roles.add(model_role(record))
                colours.append(ROLE_COLOURS[model_role(record)])
        axis.barh(range(len(mine)), values, color=colours)
        axis.set_yticks(range(len(mine)), [row_label(r) for r in mine], fontsize=8)
        for y, value in enumerate(values):
            axis.text(value, y, f" {value:.3f}", va="center", fontsize=7)
        axis.set_xlim(0, min(1.0, max(values) * 1.18) or 1.0)
        axis.set_xlabel(metric)
        axis.set_title(f"{benchmark_label(mine[0])} ({key[1]})", fontsize=9)
    patches = [(ROLE_NAMES[k], Patch(color=ROLE_COLOURS[k])) for k in ROLE_COLOURS if k in roles]
    if any(r["model"] == IR_BASELINE for r in latest.values()):
        patches.append(("BM25", Patch(color="tab:red")))
    _legend_below(figure, axes[0], patches)
    return figure


def zero_shot_figure(records: list[dict]):
    """MultiCQA Figure 2: zoo models' zero-shot scores per set; the zero-shot bi-encoder
    (``sbert:minilm-l6``) as the reference line, BM25 and the in-domain model as lines
    (None without zero-shot zoo models).

    Readable at any number of adapters: the metric axis starts at 0 and reaches past every
    score and line, each adapter is a named bar, and the legend sits below the panels.
    """
    plt = pyplot()
    zero = [r for r in records if r["mode"] == "zero-shot" and is_zoo_model(r)]
    benchmarks = sorted({r["benchmark"] for r in zero})
    if not benchmarks:
        return None
    most = max(sum(r["benchmark"] == b for r in zero) for b in benchmarks)
    figure, axes = plt.subplots(
        1, len(benchmarks), figsize=(max(4.5, 0.35 * most + 2) * len(benchmarks), 5.0),
        squeeze=False,
    )  # fmt: skip
    for axis, benchmark in zip(axes[0], benchmarks):
        mine = sorted(
            (r for r in zero if r["benchmark"] == benchmark),
            key=lambda r: r["metrics"][main_metric(r)],
        )
        metric = main_metric(mine[0])
        scores = [r["metrics"][metric] for r in mine]
        axis.bar(range(len(mine)), scores, color="tab:blue", label="zoo models (zero-shot)")
        axis.set_xticks(range(len(mine)), [row_label(r) for r in mine], rotation=60, ha="right",
                        fontsize=7)  # fmt: skip
        lines, in_domain = [], []
        for record in records:
            if record["benchmark"] != benchmark or metric not in record["metrics"]:
                continue
            value = record["metrics"][metric]
            plain = record["mode"] == "zero-shot" and not record.get("adapters")
            if plain and record["model"] == ZERO_SHOT_MODEL:
                lines.append(value)
                axis.axhline(value, color="black", linestyle=":", linewidth=1.8, zorder=4,
                             label=f"zero-shot bi-encoder ({ZERO_SHOT_MODEL})")  # fmt: skip
            elif plain and record["model"] == IR_BASELINE:
                lines.append(value)
                axis.axhline(value, color="tab:red", linestyle="--", zorder=3, label="BM25")
            elif record["mode"].startswith("finetune") or record["mode"] == "in-domain":
                in_domain.append(value)
        if in_domain:  # the best model trained on this set's own forum (or fine-tuned on it)
            lines.append(max(in_domain))
            axis.axhline(max(in_domain), color="tab:green", zorder=2, label="best in-domain")
        axis.set_ylim(0, min(1.0, 1.1 * max(scores + lines)) or 1.0)
        axis.set_xlim(-0.6, len(mine) - 0.4)
        axis.set_title(benchmark_label(mine[0]), fontsize=9)
        axis.set_ylabel(metric)
    _legend_below(figure, axes[0])
    return figure


def fusion_figure(card: dict):
    """MultiCQA Figure 4: a heat map of fusion weights, layers × adapters."""
    plt = pyplot()
    weights = card["fusion_weights"]
    layers = sorted(weights, key=lambda layer: int(layer) if str(layer).isdigit() else str(layer))
    adapters = sorted({a for layer in layers for a in weights[layer]})
    grid = [[weights[layer].get(a, 0.0) for a in adapters] for layer in layers]
    figure, axis = plt.subplots(figsize=(2 + 0.6 * len(adapters), 1.5 + 0.35 * len(layers)))
    image = axis.imshow(grid, aspect="auto", cmap="viridis")
    axis.set_xticks(range(len(adapters)), adapters, rotation=60, ha="right", fontsize=7)
    axis.set_yticks(range(len(layers)), [str(layer) for layer in layers], fontsize=7)
    axis.set_ylabel("layer")
    axis.set_title(f"fusion weights: {card.get('name', '')}", fontsize=9)
    figure.colorbar(image, label="weight")
    return figure
