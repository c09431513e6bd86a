"""The docs' speed and tooling tables (docs/performance.md, docs/results.md): the
recommender, the cascade, training memory, the text pipeline's libraries, int8 scoring,
the default learning rates and CI's time."""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.training.rates import LEARNING_RATES
from benchmarks.report.render import Column, Rows, Table


def _top3(key: str):
    """A target's top 3 adapters by ``key``, the sweep's best in bold."""

    def cell(r) -> str:
        best = Path(r["target"]["best"]).name
        names = (Path(p).name for p in r["target"][key])
        return ", ".join(f"**{name}**" if name == best else name for name in names)

    return cell


# The recommender per real target: the sweep's best adapter and the recommendations.
RECOMMEND = Table(
    marker="recommend",
    source="recommend",
    rows="targets.<target>",
    columns=(
        Column("target", "{target[target]}"),
        Column("best adapter (full sweep)", lambda r: f"`{Path(r['target']['best']).name}`"),
        Column("spread of the 5 adapters' MAP",
               lambda r: f"{max(r['target']['sweep'].values()) - min(r['target']['sweep'].values()):.3f}"),
        Column("top 3 by similarity", _top3("similarity_top3")),
        Column("top 3 by the probe", _top3("probe_top3")),
    ),
)  # fmt: skip

# The Cascade Transformer run: compute saved and P@1 lost at each α, per set.
CASCADE = Table(
    marker="cascade",
    source="cascade",
    columns=(
        Column("set", "{set.key}"),
        Column("questions", "{set[queries]}"),
        Column("cascade", lambda r: r["row"].key.replace("alpha", "α")),
        Column("P@1", "{row[p@1]:.3f}"),
        Column("MAP", "{row[map]:.3f}"),
        Column("compute saved", "{row[compute_saved]:.1%}"),
        Column("P@1 lost (points)", "{row[p@1_lost_points]:.1f}"),
        Column("pairs/s vs monolithic", "{row[speedup_pairs_per_s]:.2f}×"),
    ),
    rows=(
        Rows("sets.<set>", cells=(
            "{set.key}", "{set[queries]}", "monolithic", "{set[rows][monolithic][p@1]:.3f}",
            "{set[rows][monolithic][map]:.3f}", "—", "—", "1.00×",
        ), then=(
            # α = 0 keeps every candidate: the monolithic row already says it
            Rows("rows.<row>", where=lambda r: r["row"].key.startswith("alpha=")
                 and r["row"].key != "alpha=0.0"),
        )),
    ),
)  # fmt: skip

_MEMORY_NOTES = {
    "checkpointed": "activations recomputed in backward, the whole batch at once",
    "chunked": "8 pairs (cross) / 8 texts (bi, GradCache) at a time; the cross-encoder "
    "rows ran the hand-written loop that CrossEncoderTrainer replaced",
    "cross-encoder-trainer": "the cross-encoder path before memory budgets: "
    "CrossEncoderTrainer, backward 8 pairs at a time",
    "budget": "today's code: the memory plan (in brackets) is the cheapest that fits "
    "the budget (`--memory-budget 2GB` / `512MB` in the -2gb / -512mb cases): plain, "
    "recompute, or bounded (GradCache / chunks of 8 pairs and recomputation)",
}


def _memory_code(r) -> str:
    plan = r["case"].get("memory")
    return f"{r['code'].key} ({plan['mode']})" if plan else r["code"].key


def _per_step(r) -> str:
    """Wall time outside dev scoring (model loading included) per optimizer step."""
    run = r["case"]
    if run.get("dev_selection_s") is None or not run.get("steps"):
        return "—"
    return f"{(run['wall_s'] - run['dev_selection_s']) / run['steps']:.1f} s"


# Real ``adapter-zoo train`` runs: peak memory, wall time and dev selection's share.
TRAIN_MEMORY = Table(
    marker="train-memory",
    source="train_memory",
    rows="runs.<code>.<case>",
    columns=(
        Column("case", "`{case.key}`"),
        Column("`adapter-zoo train` options", lambda r: f"`{r['setup']['cases'][r['case'].key]}`"),
        Column("code", _memory_code),
        Column("peak RSS", "{case[peak_rss_gb]:.2f} GB"),
        Column("wall time", "{case[wall_s]:.0f} s"),
        Column("dev selection's share", "{case[dev_selection_share]:.0%}"),
        Column("s per step outside dev", _per_step),
    ),
    note=lambda data: "\n".join(
        f"- `{label}`: {text}." for label, text in _MEMORY_NOTES.items() if label in data["runs"]
    ),
)  # fmt: skip


