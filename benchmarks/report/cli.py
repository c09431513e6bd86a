"""The performance table (docs/performance.md) from ``benchmarks/perf/results/*.json``.

Each perf script saves its own JSON; this only reads them, so the pages show exactly what
was measured (machine included) and whether each target was met. ``main`` regenerates every
marked table of README.md and docs/ (``benchmarks/report/tables.py``: this table and the
others, all from the recorded JSON).

Usage:
    .venv/bin/python -m benchmarks.report            # rewrite the pages' tables
    .venv/bin/python -m benchmarks.report --check    # exit 1 if a page is stale
    .venv/bin/python -m benchmarks.report --print    # print the performance table only
"""

from __future__ import annotations

import argparse
import json

from benchmarks.perf.adapt_study import FUSED
from benchmarks.report.paths import RESULTS, ROOT

NEAR_CHANCE_P1 = 0.1
HEADER = (
    "| benchmark | measured | ours | peer | ratio | target | met | machine |",
    "|---|---|---|---|---|---|---|---|",
)


def _machine(data: dict) -> str:
    machine = data.get("machine", {})
    if data.get("gpu"):
        return data["gpu"]
    cores, threads = machine.get("cpu_count", "?"), machine.get("torch_threads")
    # a run pinned to fewer cores than the machine has (taskset) says so
    used = f"{threads} of {cores}" if threads and threads != cores else cores
    return f"{used} CPU cores" + (", CUDA" if machine.get("cuda") else "")


def _bf16_hardware(data: dict) -> str:
    """What multiplied bf16 in a precision record's run: a GPU's tensor cores or the CPU's
    bf16 flags."""
    if data.get("gpu"):
        return "bf16 tensor cores"
    return "+".join(data.get("cpu_bf16_flags") or []) or "no bf16"


