"""The reliability campaigns (docs/reliability.md): the crash campaign and the fuzzing."""

from __future__ import annotations

from benchmarks.report.render import Column, Rows, Table

CRASH_COMMANDS = {
    "parse": "`parse` (3 forums, `--workers 1`)",
    "parse-pool": "`parse` (3 forums, 2 worker processes)",
    "train-bi": "`train` bi-encoder adapter",
    "train-cross": "`train` cross-encoder adapter",
    "adapt": "`adapt --strategy soup`",
    "build": "`build` (a forum's entry from its dump)",
    "build-benchmark": "`build-benchmark`",
    "evaluate": "`evaluate` (3 models)",
    "compose": "`compose` (fusion chosen on dev)",
    "push": "`push` (to olah's repositories)",
    "pull": "`pull` (from olah)",
    "run": "`run multicqa_indomain_bert --smoke`",
}


def _total(group: str, field: str):
    """The sum of ``field`` over the record's ``group``."""
    return lambda r: sum(row[field] for row in r[group].values())


# The crash campaign (``crash_campaign.json``): per command, the kills (at a seeded fraction
# of the run's time, or right after its k-th file-system change), the trials whose every
# check held, and what the uninterrupted run took.
CRASH = Table(
    marker="crash",
    source="crash_campaign",
    columns=(
        Column("command", lambda r: CRASH_COMMANDS.get(r["run"].key, f"`{r['run'].key}`")),
        Column("kills", "{run[kills]}", "--:"),
        Column("by time", lambda r: r["run"]["kills_by_kind"].get("clock", 0), "--:"),
        Column("after a write", lambda r: r["run"]["kills_by_kind"].get("io", 0), "--:"),
        Column("trials that held", "{run[survived]} of {run[trials]}", "--:"),
        Column("uninterrupted s", "{run[uninterrupted_seconds]:.0f}", "--:"),
        Column("file-system changes", "{run[file_system_changes]}", "--:"),
    ),
    rows=(
        Rows("commands.<run>"),
        Rows(cells=("**all**", lambda r: f"**{_total('commands', 'kills')(r)}**", "", "",
                    lambda r: f"**{_total('commands', 'survived')(r)} of "
                    f"{_total('commands', 'trials')(r)}**", "", "")),
    ),
)  # fmt: skip


def _fuzz_all(r) -> str:
    readers, machine, target = r["readers"], r["machine"], r["target_inputs_per_reader"]
    reached = sum(row["inputs"] >= target for row in readers.values())
    return (f"**all** ({r['tool'].split(',')[0]}; {machine['cpu']}, {machine['cpu_count']} "
            f"cores, {machine['date'][:10]}, {r['hours']} h; {reached} of {len(readers)} "
            f"readers reached {target:,} inputs)")  # fmt: skip


# The fuzzing campaign (``fuzz_campaign.json``): per reader, the inputs Atheris ran, the
# project's lines and arcs its seeds reach and those its corpus reaches, the findings and the
# seconds; then the whole campaign with its chip, date and hours, and how many readers
# reached the inputs aimed at.
FUZZ = Table(
    marker="fuzz",
    source="fuzz_campaign",
    columns=(
        Column("reader", "`{reader.key}`: {reader[what]}"),
        Column("inputs", "{reader[inputs]:,}", "--:"),
        Column("lines: seeds → corpus",
               "{reader[coverage][seeds][lines]:,} → {reader[coverage][corpus][lines]:,}", "--:"),
        Column("arcs: seeds → corpus",
               "{reader[coverage][seeds][arcs]:,} → {reader[coverage][corpus][arcs]:,}", "--:"),
        Column("corpus files", "{reader[corpus]}", "--:"),
        Column("findings", lambda r: len(r["reader"]["findings"]), "--:"),
        Column("seconds", "{reader[seconds]:.0f}", "--:"),
    ),
    rows=(
        Rows("readers.<reader>"),
        Rows(cells=(_fuzz_all, lambda r: f"**{_total('readers', 'inputs')(r):,}**", "", "", "",
                    lambda r: f"**{sum(len(row['findings']) for row in r['readers'].values())}**",
                    "")),
    ),
)  # fmt: skip