def _html_forums(data: dict) -> list[str]:
    """The forums of the first candidate's runs (every candidate ran the same)."""
    return list(next(iter(data["candidates"].values()))["forums"])


# HTML → text libraries against ``stackexchange.html_to_text`` on the shipped forums.
HTML_TO_TEXT = Table(
    marker="html-to-text",
    source="html_to_text_candidates",
    rows="candidates.<candidate>",
    columns=(
        Column("candidate", "{candidate.key}"),
        Column("version", "{candidate[version]}"),
        Column(lambda r: f"µs/body {r['key'].removesuffix('.stackexchange.com')}",
               "{candidate[forums][$][us_per_body]:.1f}", over=_html_forums),
        Column(lambda r: f"identical {r['key'].removesuffix('.stackexchange.com')}",
               "{candidate[forums][$][identical]}/{candidate[forums][$][bodies]}",
               over=_html_forums),
    ),
)  # fmt: skip


def _splitter_sources(data: dict) -> list[str]:
    return list(next(iter(data["segmenters"].values()))["sources"])


def _splitters_note(data: dict) -> str:
    agreed = ", ".join(f"{s} {n}" for s, n in data["all_agree_of_300"].items())
    machine = data["machine"]
    return (f"All three split alike in {agreed} of 300 paragraphs per source; "
            f"{machine['cpu']}, {machine['cpu_count']} cores.")  # fmt: skip


# Sentence segmenters on four real sources: sentences a second and agreement with
# hand-checked sentences.
SENTENCE_SPLITTERS = Table(
    marker="sentence-splitters",
    source="sentence_splitters",
    rows="segmenters.<segmenter>",
    columns=(
        Column("segmenter", lambda r: r["segmenter"].key
               + (" (ours)" if r["segmenter"].key == r["chosen"] else "")),
        Column("version", "{segmenter[version]}"),
        Column("sentences/s", "{segmenter[sentences_per_s]:,}"),
        Column("sentences/s $", "{segmenter[sources][$][sentences_per_s]:,}",
               over=_splitter_sources),
        Column("hand-checked paragraphs right",
               "{segmenter[gold][exact]}/{segmenter[gold][paragraphs]}"),
        Column("boundary F1", "{segmenter[gold][boundary_f1]:.3f}"),
        Column("right where they differ", "{segmenter[gold_where_they_differ][exact]}/"
               "{segmenter[gold_where_they_differ][paragraphs]}"),
    ),
    note=_splitters_note,
)  # fmt: skip

# CPU seconds of reading documents and building each objective's examples on two real
# corpora.
OBJECTIVE_EXAMPLES = Table(
    marker="objective-examples",
    source="objective_examples",
    columns=(
        Column("corpus", ""),
        Column("step", "{objective.key}"),
        Column("examples", "{objective[all][examples]:,}"),
        Column("CPU s", "{objective[all][seconds]:.2f}"),
        Column("with a hard negative", "{objective[all][with_hard_negative]:,}"),
        Column("CPU s at adapt's cap ({arguments[adapt_cap]:,})",
               "{objective[adapt_cap][seconds]:.2f}"),
    ),
    rows=(
        Rows("corpora.<corpus>", cells=(
            "{corpus.key} ({corpus[structure][documents]:,} documents, "
            "{corpus[structure][paragraphs]:,} paragraphs, {corpus[structure][sentences]:,} "
            "sentences)", "read_documents", "—", "{corpus[read_s]:.2f}", "—", "—",
        ), then=(Rows("objectives.<objective>"),)),
    ),
)  # fmt: skip

_INT8_VARIANTS = {"torch_fp32": "torch fp32", "onnx_fp32": "ONNX fp32 (ours)",
                  "onnx_int8": "ONNX int8 (ours)",
                  "peer_int8": "sentence-transformers int8 (peer)"}  # fmt: skip


