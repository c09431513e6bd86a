"""The performance table's rows of runs timed end to end: a command as a user runs it
(``quickstart_time``, ``adapt_time``) and InsuranceQA's test split scored whole
(``insuranceqa``); row functions of the record, as in ``perf_rows``."""

from __future__ import annotations

from benchmarks.report.descriptions.perf_rows import Cells, ran_on
from benchmarks.report.render import met as _met
from benchmarks.studies.adapt_study import FUSED
from benchmarks.studies.insuranceqa import ZERO_SHOT, row_name


def command_time_row(label: str, data: dict, measured: str) -> Cells:
    """A row of a command timed as a user runs it (quickstart_time.time_command's record)."""
    return (
        label,
        f"`{data['command']}`: {measured}",
        f"{data['wall_s']:.0f} s ({data['peak_rss_gb']:.2f} GB)",
        "—",
        "—",
        f"≤ {data['target_s']} s",
        _met(data["meets_target"]),
        f"{ran_on(data)}, {data['machine'].get('date', '')[:10]}",
    )


# the target: int8 scoring where it keeps InsuranceQA's test MAP within this of fp32's
INT8_MAP_TOLERANCE = 0.005


# the measured cell gathers the stages, adapt's choice and each host's gains it has
def quickstart_rows(data: dict) -> list[Cells]:
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
        return [command_time_row("`quickstart_time` quickstart", data, measured)]
    return [
        (
            "`quickstart_time` quickstart",
            f"`{data['command']}`: {measured}",
            f"{data['wall_s']:.0f} s ({data['peak_rss_gb']:.2f} GB)",
            "—",
            "—",
            f"≤ {data['target_s']} s, ≤ {data['target_gb']:g} GB",
            f"{_met(data['meets_target'])} / {_met(data['meets_memory_target'])}",
            f"{ran_on(data)}, {data['machine'].get('cpu', 'CPU')}{shared(data)}, "
            f"{data['machine'].get('date', '')[:10]}",
        )
    ]


def shared(data: dict) -> str:
    """`` (shared: load N)`` when other work ran beside a timed command (the 1-minute load
    average before it above the cores it had): its time is not a quiet machine's. The load
    after it is the command's own (a quiet 2-core run of the quickstart leaves 2.2)."""
    load = (data.get("load_average_1m") or {}).get("before", 0)
    cores = data.get("machine", {}).get("cpu_count") or 1
    return f" (shared: load {load:.1f})" if load > cores else ""


# a timed command's row, as the quickstart's (command_time_row)
def adapt_time_rows(data: dict) -> list[Cells]:
    measured = (
        "parse, training and decision, wall time (peak RSS of the process tree); "
        f"chose `{data['chosen']}`"
    )
    return [command_time_row("`adapt_time` adapt", data, measured)]


# the int8 row is there only beside the fp32 one, compared with it
def insuranceqa_rows(data: dict) -> list[Cells]:
    """Scoring InsuranceQA's test split with the zero-shot bi-encoder (``insuranceqa.py``),
    and in int8 against it (the bar: MAP within :data:`INT8_MAP_TOLERANCE`)."""

    row = data["rows"].get(ZERO_SHOT)
    if row is None:
        return []

    def where(scored: dict) -> str:
        # each row's own load as it began (1, 5, 15-minute averages): how shared it ran
        load = scored.get("load_average") or data["load_average"]["before"]
        cpu = data["machine"].get("cpu", "")
        return f"{ran_on(data)}, {cpu}, load {load[1]:.1f}, {scored.get('date', '')[:10]}"

    measured = (
        f"`sbert:minilm-l6` scoring InsuranceQA test ({data['queries']:,} questions × 500, "
        f"{row['texts_encoded']:,} texts embedded for {data['distinct_texts']:,} distinct), "
        "wall time (peak RSS)"
    )
    rows = [
        (
            "`insuranceqa` zero-shot bi-encoder",
            measured,
            f"{row['seconds']:.0f} s ({row['peak_rss_mib'] / 1024:.2f} GB)",
            "—",
            "—",
            f"≤ {data['targets']['bi_encoder_minutes']} min",
            _met(data["met"]["bi_encoder_minutes"]),
            where(row),
        )
    ]
    int8 = data["rows"].get(row_name(ZERO_SHOT, "int8"))
    if int8 is not None:
        lost = row["map"] - int8["map"]
        rows.append(
            (
                "`insuranceqa` zero-shot bi-encoder, int8",
                "the same through ONNX Runtime's int8: wall time (peak RSS); MAP lost",
                f"{int8['seconds']:.0f} s ({int8['peak_rss_mib'] / 1024:.2f} GB); {lost:+.4f}",
                f"fp32 {row['seconds']:.0f} s",
                f"{row['seconds'] / int8['seconds']:.2f}×",
                f"MAP within {INT8_MAP_TOLERANCE}",
                _met(abs(lost) <= INT8_MAP_TOLERANCE),
                where(int8),
            )
        )
    return rows
