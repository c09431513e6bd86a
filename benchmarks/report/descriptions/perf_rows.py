"""The performance table's rows that no description says: a benchmark whose rows, targets
and verdicts are worked out from several fields of its record (``perf.py`` names them).

Each function takes a record and returns its rows' cells, in the performance table's eight
columns (benchmark, measured, ours, peer, ratio, target, met, machine).
"""

from __future__ import annotations

from benchmarks.report.render import met as _met

Cells = tuple[str, ...]


def ran_on(data: dict) -> str:
    """The machine column: the GPU, or the CPU cores the run had."""
    machine = data.get("machine", {})
    if data.get("gpu"):
        return data["gpu"]
    cores, threads = machine.get("cpu_count", "?"), machine.get("torch_threads")
    # a run pinned to fewer cores than the machine has (taskset) says so
    used = f"{threads} of {cores}" if threads and threads != cores else cores
    return f"{used} CPU cores" + (", CUDA" if machine.get("cuda") else "")


def bf16_hardware(data: dict) -> str:
    """What multiplied bf16 in a precision record's run: a GPU's tensor cores or the CPU's
    bf16 flags."""
    if data.get("gpu"):
        return "bf16 tensor cores"
    return "+".join(data.get("cpu_bf16_flags") or []) or "no bf16"


# the rule's verdict joins three summary numbers, and the best strategy is a max
def transfer_rows(data: dict) -> list[Cells]:
    """The ``adapt`` rule on the left-out forums, and the most similar forum's adapter."""
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
        (
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
            ran_on(data),
        ),
        (
            "`transfer` most similar forum",
            "the best single adapter on the left-out forum is the most similar forum's",
            f"top-1 {hits['top1']:.0%} / top-3 {hits['top3']:.0%}",
            f"random pick {hits['random_top1']:.0%} / {hits['random_top3']:.0%}",
            "—",
            ">= 50% / >= 85%",
            _met(hits["top1"] >= 0.5 and hits["top3"] >= 0.85),
            ran_on(data),
        ),
    ]


# each optional part of the record (length, TANDA, cross rerun, LoRA) adds its rows
def quality_rows(data: dict) -> list[Cells]:
    summary = data["summary"]
    rows = []
    # entries trained before bi-encoders chose their length rank at 256 tokens
    era = "entries at 256 tokens" if data.get("length_table") else ""
    for forum, pick in summary["best_for_forum_chosen_on_dev"].items():
        rows.append(
            (
                f"`quality` {forum} (held-out{', ' + era if era else ''})",
                "MAP of the best zoo model for the forum, chosen on dev",
                f"{pick['test_map']:.3f} ({pick['chosen_on_dev']})",
                f"zero-shot all-MiniLM-L6-v2 bi-encoder {pick['zero_shot_test_map']:.3f}",
                f"{pick['gain']:+.3f} MAP",
                f"≥ +{pick['target']} MAP",
                _met(pick["gain"] >= pick["target"]),
                ran_on(data),
            )
        )
    transfer = summary["no_negative_transfer"]
    met = sum(t["met"] for t in transfer.values())
    worst = min(transfer.items(), key=lambda item: item[1]["delta_map"])
    rows.append(
        (
            f"`quality` no negative transfer{f' ({era})' if era else ''}",
            "MAP vs zero-shot bi-encoder: unseen forum (≥ −0.01), WikiQA (> 0)",
            f"{met}/{len(transfer)} met",
            f"worst: {worst[0]} {worst[1]['delta_map']:+.3f}",
            "—",
            "all met",
            _met(met == len(transfer)),
            ran_on(data),
        )
    )
    for name, entry in (data.get("length_table") or {}).get("retrained", {}).items():
        forum = entry["forum"]
        gain = entry["delta_vs_zero_shot"][forum]
        rows.append(
            (
                f"`quality` {forum} (held-out), current training",
                f"MAP of the forum's bi-encoder adapter as `train` now makes it ({name}: "
                f"ranks at {entry['max_length']} tokens, chosen on dev)",
                f"{entry['test_map'][forum]:.3f}",
                f"zero-shot all-MiniLM-L6-v2 bi-encoder {entry['test_map'][forum] - gain:.3f}",
                f"{gain:+.3f} MAP",
                "≥ +0.02 MAP",
                _met(gain >= 0.02),
                ran_on(data),
            )
        )
    tanda = data.get("tanda_table")
    if tanda:
        gains = tanda["continued_minus_new"]
        runs = tanda["rows"]
        seeds = len(next(iter(runs.values()))["runs"])
        rows.append(
            (
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
                ran_on(data),
            )
        )
    rerun = data.get("cross_rerun")
    if rerun:
        pairs = [(name, bench, maps) for name, row in rerun["rows"].items()
                 for bench, maps in row["test_map"].items()]  # fmt: skip
        worst = max(abs(maps["after"] - maps["before"]) for _, _, maps in pairs)
        rows.append(
            (
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
                ran_on(rerun),
            )
        )  # fmt: skip
    lora = data.get("lora_table")
    if lora:
        seqbn, low_rank = lora["rows"]["beer-bi"], lora["rows"]["beer-bi-lora"]
        rows.append(
            (
                "`quality` LoRA vs SeqBn (beer's bi-encoder adapter)",
                f"test MAP beer / bicycles.meta and training pairs/s, {lora['steps']} steps each",
                f"LoRA {low_rank['beer_test_map']:.3f} / {low_rank['bicycles_test_map']:.3f}, "
                f"{low_rank['train_pairs_per_s']} pairs/s",
                f"SeqBn {seqbn['beer_test_map']:.3f} / {seqbn['bicycles_test_map']:.3f}, "
                f"{seqbn['train_pairs_per_s']} pairs/s",
                f"{low_rank['train_pairs_per_s'] / seqbn['train_pairs_per_s']:.2f}× speed",
                "recorded beside SeqBn",
                "—",
                ran_on(lora),
            )
        )
    return rows