def _int8_row(key: str, label: str) -> Rows:
    """A set's row of one scoring variant, against the set's torch fp32."""
    compared = key != "torch_fp32"
    return Rows(cells=(
        "{set.key} ({set[lists]} lists)", label, f"{{set[{key}][pairs_per_s]:.0f}}",
        lambda r: f"{r['set'][key]['pairs_per_s'] / r['set']['torch_fp32']['pairs_per_s']:.2f}×",
        f"{{set[{key}][map]:.4f}}",
        f"{{set[{key}][map_delta]:delta4}}" if compared else "—",
        f"{{set[{key}][lists_moved]}}/{{set[{key}][lists]}}" if compared else "—",
    ))  # fmt: skip


# Scoring through ONNX Runtime (fp32 and int8) against torch fp32 and the peer,
# sentence-transformers' own int8 export of the same base.
INT8 = Table(
    marker="int8",
    source="int8",
    columns=tuple(map(Column, ("set", "scoring", "pairs/s", "× torch fp32", "MAP", "Δ MAP",
                               "lists' AP moved"))),
    rows=(Rows("sets.<set>", cells=(),
               then=tuple(_int8_row(key, label) for key, label in _INT8_VARIANTS.items())),),
)  # fmt: skip

# ``adapter_zoo.training.rates.LEARNING_RATES``: the default rate by encoder and mode.
LEARNING_RATES_TABLE = Table(
    marker="learning-rates",
    source=lambda: LEARNING_RATES,
    rows="<encoder>",
    columns=(
        Column("encoder", "`{encoder.key}`"),
        Column("`$`", "{encoder[$]:g}", over="cross"),
    ),
)


def _ci_chip(data: dict) -> str:
    machine = data["machine"]
    chip = f"{machine['cpu']} ({', '.join(machine['cpu_flags'])}), {machine['cpu_count']} cores"
    stages = ", ".join(f"{name} {seconds} s" for name, seconds in data["stages"].items())
    return (f"{chip}, {machine['date'][:10]}, commit {data['commit'][:7]}: {stages}; "
            f"{data['passed']} passed, {data['failed']} failed")  # fmt: skip


# ``.ci/run`` on a clean clone: each stage's time, then the 25 slowest tests with the
# decision recorded for each.
CI_TIME = Table(
    marker="ci-time",
    source="ci_time",
    columns=(
        Column("what", "`{test[test]}` ({test[when]})"),
        Column("seconds", "{test[seconds]:.1f}", "--:"),
        Column("decision", lambda r: r["test"]["decision"] or "**no decision recorded**"),
    ),
    rows=(
        Rows(cells=("all of `.ci/run`", "{wall_time_s:.0f}", _ci_chip)),
        Rows("slowest.<test>", where=lambda r: r["test"].index < 25),
    ),
)


_PEER, _OURS = "base's attention dropout (peer)", "no attention dropout (adapt)"


def _run(case: str, field: str, fmt: str):
    return lambda r: format(r["forum"]["runs"][case][field], fmt)


# adapt's own run trained with and without attention dropout: a step's seconds, peak memory
# and the entry's test MAP beside the baselines.
ATTENTION_DROPOUT = Table(
    marker="attention-dropout",
    source="attention_dropout",
    rows="forums.<forum>",
    columns=(
        Column("forum", "{forum.key:forum}"),
        Column("s/step: dropout (peer)", _run(_PEER, "seconds_per_step", ".2f")),
        Column("s/step: none (adapt)", _run(_OURS, "seconds_per_step", ".2f")),
        Column("faster", "{forum[step_ratio]:.2f}×"),
        Column("peak GB: dropout", _run(_PEER, "peak_rss_gb", ".2f")),
        Column("peak GB: none", _run(_OURS, "peak_rss_gb", ".2f")),
        Column("test questions", "{forum[test][questions]}"),
        Column("MAP zero-shot / fused", lambda r: "{:.3f} / {:.3f}".format(
            r["forum"]["test"]["map"]["zero-shot MiniLM"],
            r["forum"]["test"]["map"]["MiniLM fused with BM25"])),
        Column("MAP dropout / none", lambda r: "{:.3f} / {:.3f}".format(
            r["forum"]["test"]["map"][_PEER], r["forum"]["test"]["map"][_OURS])),
        Column("none − dropout", "{forum[test][no_dropout_vs_peer]:interval}"),
    ),
    note=lambda data: (
        f"{data['setup']['steps']} steps of {data['setup']['batch_size']} at "
        f"{data['setup']['max_length']} tokens each; {data['machine']['cpu']}, "
        f"{data['machine']['cpu_count']} cores, {data['machine']['date'][:10]}."
    ),
)  # fmt: skip