def _row(*cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _parse_rows(name: str, data: dict) -> list[str]:
    workers = data["args"].get("workers")
    label = f"`{name}` ({'1 worker' if workers == 1 else 'chunk workers = cores'})"
    target = data["targets"]["ratio"]
    return [
        _row(
            label,
            "Posts.xml → pair rows, MB/s (peak RSS per process)",
            f"{data['ours_mb_per_s']:.0f} ({data['ours_peak_rss_mb']:.0f} MB)",
            f"bare lxml iterparse {data['bare_mb_per_s']:.0f}",
            f"{data['ratio']:.2f}×",
            f"≥ {target}×, < {data['targets']['peak_rss_mb']} MB",
            _met(data["meets_targets"]),
            _machine(data),
        )
    ]


def _train_infer_rows(data: dict) -> list[str]:
    train, infer = data["training_pairs_per_s"], data["inference_pairs_per_s"]
    targets = data["targets"]
    ratio_train = data["training_ratio_adapter_vs_full"]
    ratio_infer = data["inference_ratio_ranker_vs_cross_encoder"]
    equal = "scores equal" if data["scores_equal_within_1e-5"] else "**scores differ**"
    drop = data["setup"].get("adapter_drop_lower")
    return [
        _row(
            "`train_infer` training" + (f" (drop lower {drop})" if drop is not None else ""),
            "adapter training pairs/s (MiniLM)",
            f"{train['adapter']:.1f}",
            f"full fine-tuning {train['full']:.1f}; CrossEncoder.fit {train['sentence-transformers']:.1f}",
            f"{ratio_train:.2f}×",
            f"≥ {targets['adapter_vs_full_training']}×",
            _met(ratio_train >= targets["adapter_vs_full_training"]),
            _machine(data),
        ),
        _row(
            "`train_infer` inference",
            f"Ranker.score pairs/s ({equal})",
            f"{infer['Ranker.score']:.1f}",
            f"CrossEncoder.predict {infer['CrossEncoder.predict']:.1f}",
            f"{ratio_infer:.2f}×",
            f"≥ {targets['ranker_vs_cross_encoder_inference']}×",
            _met(ratio_infer >= targets["ranker_vs_cross_encoder_inference"]),
            _machine(data),
        ),
    ]


def _cascade_rows(data: dict) -> list[str]:
    rows = []
    for set_name, result in data["sets"].items():
        for label, row in result["rows"].items():
            if not label.startswith("alpha=") or label == "alpha=0.0":
                continue
            saved, lost = row["compute_saved"], row["p@1_lost_points"]
            monolithic = result["rows"]["monolithic"]["p@1"]
            # a monolithic model near chance makes "P@1 lost" meaningless
            met = "n/a" if monolithic < NEAR_CHANCE_P1 else _met(saved >= 0.30 and lost <= 1.0)
            rows.append(
                _row(
                    f"`cascade` {set_name} {label.replace('alpha', 'α')}",
                    "compute saved (FLOPs); P@1 lost (points)",
                    f"{saved:.1%}; {lost:+.1f}",
                    f"monolithic P@1 {monolithic:.3f}",
                    f"{row['speedup_pairs_per_s']:.2f}× pairs/s",
                    "≥ 30% saved, ≤ 1 point lost",
                    met,
                    _machine(data),
                )
            )
    return rows


def _sweep_rows(data: dict) -> list[str]:
    identical = data["max_abs_score_difference"] == 0.0
    drop = data.get("drop_lower")
    return [
        _row(
            "`sweep`" + (f" (drop lower {drop})" if drop is not None else ""),
            f"N = {data['adapters']} adapters on {data['data']}, pairs/s"
            + ("" if identical else " (**scores differ**)"),
            f"{data['shared_pairs_per_s']:.1f}",
            f"independent passes {data['independent_pairs_per_s']:.1f}",
            f"{data['speedup']:.2f}×",
            f"≥ {data['target_speedup']}×, identical scores",
            _met(data["speedup"] >= data["target_speedup"] and identical),
            _machine(data),
        )
    ]


def _recommend_rows(data: dict) -> list[str]:
    summary, seconds = data["summary"], data["seconds"]
    targets, zoo = len(data["targets"]), len(data["zoo"])
    probe = data["args"]["dev_sample"]
    rows = []
    for mode, label, cost in (
        ("similarity", "domain similarity", seconds["similarity"]),
        ("probe", f"probe of {probe} dev queries", seconds["probe"]),
    ):
        rows.append(
            _row(
                f"`recommend` {label}",
                f"top-1 / top-3 hit rate: {targets} real targets, {zoo} adapters",
                f"{summary[f'{mode}_top1_hit_rate']:.0%} / {summary[f'{mode}_top3_hit_rate']:.0%}",
                f"random pick {summary['random_top1']:.0%} / {summary['random_top3']:.0%}; "
                f"full sweep {seconds['sweep']:.0f} s",
                f"{seconds['sweep'] / cost:.1f}× cheaper than the sweep",
                "hit rate measured",
                "yes",
                _machine(data),
            )
        )
    return rows


def _transfer_rows(data: dict) -> list[str]:
    """Issue 23's targets: the ``adapt`` rule on the left-out forums, and the recommender."""
    summary, hits = data["summary"], data["hit_rate"]
    auto, n = summary["auto"], summary["auto"]["forums"]
    rule = data["auto_rule"]
    auto_met = (
        auto["at_least_zero_shot"] >= n - 1
        and auto["mean_delta"] >= 0.01
        and auto["worst"] >= -0.01
    )
    best = max(summary, key=lambda name: summary[name]["mean_delta"])
    return [
        _row(
            "`transfer` adapt rule (leave one forum out)",
            f"MAP vs zero-shot bi-encoder on {n} unseen forums (every split), rule chosen on "
            "the other 7",
            f"mean {auto['mean_delta']:+.3f}; {auto['at_least_zero_shot']}/{n} at least equal; "
            f"worst {auto['worst']:+.3f} (final rule: {rule['strategy']} at similarity "
            f">= {rule['min_similarity']})",
            f"best single strategy: {best} {summary[best]['mean_delta']:+.3f}",
            "—",
            f">= 0 on {n - 1} of {n}, mean >= +0.01, worst >= -0.01",
            _met(auto_met),
            _machine(data),
        ),
        _row(
            "`transfer` most similar forum",
            "the best single adapter on the left-out forum is the most similar forum's",
            f"top-1 {hits['top1']:.0%} / top-3 {hits['top3']:.0%}",
            f"random pick {hits['random_top1']:.0%} / {hits['random_top3']:.0%}",
            "—",
            ">= 50% / >= 85%",
            _met(hits["top1"] >= 0.5 and hits["top3"] >= 0.85),
            _machine(data),
        ),
    ]


def _hub_rows(data: dict) -> list[str]:
    rows, peer = data["rows"], data["rows"]["snapshot_download (cold)"]
    return [
        _row(
            f"`hub_pull` {label}",
            f"{data['mb']} MB adapter download, MB/s",
            f"{row['mb_per_s']:.0f}",
            f"huggingface_hub snapshot_download {peer['mb_per_s']:.0f}",
            f"{peer['best_s'] / row['best_s']:.2f}× speed",
            "—",
            "—",
            f"{data['machine']['cpu_count']} CPU cores, {data['machine']['server']}",
        )
        for label, row in rows.items()
        if label.startswith("pull")
    ]


def _quality_rows(data: dict) -> list[str]:
    summary = data["summary"]
    rows = []
    # entries trained before bi-encoders chose their length rank at 256 tokens
    era = "entries at 256 tokens" if data.get("length_table") else ""
    for forum, pick in summary["best_for_forum_chosen_on_dev"].items():
        rows.append(
            _row(
                f"`quality` {forum} (held-out{', ' + era if era else ''})",
                "MAP of the best zoo model for the forum, chosen on dev",
                f"{pick['test_map']:.3f} ({pick['chosen_on_dev']})",
                f"zero-shot all-MiniLM-L6-v2 bi-encoder {pick['zero_shot_test_map']:.3f}",
                f"{pick['gain']:+.3f} MAP",
                f"≥ +{pick['target']} MAP",
                _met(pick["gain"] >= pick["target"]),
                _machine(data),
            )
        )
    transfer = summary["no_negative_transfer"]
    met = sum(t["met"] for t in transfer.values())
    worst = min(transfer.items(), key=lambda item: item[1]["delta_map"])
    rows.append(
        _row(
            f"`quality` no negative transfer{f' ({era})' if era else ''}",
            "MAP vs zero-shot bi-encoder: unseen forum (≥ −0.01), WikiQA (> 0)",
            f"{met}/{len(transfer)} met",
            f"worst: {worst[0]} {worst[1]['delta_map']:+.3f}",
            "—",
            "all met",
            _met(met == len(transfer)),
            _machine(data),
        )
    )
    for name, entry in (data.get("length_table") or {}).get("retrained", {}).items():
        forum = entry["forum"]
        gain = entry["delta_vs_zero_shot"][forum]
        rows.append(
            _row(
                f"`quality` {forum} (held-out), current training",
                f"MAP of the forum's bi-encoder adapter as `train` now makes it ({name}: "
                f"ranks at {entry['max_length']} tokens, chosen on dev)",
                f"{entry['test_map'][forum]:.3f}",
                f"zero-shot all-MiniLM-L6-v2 bi-encoder {entry['test_map'][forum] - gain:.3f}",
                f"{gain:+.3f} MAP",
                "≥ +0.02 MAP",
                _met(gain >= 0.02),
                _machine(data),
            )
        )
    tanda = data.get("tanda_table")
    if tanda:
        gains = tanda["continued_minus_new"]
        runs = tanda["rows"]
        seeds = len(next(iter(runs.values()))["runs"])
        rows.append(
            _row(
                "`quality` TANDA with adapters (WikiQA)",
                f"WikiQA test MAP, forum adapter continued on WikiQA train vs a new adapter, "
                f"{tanda['steps']} steps each, mean of {seeds} seeds",
                ", ".join(f"{start} {runs[start]['mean_test_map']:.3f}" for start in gains),
                ", ".join(
                    f"{name} {row['mean_test_map']:.3f}"
                    for name, row in runs.items()
                    if name.startswith("new ")
                ),
                ", ".join(f"{gain:+.4f}" for gain in gains.values()),
                "every continued > new",
                _met(all(gain > 0 for gain in gains.values())),
                _machine(data),
            )
        )
    rerun = data.get("cross_rerun")
    if rerun:
        pairs = [(name, bench, maps) for name, row in rerun["rows"].items()
                 for bench, maps in row["test_map"].items()]  # fmt: skip
        worst = max(abs(maps["after"] - maps["before"]) for _, _, maps in pairs)
        rows.append(
            _row(
                "`quality` cross-encoder entries retrained (CrossEncoderTrainer)",
                "test MAP of beer-cross and bicycles-cross on beer / bicycles.meta / WikiQA, "
                "retrained on the current training path vs the recorded rows",
                "; ".join(f"{name} " + " / ".join(f"{m['after']:.3f}" for m in row["test_map"].values())
                          for name, row in rerun["rows"].items()),
                "; ".join(f"{name} " + " / ".join(f"{m['before']:.3f}" for m in row["test_map"].values())
                          for name, row in rerun["rows"].items()),
                f"largest difference {worst:.3f} MAP",
                "within ±0.02 MAP",
                _met(worst <= 0.02),
                _machine(rerun),
            )
        )  # fmt: skip
    lora = data.get("lora_table")
    if lora:
        seqbn, low_rank = lora["rows"]["beer-bi"], lora["rows"]["beer-bi-lora"]
        rows.append(
            _row(
                "`quality` LoRA vs SeqBn (beer's bi-encoder adapter)",
                f"test MAP beer / bicycles.meta and training pairs/s, {lora['steps']} steps each",
                f"LoRA {low_rank['beer_test_map']:.3f} / {low_rank['bicycles_test_map']:.3f}, "
                f"{low_rank['train_pairs_per_s']} pairs/s",
                f"SeqBn {seqbn['beer_test_map']:.3f} / {seqbn['bicycles_test_map']:.3f}, "
                f"{seqbn['train_pairs_per_s']} pairs/s",
                f"{low_rank['train_pairs_per_s'] / seqbn['train_pairs_per_s']:.2f}× speed",
                "recorded beside SeqBn",
                "—",
                _machine(lora),
            )
        )
    return rows


def _train_memory_rows(data: dict) -> list[str]:
    rows = []
    targets = data["targets"]
    for label, cases in data["runs"].items():
        for case, run in cases.items():
            share = run.get("dev_selection_share")
            # dev selection's share is a target of default runs (a 10-step run is mostly dev)
            default_run = "--max-steps" not in data["setup"]["cases"][case]
            target = f"< {targets['peak_rss_gb']} GB" + (
                f", dev ≤ {targets['dev_selection_share']}" if default_run else ""
            )
            met = run["peak_rss_gb"] < targets["peak_rss_gb"] and (
                not default_run or share is None or share <= targets["dev_selection_share"]
            )
            rows.append(
                _row(
                    f"`train_memory` {case} ({label})",
                    f"`adapter-zoo train {data['setup']['cases'][case]}` on "
                    f"{data['setup']['forum']}: peak RSS of the process tree, wall time, "
                    "dev selection's share",
                    f"{run['peak_rss_gb']:.2f} GB, {run['wall_s']:.0f} s, dev {share}",
                    "—",
                    "—",
                    target,
                    _met(met),
                    _machine(run),
                )
            )
    return rows


def _precision_rows(data: dict) -> list[str]:
    peak, scoring, targets = data["matmul"]["gflops"], data["scoring"], data["targets"]
    quality = data["quality_map"]
    maps = "; ".join(
        f"{name} MAP {row['fp32']:.4f} → {row['bf16']:.4f}"
        + (f" ({row['lists_moved']} of {row['lists']} lists moved)" if "lists" in row else "")
        for name, row in quality.items()
    )
    met = data["meets_targets"]
    date = data["machine"].get("date", "")[:10]
    hardware = _bf16_hardware(data)
    chip = hardware if data.get("gpu") else f"{data.get('cpu', 'CPU')} with {hardware}"
    cpu_flags = data.get("cpu_bf16_flags") or []
    kind = "GPU" if data.get("gpu") else (
        "AMX-BF16 CPU" if "amx_bf16" in cpu_flags else
        "AVX512-BF16 CPU" if cpu_flags else "CPU"
    )  # fmt: skip
    return [
        _row(
            f"`precision` bf16 scoring, {kind} (`sbert:minilm-l6`)",
            f"WikiQA test pairs/s (GFLOP/s, share of bf16 matmul peak {peak['bf16']:.0f}; "
            f"fp32 peak {peak['fp32']:.0f}); {maps}",
            f"bf16 {scoring['bf16']['pairs_per_s']:.0f} "
            f"({scoring['bf16']['gflops']:.0f}, {scoring['bf16']['share_of_bf16_peak']:.0%})",
            f"fp32 {scoring['fp32']['pairs_per_s']:.0f} ({scoring['fp32']['gflops']:.0f})",
            f"{data['speedup_bf16_over_fp32']:.2f}× speed",
            f"≥ {targets['speedup']}×, MAP ± {targets['map_tolerance']}, "
            f"≥ {targets['share_of_bf16_peak']:.0%} of peak",
            " / ".join(_met(met[k]) for k in ("speedup", "quality", "share_of_bf16_peak")),
            f"{_machine(data)}, {chip}, {date}",
        )
    ]


def _precision_training_rows(data: dict) -> list[str]:
    summary, tolerance = data["summary"], data["map_tolerance"]
    models = ", ".join(f"`{m}`" for m in data["models"])
    date = data["machine"].get("date", "")[:10]
    flags = _bf16_hardware(data)
    smoke = " (smoke run)" if data.get("smoke") else ""
    return [
        _row(
            f"`precision_training` bf16 training{smoke}",
            f"{models} trained in fp32 and in bf16 (same seed, taking turns), each scored in "
            f"fp32 on {summary['pairs'] // len(data['models'])} test sets: largest ΔMAP in "
            "absolute value (mean ΔMAP); training wall time fp32 / bf16",
            f"bf16-trained: max abs ΔMAP {summary['max_abs_delta']:.4f} "
            f"(mean {summary['mean_delta']:+.4f})",
            "fp32-trained",
            f"{summary['mean_speed_ratio_fp32_over_bf16']:.2f}× speed",
            f"MAP ± {tolerance}",
            _met(summary["within_tolerance"]),
            f"{_machine(data)}, {flags}, {date}",
        )
    ]


def _memory_plan_rows(data: dict) -> list[str]:
    rows = []
    for encoder, runs in data["runs"].items():
        plain, bounded = runs["plain"], runs["bounded"]
        rows.append(
            _row(
                f"`memory_plan` {encoder}-encoder",
                f"`adapter-zoo train` on {data['forum']}, {data['steps']} steps at 128 tokens "
                f"({data['precision']}): seconds per step outside dev (peak RSS), dev MAP; "
                "plain plan vs bounded (GradCache / chunks, recomputed activations)",
                f"plain {plain['s_per_step']:.1f} s ({plain['peak_rss_gb']:.2f} GB), "
                f"MAP {plain['dev_map']:.4f}",
                f"bounded {bounded['s_per_step']:.1f} s ({bounded['peak_rss_gb']:.2f} GB), "
                f"MAP {bounded['dev_map']:.4f}",
                f"{data['speedup_plain_over_bounded'][encoder]:.2f}×",
                f"≥ {data['target_ratio']}×" if encoder == "bi" else "—",
                _met(data["speedup_plain_over_bounded"][encoder] >= data["target_ratio"])
                if encoder == "bi"
                else "—",
                f"{_machine(data)}, {data['machine'].get('date', '')[:10]}",
            )
        )
    return rows


def _training_peak_rows(data: dict) -> list[str]:
    paths, peak, targets = data["paths"], data["matmul"]["gflops"], data["targets"]
    date = data["machine"].get("date", "")[:10]
    rows = []
    pairs = [("new", old) for old in ("old", "bounded") if old in paths]
    pairs += [("bf16", "new")] if "bf16" in paths else []
    for fast, old in pairs:
        ratio = data["ratios"][f"{fast}_over_{old}"]
        against_bounded = old == "bounded"
        row, peer = paths[fast], paths[old]
        what = "grouped" if fast == "new" else "bf16"
        # a record from before the bf16 path holds one precision for every path
        ran = data["precision"][fast] if isinstance(data["precision"], dict) else data["precision"]
        rows.append(
            _row(
                f"`training_peak` bi-encoder steps, {what} vs {old}",
                f"`adapter-zoo train {data['train']}` on {data['forum']}, {data['steps']} steps "
                f"({ran}): steps/s (padded share; GFLOP/s, share of the fp32 peak "
                f"{peak['fp32']:.0f} / bf16 peak {peak['bf16']:.0f}), dev MAP",
                f"{row['steps_per_s']:.3f} ({row['padded_share']:.0%}; {row['gflops']:.1f}, "
                f"{row['share_of_fp32_peak']:.0%} / {row['share_of_bf16_peak']:.0%}), "
                f"MAP {row['dev_map']:.4f}",
                f"{old} {peer['steps_per_s']:.3f} ({peer['padded_share']:.0%}; "
                f"{peer['gflops']:.1f}), MAP {peer['dev_map']:.4f}",
                f"{ratio:.2f}×",
                f"≥ {targets['ratio_over_bounded']}×, MAP ± {targets['map_tolerance']}, "
                f"≥ {targets['share_of_bf16_peak']:.0%} of bf16 peak"
                if against_bounded
                else f"MAP ± {targets['map_tolerance']}, "
                f"≥ {targets['share_of_bf16_peak']:.0%} of bf16 peak",
                " / ".join(
                    ([_met(ratio >= targets["ratio_over_bounded"])] if against_bounded else [])
                    + [
                        _met(abs(row["dev_map"] - peer["dev_map"]) <= targets["map_tolerance"]),
                        _met(row["share_of_bf16_peak"] >= targets["share_of_bf16_peak"]),
                    ]
                ),
                f"{_machine(data)}, {data.get('cpu', 'CPU')}, {date}",
            )
        )
    return rows


def _train_throughput_rows(data: dict) -> list[str]:
    """adapt's learner: each new path against today's, per target."""
    rows, date = [], data["machine"].get("date", "")[:10]
    cpu = data["machine"].get("cpu", "CPU")
    target = data["target_speedup"]
    for name, record in data["targets"].items():
        today = record["compared"]["today"]
        for path, compared in record["compared"].items():
            if path == "today":
                continue
            equal = compared.get("map_at_equal_pairs") or []
            last = equal[-1] if equal else None
            kept = last is not None and last["map"] >= last["today"] - data["map_tolerance"]
            per_pair = f"; selection MAP after {last['pairs']} pairs" if last else ""
            ours = f"{compared['pairs_per_s']:.2f} ({compared['speedup_warm']:.2f}×)"
            if last:
                ours += f"; MAP {last['map']:.3f} vs {last['today']:.3f}"
            rows.append(
                _row(
                    f"`train_throughput` {name}, {path} vs today",
                    f"adapt's own adapter on {name}'s texts: training pairs/s, 20 steps and "
                    "their evaluation (a later epoch's steps)" + per_pair,
                    ours,
                    f"today {today['pairs_per_s']:.2f}",
                    f"{compared['speedup']:.2f}×",
                    f"≥ {target}× at equal MAP per pair",
                    _met(compared["speedup"] >= target and (kept or not equal)),
                    f"{_machine(data)}, {cpu}, {date}",
                )
            )
    return rows


def _command_time_row(label: str, data: dict, measured: str) -> str:
    """A row of a command timed as a user runs it (quickstart_time.time_command's record)."""
    return _row(
        label,
        f"`{data['command']}`: {measured}",
        f"{data['wall_s']:.0f} s ({data['peak_rss_gb']:.2f} GB)",
        "—",
        "—",
        f"≤ {data['target_s']} s",
        _met(data["meets_target"]),
        f"{_machine(data)}, {data['machine'].get('date', '')[:10]}",
    )


# the target: int8 scoring where it keeps InsuranceQA's test MAP within this of fp32's
INT8_MAP_TOLERANCE = 0.005


def _quickstart_rows(data: dict) -> list[str]:
    plans = ", ".join(f"{n} {m}" for n, m in sorted(data["memory_plans"].items()))
    measured = f"wall time (peak RSS of the process tree); memory plans: {plans}"
    stages = data.get("stage_seconds")  # recorded since the quickstart times its stages
    if stages:
        measured += "; stages: " + ", ".join(f"{s} {t:.0f} s" for s, t in stages.items())
    adapted = data.get("adapt")  # an older record has none
    if adapted:
        measured += f"; adapt chose `{adapted['chosen']}` in {adapted['spent_s']:.0f} s"
    for host, row in (data.get("verdict") or {}).items():
        gains = []
        for model, against in row["gains"].items():
            # the quickstart's no-training baseline (recipes.quickstart.fused of its base)
            delta = against[FUSED]
            low, high = delta["interval"]
            gains.append(f"{model} {delta['delta']:+.3f} [{low:+.3f}, {high:+.3f}]")
        measured += (
            f"; on {host.split('.stackexchange')[0]} ({row['questions']} test questions) vs "
            f"the base fused with BM25 {row['map'][FUSED]:.3f}: " + ", ".join(gains)
        )
    if "target_gb" not in data:
        return [_command_time_row("`quickstart_time` quickstart", data, measured)]
    return [
        _row(
            "`quickstart_time` quickstart",
            f"`{data['command']}`: {measured}",
            f"{data['wall_s']:.0f} s ({data['peak_rss_gb']:.2f} GB)",
            "—",
            "—",
            f"≤ {data['target_s']} s, ≤ {data['target_gb']:g} GB",
            f"{_met(data['meets_target'])} / {_met(data['meets_memory_target'])}",
            f"{_machine(data)}, {data['machine'].get('cpu', 'CPU')}{_shared(data)}, "
            f"{data['machine'].get('date', '')[:10]}",
        )
    ]


def _shared(data: dict) -> str:
    """`` (shared: load N)`` when other work ran beside a timed command (the 1-minute load
    average before it above the cores it had): its time is not a quiet machine's. The load
    after it is the command's own (a quiet 2-core run of the quickstart leaves 2.2)."""
    load = (data.get("load_average_1m") or {}).get("before", 0)
    cores = data.get("machine", {}).get("cpu_count") or 1
    return f" (shared: load {load:.1f})" if load > cores else ""


def _adapt_time_rows(data: dict) -> list[str]:
    measured = (
        "parse, training and decision, wall time (peak RSS of the process tree); "
        f"chose `{data['chosen']}`"
    )
    return [_command_time_row("`adapt_time` adapt", data, measured)]


def _insuranceqa_rows(data: dict) -> list[str]:
    """Scoring InsuranceQA's test split with the zero-shot bi-encoder (``insuranceqa.py``),
    and in int8 against it (the issue's bar: MAP within :data:`INT8_MAP_TOLERANCE`)."""
    from benchmarks.perf.insuranceqa import ZERO_SHOT, row_name

    row = data["rows"].get(ZERO_SHOT)
    if row is None:
        return []

    def machine(scored: dict) -> str:
        # each row's own load as it began (1, 5, 15-minute averages): how shared it ran
        load = scored.get("load_average") or data["load_average"]["before"]
        cpu = data["machine"].get("cpu", "")
        return f"{_machine(data)}, {cpu}, load {load[1]:.1f}, {scored.get('date', '')[:10]}"

    measured = (
        f"`sbert:minilm-l6` scoring InsuranceQA test ({data['queries']:,} questions × 500, "
        f"{row['texts_encoded']:,} texts embedded for {data['distinct_texts']:,} distinct), "
        "wall time (peak RSS)"
    )
    rows = [
        _row(
            "`insuranceqa` zero-shot bi-encoder",
            measured,
            f"{row['seconds']:.0f} s ({row['peak_rss_mib'] / 1024:.2f} GB)",
            "—",
            "—",
            f"≤ {data['targets']['bi_encoder_minutes']} min",
            _met(data["met"]["bi_encoder_minutes"]),
            machine(row),
        )
    ]
    int8 = data["rows"].get(row_name(ZERO_SHOT, "int8"))
    if int8 is not None:
        lost = row["map"] - int8["map"]
        rows.append(
            _row(
                "`insuranceqa` zero-shot bi-encoder, int8",
                "the same through ONNX Runtime's int8: wall time (peak RSS); MAP lost",
                f"{int8['seconds']:.0f} s ({int8['peak_rss_mib'] / 1024:.2f} GB); {lost:+.4f}",
                f"fp32 {row['seconds']:.0f} s",
                f"{row['seconds'] / int8['seconds']:.2f}×",
                f"MAP within {INT8_MAP_TOLERANCE}",
                _met(abs(lost) <= INT8_MAP_TOLERANCE),
                machine(int8),
            )
        )
    return rows


def table() -> str:
    lines = list(HEADER)
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        name = data.get("benchmark", path.stem)
        if name == "parse_throughput":
            lines += _parse_rows(path.stem, data)
        elif path.stem.startswith("train_infer"):
            lines += _train_infer_rows(data)
        elif name == "cascade":
            lines += _cascade_rows(data)
        elif name == "sweep":
            lines += _sweep_rows(data)
        elif name == "hub_pull":
            lines += _hub_rows(data)
        elif name == "recommend":
            lines += _recommend_rows(data)
        elif name == "transfer":
            lines += _transfer_rows(data)
        elif name == "quality" and "summary" in data:
            lines += _quality_rows(data)
        elif path.stem == "train_memory":
            lines += _train_memory_rows(data)
        elif name == "precision":
            lines += _precision_rows(data)
        elif name == "precision_training":
            lines += _precision_training_rows(data)
        elif name == "memory_plan":
            lines += _memory_plan_rows(data)
        elif name == "training_peak":
            lines += _training_peak_rows(data)
        elif name == "train_throughput":
            lines += _train_throughput_rows(data)
        elif name == "quickstart_time":
            lines += _quickstart_rows(data)
        elif name == "adapt_time":
            lines += _adapt_time_rows(data)
        elif name == "insuranceqa":
            lines += _insuranceqa_rows(data)
    return "\n".join(lines)


def main(argv=None) -> int:
    from benchmarks.report.tables import stale_pages, write_pages

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print the table, change nothing")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if a page's tables are stale"
    )
    args = parser.parse_args(argv)
    if args.print:
        print(table())
        return 0
    if args.check:
        stale = stale_pages()
        for path in stale:
            print(f"stale tables: {path.relative_to(ROOT)}")
        return 1 if stale else 0
    for path in write_pages():
        print(f"updated {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
