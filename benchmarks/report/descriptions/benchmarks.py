"""The benchmarks' tables (docs/benchmarks.md, the README's InsuranceQA): our rows from the
recorded JSON beside the registry's recorded (``expected``) and published scores."""

from __future__ import annotations

import re

import benchmarks
from benchmarks.report import render
from benchmarks.report.render import Column, Rows, Table, interval
from benchmarks.studies.insuranceqa import FUSED, ZERO_SHOT, row_name
from benchmarks.studies.outside_study import MULTITASK

SEMEVAL = ("semeval2016", "semeval2017")
_SEMEVAL_RUNS = {"semeval": "`adapt` on QatarLiving's train and dev questions, empty zoo",
                 "semeval_zoo": "`adapt` on the same, the eight forum adapters as its zoo"}  # fmt: skip


# a row is a model named by any of three sources (published, recorded, adapt_study.json),
# its cells gathered from each before the rows are known
def _semeval_rows(study: dict) -> list[list]:
    cells: dict[str, dict[str, str]] = {}

    def put(row: str, column: str, value: str) -> None:
        cells.setdefault(row, {})[column] = value

    for column in SEMEVAL:
        bench = benchmarks.get(column)
        for ref in bench.published:
            if ref.split != "test":
                continue
            label = {"ir-baseline": "IR baseline (the task's search engine order)"}.get(
                ref.model, ref.model
            )
            value = f"{100 * ref.metrics['map']:.2f}"
            system = re.fullmatch(r"(best system of the challenge) \((.+)\)", label)
            if system:  # one row for the challenge's best, whichever system it was
                label, value = system[1], f"{value} ({system[2]})"
            put(label, column, value)
        for (model, split), metrics in bench.expected.items():
            if split == "test":
                put(f"`{model}` (ours)", column, f"{100 * metrics['map']:.2f}")
    for key, label in _SEMEVAL_RUNS.items():  # adapt_study.py's rows: adapt's model, each test
        for column in SEMEVAL:
            for model, value in ((study.get(key) or {}).get(column) or {}).items():
                if model.startswith("adapt-"):
                    put(f"{label} (ours, adapt_study.json)", column, f"{100 * value:.2f}")
    return [[label, *(values.get(c, "–") for c in SEMEVAL)] for label, values in cells.items()]


# SemEval task 3 subtask B test MAP (points): the registry's recorded and published scores,
# and the model ``adapt`` made from QatarLiving's questions (``adapt_study.json``).
SEMEVAL_TABLE = Table(
    marker="semeval",
    source="adapt_study",
    columns=(Column("model"), Column("SemEval 2016 test", align="---:"),
             Column("SemEval 2017 test (ours: bodies only)", align="---:")),
    rows=_semeval_rows,
)  # fmt: skip

OUTSIDE = ("arguana-01", "arguana-02", "arguana-05", "mediqa2019")
OUTSIDE_METRICS = ("map", "mrr", "p@1")


# a row is a model of the registry's recorded or published scores of any of the sets
def _outside_rows(_: dict) -> list[list]:
    cells: dict[str, dict[str, str]] = {}
    for column in OUTSIDE:
        bench = benchmarks.get(column)
        recorded = [
            (f"`{model}` (ours)", metrics)
            for (model, split), metrics in bench.expected.items()
            if split == "test"
        ]
        published = [(f"{ref.model} [{ref.source}]", ref.metrics)
                     for ref in bench.published if ref.split == "test"]  # fmt: skip
        for label, metrics in recorded + published:
            values = (f"{metrics[m]:.3f}" if m in metrics else "–" for m in OUTSIDE_METRICS)
            cells.setdefault(label, {})[column] = " / ".join(values)
    return [[label, *(values.get(c, "–") for c in OUTSIDE)] for label, values in cells.items()]


# Test MAP / MRR / P@1 on the sets outside the base model's domain (ArguAna, MEDIQA 2019
# Task 3): the registry's recorded and published scores; "–" where a source gives none.
OUTSIDE_TABLE = Table(
    marker="outside",
    source=dict,  # the registry's scores only
    columns=(Column("model (test MAP / MRR / P@1)"),
             *(Column(name, align="---:") for name in OUTSIDE)),
    rows=_outside_rows,
)  # fmt: skip

# the in-domain model's entry, as docs/benchmarks.md says to train it (evaluate --finetune)
INSURANCEQA_IN_DOMAIN = "insuranceqa-indomain"
INSURANCEQA_LABELS = {
    "bm25": "`bm25`",
    "sbert:minilm-l6": "zero-shot all-MiniLM-L6-v2 bi-encoder (`sbert:minilm-l6`)",
    "fusion:sbert:minilm-l6*0.9+bm25*0.1": "zero-shot base fused with BM25 "
    "(`fusion:sbert:minilm-l6*0.9+bm25*0.1`)",
    MULTITASK: "forum zoo's multi-task adapter (eight shipped forums; zero-shot here)",
    INSURANCEQA_IN_DOMAIN: "in-domain: an adapter fine-tuned on the 12,889 training "
    "questions (`evaluate --finetune adapter`)",
}


