"""The quality run's tables (``quality.json``): the zoo's models on the held-out sets."""

from __future__ import annotations

from benchmarks.report.render import SETS, Column, Rows, Table, delta, map_, met

QUALITY_LABELS = {
    "bm25": "BM25",
    "sbert:minilm-l6": "zero-shot all-MiniLM-L6-v2 bi-encoder (`sbert:minilm-l6`)",
    "beer-bi": "beer bi-encoder adapter (`beer-bi`)",
    "beer-bi-hard": "beer bi-encoder adapter, BM25 hard negatives (`beer-bi-hard`)",
    "bicycles-bi": "bicycles.meta bi-encoder adapter (`bicycles-bi`)",
    "multitask-bi": "multi-task bi-encoder adapter, both forums (`multitask-bi`)",
    "fusion-bi": "AdapterFusion of the two forum adapters (`fusion-bi`)",
    "beer-bi-full": "beer full bi-encoder fine-tune, the peer (`beer-bi-full`)",
    "beer-cross": "beer cross-encoder adapter (`beer-cross`)",
    "bicycles-cross": "bicycles.meta cross-encoder adapter (`bicycles-cross`)",
}


def per_set(header: str, cell: str, align: str = "---") -> tuple[Column, ...]:
    """One column per held-out set: ``$`` is the set's label in the header, its key in the
    cell."""
    return tuple(
        Column(header.replace("$", label), cell.replace("$", key), align)
        for key, label in SETS.items()
    )


def _member(name: str) -> str:
    return "zero-shot" if name == "sbert:minilm-l6" else name


def _composition_label(name: str, composition: dict) -> str:
    members = [_member(m) for m in composition["members"]]
    if composition["how"] == "rerank":
        return f"`{name}`: {members[0]}'s top 10 reranked by {members[1]}"
    weights = " / ".join(f"{w:g}" for w in composition["weights"])
    forum = SETS[composition["forum"]]
    return f"`{name}`: fusion of {' + '.join(members)} (weights {weights}, chosen on {forum} dev)"


# a column's best is in bold: every row's value is needed before any row is written
def _quality_rows(data: dict) -> list[list[str]]:
    table, compositions = data["table"], data["compositions"]
    models = [m for m in table if not m.startswith("beer-bi-drop")]
    best = {s: max(table[m][s]["map"] for m in models if s in table[m]) for s in SETS}
    return [
        [QUALITY_LABELS.get(model) or _composition_label(model, compositions[model]),
         *(map_(table[model].get(s, {}).get("map"), best[s]) for s in SETS)]
        for model in models
    ]  # fmt: skip


# Every model of the quality run's zoo table, each at its own length: test MAP per set.
QUALITY = Table(
    marker="quality",
    source="quality",
    columns=(Column("model"), *per_set("$ test MAP", "")),
    rows=_quality_rows,
)

# The best model for each forum, chosen on its dev split, against the zero-shot model.
QUALITY_CHOICE = Table(
    marker="quality-choice",
    source="quality",
    rows="summary.best_for_forum_chosen_on_dev.<pick>",
    columns=(
        Column("forum", "{pick.key:set}"),
        Column("chosen on dev", "`{pick[chosen_on_dev]}`"),
        Column("test MAP", "{pick[test_map]:map}"),
        Column("zero-shot", "{pick[zero_shot_test_map]:map}"),
        Column("gain", "{pick[gain]:delta}"),
        Column("target", "+{pick[target]}"),
        Column("met", lambda r: met(r["pick"]["gain"] >= r["pick"]["target"])),
    ),
)

# Dev and test MAP of the bi-encoders at 256 and 512 tokens.
QUALITY_LENGTH = Table(
    marker="quality-length",
    source="quality",
    rows="length_table.rows.<model>",
    columns=(
        Column("model (dev / test MAP)", lambda r: QUALITY_LABELS[r["model"].key]),
        *(
            Column(f"{SETS[f]} at {n}", f"{{model[{f}][{n}][dev]:.3f}} / {{model[{f}][{n}][test]:.3f}}")
            for f in ("beer", "bicycles")
            for n in ("256", "512")
        ),
    ),
)  # fmt: skip

# The forum adapters as ``train`` makes them now (length chosen on dev).
QUALITY_RETRAINED = Table(
    marker="quality-retrained",
    source="quality",
    rows="length_table.retrained.<entry>",
    columns=(
        Column("adapter", "`{entry.key}` ({entry[forum]:set}'s, ranks at {entry[max_length]} tokens)"),
        *per_set("$ test MAP (vs zero-shot)",
                 "{entry[test_map][$]:.3f} ({entry[delta_vs_zero_shot][$]:delta})"),
    ),
)  # fmt: skip


def _lr_steps(data: dict) -> str:
    """The header of the dev curve: the steps of the first run that has a curve."""
    steps = ", ".join(next(r for r in data["lr_table"] if r["lr"])["dev_map_by_step"])
    return f"dev MAP at steps {steps}"


def _trained(cell):
    """A cell of a run at a learning rate; "—" on the zero-shot run, which has none."""
    return lambda r: cell(r["run"]) if r["run"]["lr"] else "—"


# beer's bi-encoder adapter at each learning rate: the dev curve and the test MAP.
QUALITY_LR = Table(
    marker="quality-lr",
    source="quality",
    rows="lr_table.<run>",
    columns=(
        Column("learning rate", lambda r: f"{r['run']['lr']:g}" if r["run"]["lr"]
               else "zero-shot base"),
        Column(_lr_steps, _trained(lambda run: ", ".join(
            f"{v:.3f}" for v in run["dev_map_by_step"].values()))),
        Column("best step", _trained(lambda run: run["best_step"])),
        Column("beer test MAP", "{run[test_map]:map}"),
    ),
)  # fmt: skip

