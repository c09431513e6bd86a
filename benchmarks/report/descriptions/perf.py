"""The performance table (docs/performance.md) and the README's short one: a row or more
per record of ``benchmarks/results/``, each record's rows by its benchmark.

Each perf script saves its own JSON; the table only reads them, so the pages show exactly
what was measured (machine included) and whether each target was met.
"""

from __future__ import annotations

import json
from collections import ChainMap
from collections.abc import Callable

from benchmarks.report import paths
from benchmarks.report.descriptions import perf_rows, perf_timed
from benchmarks.report.descriptions.perf_rows import bf16_hardware, ran_on
from benchmarks.report.render import Column, Rows, Table, met, render, rows_of

NEAR_CHANCE_P1 = 0.1

PARSE = Rows(cells=(
    lambda r: f"`{r['stem']}` ({'1 worker' if r['args'].get('workers') == 1 else 'chunk workers = cores'})",
    "Posts.xml → pair rows, MB/s (peak RSS per process)",
    "{ours_mb_per_s:.0f} ({ours_peak_rss_mb:.0f} MB)",
    "bare lxml iterparse {bare_mb_per_s:.0f}",
    "{ratio:.2f}×",
    "≥ {targets[ratio]}×, < {targets[peak_rss_mb]} MB",
    "{meets_targets:met}",
    ran_on,
))  # fmt: skip


def _drop_lower(drop) -> str:
    return f" (drop lower {drop})" if drop is not None else ""


TRAIN_INFER = (
    Rows(cells=(
        lambda r: "`train_infer` training" + _drop_lower(r["setup"].get("adapter_drop_lower")),
        "adapter training pairs/s (MiniLM)",
        "{training_pairs_per_s[adapter]:.1f}",
        "full fine-tuning {training_pairs_per_s[full]:.1f}; "
        "CrossEncoder.fit {training_pairs_per_s[sentence-transformers]:.1f}",
        "{training_ratio_adapter_vs_full:.2f}×",
        "≥ {targets[adapter_vs_full_training]}×",
        lambda r: met(r["training_ratio_adapter_vs_full"] >= r["targets"]["adapter_vs_full_training"]),
        ran_on,
    )),
    Rows(cells=(
        "`train_infer` inference",
        lambda r: "Ranker.score pairs/s ("
        + ("scores equal" if r["scores_equal_within_1e-5"] else "**scores differ**") + ")",
        "{inference_pairs_per_s[Ranker.score]:.1f}",
        "CrossEncoder.predict {inference_pairs_per_s[CrossEncoder.predict]:.1f}",
        "{inference_ratio_ranker_vs_cross_encoder:.2f}×",
        "≥ {targets[ranker_vs_cross_encoder_inference]}×",
        lambda r: met(r["inference_ratio_ranker_vs_cross_encoder"]
                      >= r["targets"]["ranker_vs_cross_encoder_inference"]),
        ran_on,
    )),
)  # fmt: skip


def _cascade_met(r) -> str:
    # a monolithic model near chance makes "P@1 lost" meaningless
    if r["set"]["rows"]["monolithic"]["p@1"] < NEAR_CHANCE_P1:
        return "n/a"
    return met(r["row"]["compute_saved"] >= 0.30 and r["row"]["p@1_lost_points"] <= 1.0)


CASCADE = Rows(
    "sets.<set>.rows.<row>",
    # α = 0 keeps every candidate: nothing saved, nothing to judge
    where=lambda r: r["row"].key.startswith("alpha=") and r["row"].key != "alpha=0.0",
    cells=(
        lambda r: f"`cascade` {r['set'].key} {r['row'].key.replace('alpha', 'α')}",
        "compute saved (FLOPs); P@1 lost (points)",
        "{row[compute_saved]:.1%}; {row[p@1_lost_points]:+.1f}",
        "monolithic P@1 {set[rows][monolithic][p@1]:.3f}",
        "{row[speedup_pairs_per_s]:.2f}× pairs/s",
        "≥ 30% saved, ≤ 1 point lost",
        _cascade_met,
        ran_on,
    ),
)