def _insuranceqa_label(key: str, row: dict) -> str:
    """A row's model: its label, or what ``adapt`` did to make it."""
    model, _, precision = key.partition(" [")
    if "adapt" in row and "strategy" in row["adapt"]:  # by similarity: nothing trained
        return (f"forum zoo, `adapt --strategy {row['adapt']['requested']}`: chose "
                + ", ".join(f"`{m}`" for m in row["adapt"]["members"]))  # fmt: skip
    if "adapt" in row:
        adapt = row["adapt"]
        runs = (adapt["training"].get("runs") or {}).values()
        steps = sum(r["steps_run"] for r in runs)
        return (f"`adapt` from InsuranceQA's own texts, {adapt['budget_minutes']:g}-minute "
                f"budget: {steps} steps trained, chose `{adapt['chosen']}`")  # fmt: skip
    return INSURANCEQA_LABELS.get(model, f"`{model}`") + (f" [{precision}" if precision else "")


def _insuranceqa_record() -> dict:
    """``insuranceqa.json`` with the registry's published rows beside its own."""
    published = benchmarks.get("insuranceqa").published
    return {**render.load("insuranceqa"),
            "published": [{"model": ref.model, **ref.metrics} for ref in published]}  # fmt: skip


def _insuranceqa_p1(data: dict) -> str:
    smoke = f": a smoke run, the first {data['limit']}" if data["limit"] else ""
    return f"test P@1 ({data['queries']:,} questions{smoke})"


# InsuranceQA v2 test (1,625 questions, 500 candidates each): our rows in points, P@1 and
# MAP, beside MultiCQA's published accuracies (the registry's ``published``, P@1 only).
INSURANCEQA = Table(
    marker="insuranceqa",
    source=_insuranceqa_record,
    columns=(Column("model"), Column("source"), Column(_insuranceqa_p1, align="---:"),
             Column("test MAP", align="---:")),
    rows=(
        Rows("rows.<row>", cells=(
            lambda r: _insuranceqa_label(r["row"].key, r["row"].value), "ours",
            lambda r: f"{100 * r['row']['p@1']:.1f}", lambda r: f"{100 * r['row']['map']:.1f}")),
        Rows("published.<ref>", cells=(
            "{ref[model]}", "published", lambda r: f"{100 * r['ref']['p@1']:.1f}", "–")),
    ),
)  # fmt: skip

BEIR_LABELS = {
    "bm25": "`bm25` (bm25s: k1=1.5, b=0.75, no stemming)",
    "sbert:minilm-l6": "zero-shot all-MiniLM-L6-v2 bi-encoder (`sbert:minilm-l6`)",
    "fusion:sbert:minilm-l6*0.9+bm25*0.1": "zero-shot base fused with BM25 "
    "(`fusion:sbert:minilm-l6*0.9+bm25*0.1`), re-ranking the union of their top 100",
}


def _metric_cells(metrics) -> tuple:
    """MAP, MRR@10 and Recall@100 of the metrics ``metrics(row)`` gives; "–" where none."""

    def cell(name: str):
        return lambda r: f"{metrics(r)[name]:.3f}" if name in metrics(r) else "–"

    return tuple(cell(name) for name in ("map", "mrr@10", "recall@100"))


def _beir_vs_fused(r) -> str:
    paired = r["row"].get("ndcg@10_vs_fused")
    return interval(paired) if paired else "–"


def _beir_ndcg(data: dict) -> str:
    limit = data["arguments"]["limit"]
    smoke = f", a smoke run: the first {limit}" if limit else ""
    return (f"nDCG@10 [95%] ({data['queries']:,} queries, {data['folder']['documents']:,} "
            f"documents{smoke})")  # fmt: skip