# AdapterDrop: beer's bi-encoder adapter without adapters in the lowest k layers.
QUALITY_DROP_LOWER = Table(
    marker="quality-drop-lower",
    source="quality",
    rows="drop_lower_table.<run>",
    columns=(
        Column("k", "{run[drop_lower]}"),
        Column("entry", "`{run[entry]}`"),
        *per_set("$ test MAP", "{run[$]:map}"),
    ),
)


# a row is a start (new, or a forum's adapter) and a column an encoder, read off the names
def _tanda_rows(data: dict) -> list[list[str]]:
    tanda = data["tanda_table"]
    rows_data, gains = tanda["rows"], tanda["continued_minus_new"]
    starts = {"new": "new adapter"}
    for name in rows_data:
        if not name.startswith("new "):
            start = name.rsplit("-", 1)[0]
            label = "multi-task (both forums)" if start == "multitask" else SETS.get(start, start)
            starts[start] = f"{label} adapter"
    rows = []
    for start, label in starts.items():
        cells = []
        for encoder in ("bi", "cross"):
            name = f"new {encoder} adapter" if start == "new" else f"{start}-{encoder}"
            if name not in rows_data:
                cells.append("—")
                continue
            text = f"{rows_data[name]['mean_test_map']:.3f}"
            cells.append(text if start == "new" else f"{text} ({delta(gains[name])})")
        rows.append([label, *cells])
    return rows


# TANDA with adapters on WikiQA: continued forum adapters against a new adapter.
QUALITY_TANDA = Table(
    marker="quality-tanda",
    source="quality",
    columns=(Column("start"), Column("bi-encoder"), Column("cross-encoder")),
    rows=_tanda_rows,
)


def _lora_speed(r) -> str:
    speed, seqbn = r["row"]["train_pairs_per_s"], r["lora_table"]["rows"]["beer-bi"]
    seqbn = seqbn["train_pairs_per_s"]
    return f"{speed}" + (f" ({speed / seqbn:.2f}×)" if speed != seqbn else "")


# LoRA against the SeqBn bottleneck on beer's bi-encoder adapter, same steps and rate.
QUALITY_LORA = Table(
    marker="quality-lora",
    source="quality",
    columns=(
        Column("beer's bi-encoder adapter",
               "{row[method]} (`{row.key}`, best step {row[best_step]}, {row[max_length]} tokens)"),
        Column("trainable parameters", "{row[trainable_parameters]:,}"),
        Column("beer test MAP", "{row[beer_test_map]:.4f}"),
        Column("bicycles.meta test MAP", "{row[bicycles_test_map]:.4f}"),
        Column("training pairs/s (batch {lora_table[batch_size]}, 128 tokens)", _lora_speed),
        Column("speed measured", lambda r: f"{len(r['row']['train_pairs_per_s_rounds'])} rounds"),
    ),
    rows=(
        Rows(cells=("zero-shot all-MiniLM-L6-v2 (reference)", "0",
                    "{lora_table[zero_shot][beer_test_map]:.4f}",
                    "{lora_table[zero_shot][bicycles_test_map]:.4f}", "—", "—")),
        Rows("lora_table.rows.<row>"),
    ),
)  # fmt: skip

# The cross-encoder entries retrained on the current training path (CrossEncoderTrainer).
QUALITY_CROSS_RERUN = Table(
    marker="quality-cross-rerun",
    source="quality",
    rows="cross_rerun.rows.<row>",
    columns=(
        Column("entry (first path → CrossEncoderTrainer)", "`{row.key}`"),
        *per_set("$ test MAP", "{row[test_map][$][before]:.3f} → {row[test_map][$][after]:.3f}"),
        Column("dev MAP", "{row[dev_map][before]:.3f} → {row[dev_map][after]:.3f}"),
    ),
)


# a column's best is in bold, and the rows are picked by name from the zoo table
def _readme_quality_rows(data: dict) -> list[list[str]]:
    table, zoo = data["table"], data["zoo"]
    rows_data = {
        "BM25": {s: table["bm25"][s]["map"] for s in SETS},
        "zero-shot MiniLM bi-encoder (`sbert:minilm-l6`), the model a user already has": {
            s: table["sbert:minilm-l6"][s]["map"] for s in SETS
        },
    }
    # the zoo table's forum adapters (quality.py --only zoo reruns them with today's code)
    for name in ("beer-bi", "bicycles-bi"):
        label = f"{SETS[name.split('-')[0]]} bi-encoder adapter (40 steps, ranks at "
        rows_data[label + f"{zoo[name]['max_length']} tokens)"] = {
            s: table[name][s]["map"] for s in SETS
        }
    for name in ("beer-cross", "bicycles-cross"):
        rows_data[f"{SETS[name.split('-')[0]]} cross-encoder adapter (60 steps)"] = {
            s: table[name][s]["map"] for s in SETS
        }
    best = {s: max(scores[s] for scores in rows_data.values()) for s in SETS}
    return [
        [label, *(map_(scores[s], best[s]) for s in SETS)] for label, scores in rows_data.items()
    ]


# The README's short table: the zoo's kinds of model as the code makes them now.
README_QUALITY = Table(
    marker="readme-quality",
    source="quality",
    columns=(Column("model (test MAP)"), Column("beer"), Column("bicycles.meta"),
             Column("WikiQA")),
    rows=_readme_quality_rows,
)  # fmt: skip