def _identical(r) -> bool:
    return r["max_abs_score_difference"] == 0.0


SWEEP = Rows(cells=(
    lambda r: "`sweep`" + _drop_lower(r.get("drop_lower")),
    lambda r: f"N = {r['adapters']} adapters on {r['data']}, pairs/s"
    + ("" if _identical(r) else " (**scores differ**)"),
    "{shared_pairs_per_s:.1f}",
    "independent passes {independent_pairs_per_s:.1f}",
    "{speedup:.2f}×",
    "≥ {target_speedup}×, identical scores",
    lambda r: met(r["speedup"] >= r["target_speedup"] and _identical(r)),
    ran_on,
))  # fmt: skip


def _recommend(mode: str, label: str) -> Rows:
    """The recommender's row of one way to recommend, against the full sweep's cost."""
    return Rows(cells=(
        f"`recommend` {label}",
        lambda r: f"top-1 / top-3 hit rate: {len(r['targets'])} real targets, "
        f"{len(r['zoo'])} adapters",
        f"{{summary[{mode}_top1_hit_rate]:.0%}} / {{summary[{mode}_top3_hit_rate]:.0%}}",
        "random pick {summary[random_top1]:.0%} / {summary[random_top3]:.0%}; "
        "full sweep {seconds[sweep]:.0f} s",
        lambda r: f"{r['seconds']['sweep'] / r['seconds'][mode]:.1f}× cheaper than the sweep",
        "hit rate measured",
        "yes",
        ran_on,
    ))  # fmt: skip


RECOMMEND = (
    _recommend("similarity", "domain similarity"),
    _recommend("probe", "probe of {args[dev_sample]} dev queries"),
)

HUB = Rows(
    "rows.<row>",
    where=lambda r: r["row"].key.startswith("pull"),
    cells=(
        "`hub_pull` {row.key}",
        "{mb} MB adapter download, MB/s",
        "{row[mb_per_s]:.0f}",
        "huggingface_hub snapshot_download {rows[snapshot_download (cold)][mb_per_s]:.0f}",
        lambda r: f"{r['rows']['snapshot_download (cold)']['best_s'] / r['row']['best_s']:.2f}× speed",
        "—",
        "—",
        "{machine[cpu_count]} CPU cores, {machine[server]}",
    ),
)  # fmt: skip


def _memory_default(r) -> bool:
    """Dev selection's share is a target of default runs (a 10-step run is mostly dev)."""
    return "--max-steps" not in r["setup"]["cases"][r["case"].key]


def _memory_target(r) -> str:
    targets = r["targets"]
    return f"< {targets['peak_rss_gb']} GB" + (
        f", dev ≤ {targets['dev_selection_share']}" if _memory_default(r) else ""
    )


def _memory_met(r) -> str:
    run, targets = r["case"], r["targets"]
    share = run.get("dev_selection_share")
    return met(run["peak_rss_gb"] < targets["peak_rss_gb"] and (
        not _memory_default(r) or share is None or share <= targets["dev_selection_share"]
    ))  # fmt: skip


TRAIN_MEMORY = Rows("runs.<label>.<case>", cells=(
    "`train_memory` {case.key} ({label.key})",
    lambda r: f"`adapter-zoo train {r['setup']['cases'][r['case'].key]}` on "
    f"{r['setup']['forum']}: peak RSS of the process tree, wall time, dev selection's share",
    lambda r: f"{r['case']['peak_rss_gb']:.2f} GB, {r['case']['wall_s']:.0f} s, "
    f"dev {r['case'].get('dev_selection_share')}",
    "—",
    "—",
    _memory_target,
    _memory_met,
    lambda r: ran_on(r["case"].value),
))  # fmt: skip