# ArguAna's test debates as a BEIR folder, scored through ``beir:``: our rows with the 95%
# bootstrap interval of nDCG@10 and its paired difference from the fused base, bm25s at
# Pyserini's settings on the same folder, and the published BM25 numbers on BEIR's.
BEIR_ARGUANA = Table(
    marker="beir-arguana",
    source="beir_arguana",
    columns=(Column("model"), Column("source"), Column(_beir_ndcg, align="---:"),
             *(Column(header, align="---:") for header in (
                 "− fused base, paired [95%]", "MAP", "MRR@10", "Recall@100",
                 "seconds ({machine[cpu_count]} cores)"))),
    rows=(
        Rows("rows.<row>", cells=(
            lambda r: BEIR_LABELS.get(r["row"].key, f"`{r['row'].key}`"), "ours",
            "{row[metrics][ndcg@10]:.3f} [{row[ndcg@10_interval][0]:.3f}, "
            "{row[ndcg@10_interval][1]:.3f}]",
            _beir_vs_fused, *_metric_cells(lambda r: r["row"]["metrics"]), "{row[seconds]:.0f}",
        )),
        # a model the table names but the record lacks says so
        *(Rows(cells=(label, "not in this record", "–", "–", "–", "–", "–", ""),
               where=lambda r, model=model: model not in r["rows"])
          for model, label in BEIR_LABELS.items()),
        Rows("bm25s_at_pyserini_settings.<bm25s>", cells=(
            "{bm25s.key}", "ours, same folder", "{bm25s[ndcg@10]:.3f}", "–",
            *_metric_cells(lambda r: r["bm25s"].value), "")),
        Rows("published.<ref>", cells=(
            "{ref[model]}", "published, BEIR's folder", "{ref[metrics][ndcg@10]:.3f}", "–",
            *_metric_cells(lambda r: r["ref"]["metrics"]), "")),
    ),
)  # fmt: skip


# each row is a kind of model, ours and MultiCQA's published found by name in the rows
def _readme_insuranceqa_rows(data: dict) -> list[list]:
    rows = data["rows"]
    published = benchmarks.get("insuranceqa").published

    def ours(key: str) -> str:
        if key not in rows:
            return "–"
        int8 = rows.get(row_name(key, "int8"))
        return f"{100 * rows[key]['p@1']:.1f}" + (
            f" (int8 {100 * int8['p@1']:.1f})" if int8 else ""
        )

    def theirs(kind: str, forums: bool | None = None) -> str:
        """Published rows of ``kind``; ``forums``: only MultiCQA's (trained on forums), or
        only the others."""
        refs = [r for r in published if kind in r.model]
        if forums is not None:
            refs = [r for r in refs if r.model.startswith("MultiCQA") == forums]
        return (
            ", ".join(
                f"{r.model.replace(f' ({kind})', '')} {100 * r.metrics['p@1']:.1f}" for r in refs
            )
            or "–"
        )

    def latest(by_similarity: bool) -> tuple[str, dict] | None:
        made = [(k, r) for k, r in rows.items() if "adapt" in r]
        made = [(k, r) for k, r in made if ("strategy" in r["adapt"]) == by_similarity]
        return made[-1] if made else None

    adapt_row = ["`adapt` from its own texts, empty zoo", "–", "–"]
    if (learned := latest(by_similarity=False)) is not None:
        key, row = learned
        adapt = row["adapt"]
        entries = adapt.get("zoo_entries") or []
        zoo = f"a zoo of {len(entries)}" if entries else "empty zoo"
        adapt_row = [f"`adapt` from its own texts, {zoo} ({adapt['budget_minutes']:g} "
                     f"minutes; chose `{adapt['chosen']}`)", ours(key), "–"]  # fmt: skip
    # the zoo's single adapter for the domain, picked by similarity (no label read)
    nearest_row = ["forum zoo's nearest adapter (`adapt --strategy nearest`)", "–", "–"]
    if (nearest := latest(by_similarity=True)) is not None:
        key, row = nearest
        chose = ", ".join(f"`{m}`" for m in row["adapt"]["members"])
        nearest_row = [f"forum zoo's nearest adapter (`adapt --strategy "
                       f"{row['adapt']['requested']}`: {chose})", ours(key), "–"]  # fmt: skip
    return [
        ["BM25", ours("bm25"), theirs("IR baseline")],
        ["zero-shot bi-encoder", ours(ZERO_SHOT), theirs("zero-shot", forums=False)],
        ["zero-shot bi-encoder fused with BM25", ours(FUSED), "–"],
        ["forum zoo's multi-task adapter (eight forums; MultiCQA's: 140)", ours(MULTITASK),
         theirs("zero-shot", forums=True)],
        nearest_row,
        adapt_row,
        ["in-domain (fine-tuned on its 12,889 training questions)",
         ours(INSURANCEQA_IN_DOMAIN), theirs("in-domain")],
    ]  # fmt: skip


# The README's InsuranceQA v2: our P@1 by kind of model beside MultiCQA's published
# accuracies of the same kind ("–" where a kind has no row).
README_INSURANCEQA = Table(
    marker="readme-insuranceqa",
    source="insuranceqa",
    columns=(Column("InsuranceQA v2 test, P@1 ({queries:,} questions, 500 candidates)"),
             Column("ours (MiniLM)"), Column("MultiCQA's Table 4 (published)")),
    rows=_readme_insuranceqa_rows,
)  # fmt: skip