# the chip's kind and the three verdicts are read off the hardware flags
def precision_rows(data: dict) -> list[Cells]:
    peak, scoring, targets = data["matmul"]["gflops"], data["scoring"], data["targets"]
    quality = data["quality_map"]
    maps = "; ".join(
        f"{name} MAP {row['fp32']:.4f} → {row['bf16']:.4f}"
        + (f" ({row['lists_moved']} of {row['lists']} lists moved)" if "lists" in row else "")
        for name, row in quality.items()
    )
    met = data["meets_targets"]
    date = data["machine"].get("date", "")[:10]
    hardware = bf16_hardware(data)
    chip = hardware if data.get("gpu") else f"{data.get('cpu', 'CPU')} with {hardware}"
    cpu_flags = data.get("cpu_bf16_flags") or []
    kind = "GPU" if data.get("gpu") else (
        "AMX-BF16 CPU" if "amx_bf16" in cpu_flags else
        "AVX512-BF16 CPU" if cpu_flags else "CPU"
    )  # fmt: skip
    return [
        (
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
            f"{ran_on(data)}, {chip}, {date}",
        )
    ]


# the pairs of paths compared are those the record holds
def training_peak_rows(data: dict) -> list[Cells]:
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
            (
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
                f"{ran_on(data)}, {data.get('cpu', 'CPU')}, {date}",
            )
        )
    return rows


# a path's verdict needs its last equal-pairs MAP, when it has one
def train_throughput_rows(data: dict) -> list[Cells]:
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
                (
                    f"`train_throughput` {name}, {path} vs today",
                    f"adapt's own adapter on {name}'s texts: training pairs/s, 20 steps and "
                    "their evaluation (a later epoch's steps)" + per_pair,
                    ours,
                    f"today {today['pairs_per_s']:.2f}",
                    f"{compared['speedup']:.2f}×",
                    f"≥ {target}× at equal MAP per pair",
                    _met(compared["speedup"] >= target and (kept or not equal)),
                    f"{ran_on(data)}, {cpu}, {date}",
                )
            )
    return rows