PRECISION_TRAINING = Rows(cells=(
    lambda r: "`precision_training` bf16 training" + (" (smoke run)" if r.get("smoke") else ""),
    lambda r: ", ".join(f"`{m}`" for m in r["models"]) + " trained in fp32 and in bf16 (same "
    f"seed, taking turns), each scored in fp32 on {r['summary']['pairs'] // len(r['models'])} "
    "test sets: largest ΔMAP in absolute value (mean ΔMAP); training wall time fp32 / bf16",
    "bf16-trained: max abs ΔMAP {summary[max_abs_delta]:.4f} (mean {summary[mean_delta]:+.4f})",
    "fp32-trained",
    "{summary[mean_speed_ratio_fp32_over_bf16]:.2f}× speed",
    "MAP ± {map_tolerance}",
    "{summary[within_tolerance]:met}",
    lambda r: f"{ran_on(r)}, {bf16_hardware(r)}, {r['machine'].get('date', '')[:10]}",
))  # fmt: skip


def _bi_only(cell: Callable) -> Callable:
    """A cell of the bi-encoder's row only (the target is the bi-encoder's)."""
    return lambda r: cell(r) if r["encoder"].key == "bi" else "—"


MEMORY_PLAN = Rows("runs.<encoder>", cells=(
    "`memory_plan` {encoder.key}-encoder",
    "`adapter-zoo train` on {forum}, {steps} steps at 128 tokens ({precision}): seconds per "
    "step outside dev (peak RSS), dev MAP; plain plan vs bounded (GradCache / chunks, "
    "recomputed activations)",
    "plain {encoder[plain][s_per_step]:.1f} s ({encoder[plain][peak_rss_gb]:.2f} GB), "
    "MAP {encoder[plain][dev_map]:.4f}",
    "bounded {encoder[bounded][s_per_step]:.1f} s ({encoder[bounded][peak_rss_gb]:.2f} GB), "
    "MAP {encoder[bounded][dev_map]:.4f}",
    lambda r: f"{r['speedup_plain_over_bounded'][r['encoder'].key]:.2f}×",
    _bi_only(lambda r: f"≥ {r['target_ratio']}×"),
    _bi_only(lambda r: met(r["speedup_plain_over_bounded"]["bi"] >= r["target_ratio"])),
    lambda r: f"{ran_on(r)}, {r['machine'].get('date', '')[:10]}",
))  # fmt: skip


def _named(benchmark: str) -> Callable[[str, dict], bool]:
    return lambda stem, data: data.get("benchmark", stem) == benchmark


# Each record's rows: the first kind that matches it (by its benchmark's name; train_infer
FIRST_RANK = Rows(cells=(
    "`first_rank` load + rank",
    "a fresh process: `load({entry!r})` (shipped) and one `rank`; warm bytecode (cold)",
    "{cases[ours][warm_s]:.1f} s ({cases[ours][cold_s]:.1f} s)",
    "sentence-transformers load + encode {cases[sentence-transformers][warm_s]:.1f} s "
    "({cases[sentence-transformers][cold_s]:.1f} s)",
    "{ratio_warm:.2f}× the time",
    "≤ {target_s:.0f} s",
    lambda r: met(r["meets_target"]),
    ran_on,
))  # fmt: skip

# records by their file, which names the variant; train_memory's by its file; a quality
# record only with its summary). A ``Rows`` is formatted against the record, its file's stem
# as ``stem``; a function is a row function of ``perf_rows``: its rows' targets and verdicts
# are worked out from several of the record's fields.
PERF_ROWS: tuple[tuple[Callable[[str, dict], bool], Rows | tuple[Rows, ...] | Callable], ...] = (
    (_named("parse_throughput"), PARSE),
    (lambda stem, data: stem.startswith("train_infer"), TRAIN_INFER),
    (_named("cascade"), CASCADE),
    (_named("sweep"), SWEEP),
    (_named("hub_pull"), HUB),
    (_named("first_rank"), FIRST_RANK),
    (_named("recommend"), RECOMMEND),
    (_named("transfer"), perf_rows.transfer_rows),
    (lambda stem, data: _named("quality")(stem, data) and "summary" in data,
     perf_rows.quality_rows),
    (lambda stem, data: stem == "train_memory", TRAIN_MEMORY),
    (_named("precision"), perf_rows.precision_rows),
    (_named("precision_training"), PRECISION_TRAINING),
    (_named("memory_plan"), MEMORY_PLAN),
    (_named("training_peak"), perf_rows.training_peak_rows),
    (_named("train_throughput"), perf_rows.train_throughput_rows),
    (_named("quickstart_time"), perf_timed.quickstart_rows),
    (_named("adapt_time"), perf_timed.adapt_time_rows),
    (_named("insuranceqa"), perf_timed.insuranceqa_rows),
)  # fmt: skip


def records() -> dict[str, dict]:
    """Every record of the results folder by its file's stem, in the files' order."""
    return {
        path.stem: json.loads(path.read_text()) for path in sorted(paths.RESULTS.glob("*.json"))
    }


def rows_of_record(stem: str, data: dict) -> list:
    """A record's rows of the performance table (none when no kind matches it)."""
    for matches, rows in PERF_ROWS:
        if matches(stem, data):
            if callable(rows):
                return list(rows(data))
            groups = (rows,) if isinstance(rows, Rows) else rows
            return rows_of(groups, ChainMap({"stem": stem}, data))
    return []


# every record of the folder, each matched to its kind: more than one record, by kind
def _perf_rows(found: dict[str, dict]) -> list:
    return [cells for stem, data in found.items() for cells in rows_of_record(stem, data)]


# The performance table: each benchmark's rows, ours against the peer with the target.
PERF = Table(
    marker="perf",
    source=records,
    columns=tuple(map(Column, ("benchmark", "measured", "ours", "peer", "ratio", "target",
                               "met", "machine"))),
    rows=_perf_rows,
)  # fmt: skip

# the README's rows of the performance table: (row, what it measures, in a few words)
README_PERF_ROWS = (
    ("`train_infer` training (drop lower 0)", "adapter training, pairs/s vs full fine-tuning"),
    ("`train_infer` training (drop lower 3)", "the same, AdapterDrop k = 3"),
    ("`train_infer` inference", "Ranker.score vs CrossEncoder.predict, pairs/s"),
    ("`sweep` (drop lower 3)", "8 adapters in one shared pass vs 8 passes"),
    ("`cascade` wikiqa α=0.4", "Cascade Transformer: compute saved; P@1 lost"),
    ("`parse_throughput` (chunk workers = cores)", "parse, MB/s (peak RSS) vs bare lxml"),
    ("`train_memory` bi-default (chunked)", "default bi-encoder `train`: peak RSS, time"),
    ("`train_memory` cross-default (cross-encoder-trainer)", "default cross-encoder `train`"),
    (
        "`train_throughput` arguana, upper-4 vs today",
        "adapt's learner, adapters in the top 2 of 6 layers (frozen layers cached) vs all 6: "
        "pairs/s (a later epoch's); selection MAP after equal pairs",
    ),
    ("`quickstart_time` quickstart", "`adapter-zoo quickstart` as a user runs it"),
)


# a few rows of the full table, picked by their first cell, with the measurement in words
def _readme_perf_rows(_: dict) -> list[list[str]]:
    rows = {}
    for line in render(PERF).splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        rows.setdefault(cells[0], cells)  # the first train_infer inference row: drop lower 0
    picked = []
    for label, what in README_PERF_ROWS:
        cells = rows[label]
        picked.append([cells[0], what, cells[2], cells[4], cells[5], cells[6], cells[7]])
    return picked


# The README's short performance table: a few rows of the full one (docs/performance.md)
# with the measurement said in a few words.
README_PERF = Table(
    marker="readme-perf",
    source=dict,  # the full table's rows
    columns=tuple(map(Column, ("benchmark", "measured", "ours", "ratio", "target", "met",
                               "machine"))),
    rows=_readme_perf_rows,
)  # fmt: skip
