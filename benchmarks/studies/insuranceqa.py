"""InsuranceQA v2: the zero-shot rows beside MultiCQA's Table 4, and their cost.

The test split's 1,625 questions, each against its 500 released SOLR candidates (812,500
pairs), scored in one run by

* ``bm25`` (the benchmark's scope: each query's own candidates);
* ``sbert:minilm-l6``: the zero-shot all-MiniLM-L6-v2 bi-encoder at its 256 tokens;
* ``fusion:sbert:minilm-l6*0.9+bm25*0.1``: the zero-shot base fused with BM25 (per-query
  z-scores), as ``outside_study.py`` fuses it; its bi-encoder member takes the scores the row
  before computed (``benchmarks.evaluate.ScoredModels``), so nothing is encoded twice;

and any other model name given (``--models``: an ``adapt`` entry, a fine-tuned one; a zoo
alias entry, as ``adapt`` writes when it keeps the base, or its fusion entry of the base with
BM25, takes the row of the model it names, marked ``same_as``, with what its run did).
``--precision int8`` adds rows ``<model> [int8]`` scored through ONNX Runtime's int8. Each row
records P@1 (the paper's accuracy), MAP, MRR and nDCG@10 from ``benchmarks.evaluate``, its
seconds, the process's peak RSS once it is done, and how many texts the bi-encoders embedded
(counted at ``BiEncoder.encode``): ``BiEncoder.score`` embeds each distinct text of a split
once, however many pools hold it, so the zero-shot row embeds the split's distinct queries and
answers exactly (``distinct_texts``). MultiCQA's published accuracies stand beside them
(``published``, from the registry).

Results: ``results/insuranceqa.json`` (``--out``); an existing record of the same split and
limit keeps its rows, and a model it holds is not scored again (each row scored since
records its date and the machine's load then; ``--rescore`` scores it again, for a quieter
timing), so ``--models adapt-insuranceqa`` adds a row. Run, on a quiet machine for the
timing: ``python benchmarks/studies/insuranceqa.py [--limit N] [--models M ...]``; ``--limit 2``
scores the first 2 test questions only (a smoke run; its record says so).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.datasets.insuranceqa import InsuranceQA  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.studies.adapt_study import FUSED, ZERO_SHOT  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
DATA = ROOT.parent / "shared" / "data" / "benchmarks"
MODELS = ("bm25", ZERO_SHOT, FUSED)
# the target: scoring the test split with one bi-encoder on 2 cores
TARGET_MINUTES = 15
METRICS = ("p@1", "map", "mrr", "ndcg@10")


@dataclasses.dataclass(frozen=True)
class FirstQueries(InsuranceQA):
    """InsuranceQA with only the first ``limit`` queries of a split (a smoke run)."""

    limit: int = 0

    def read(self, split: str, root: Path) -> list[dict]:
        rows = super().read(split, root)
        return rows[: self.limit] if self.limit else rows


def peak_rss_mib() -> float:
    """This process's peak resident set so far (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


@contextlib.contextmanager
def counted_texts():
    """Count the texts every ``BiEncoder.encode`` call embeds while the block runs."""
    # the bi-encoder's module (sentence-transformers) on first use: --help starts without it
    from adapter_zoo.biencoder.encoder import BiEncoder

    counter = {"texts": 0}
    encode = BiEncoder.encode

    def counting(self, texts, **kwargs):
        counter["texts"] += 1 if isinstance(texts, str) else len(texts)
        return encode(self, texts, **kwargs)

    BiEncoder.encode = counting
    try:
        yield counter
    finally:
        BiEncoder.encode = encode


def row_name(model: str, precision: str) -> str:
    """A row's name: the model's, ``<model> [int8]`` when scored at int8."""
    return model if precision == "auto" else f"{model} [{precision}]"


def alias_of(model: str) -> tuple[str | None, dict | None]:
    """The model a zoo alias or fusion entry ``model`` loads as, at its own length (its
    scores are those of its spec, a model name or a ``fusion:`` spec: None when ``model`` is
    no such entry), and what its ``adapt`` run did when ``adapt`` made it (its budget,
    training and decision; by similarity to the zoo's forums, as ``--strategy route``: its
    strategy, the members it chose and why)."""
    from adapter_zoo.errors import ZooError
    from adapter_zoo.zoo.store import local_entry, read_card

    try:
        entry = local_entry(model)
    except ZooError:
        return None, None
    card = read_card(entry) if entry is not None else {}
    adapt = card.get("adapt")
    if adapt and "budget" not in adapt:  # chosen by similarity: nothing trained, no budget
        adapt = {k: adapt[k] for k in ("strategy", "requested", "members", "reason")}
    elif adapt:
        adapt = {"budget_minutes": adapt["budget"]["minutes"], "seconds": adapt["seconds"],
                 "training": adapt["training"], "chosen": adapt["decision"]["chosen"],
                 "reason": adapt["reason"],
                 "zoo_entries": sorted((adapt.get("zoo") or {}).get("similarities", {}))}  # fmt: skip
    if card.get("composition") not in ("alias", "fusion") or "max_length" in card:
        return None, adapt
    return card["spec"], adapt


def run(
    models,
    data_dir: Path,
    limit: int = 0,
    split: str = "test",
    recorded: dict | None = None,
    precision: str = "auto",
    rescore: bool = False,
) -> dict:
    """Score each of ``models`` on InsuranceQA's ``split`` (its first ``limit`` queries when
    ``limit``) at ``precision`` (a row named ``<model> [int8]`` for int8); return the record
    (rows, published references, counts, machine). The rows of ``recorded`` (an earlier
    record of the same split and limit) stay, and a model it holds is not scored again unless
    ``rescore`` (a quiet machine's timing replacing a shared one's). An alias or fusion entry
    of a model already scored (``adapt`` keeping the base, or the base fused with BM25) takes
    that model's row, marked ``same_as``."""
    # evaluation (torch, datasets) on first use: --help starts without it
    from benchmarks import get
    from benchmarks.evaluate import ScoredModels, evaluate

    load_before = [round(v, 2) for v in os.getloadavg()]
    registered = get("insuranceqa")
    bench = FirstQueries(published=registered.published, expected=registered.expected, limit=limit)
    dataset = bench.load(split, data_dir)
    texts = set(dataset["query"]) | {c for cs in dataset["candidates"] for c in cs}
    queries = set(dataset["query"])
    counts = {"queries": len(dataset), "pairs": sum(map(len, dataset["labels"])),
              "distinct_queries": len(queries), "distinct_texts": len(texts),
              "distinct_answers": len(texts - queries)}  # fmt: skip
    del dataset, texts, queries
    same_record = recorded and (recorded["split"], recorded["limit"]) == (split, limit or None)
    scored, rows = ScoredModels(), dict(recorded["rows"]) if same_record else {}
    timed = False  # whether this run scored a model itself
    for model in models:
        key = row_name(model, precision)
        if key in rows and not rescore:
            continue
        member, adapt = alias_of(model)
        member_row = None if member is None else row_name(member, precision)
        if member_row in rows:
            rows[key] = {**{m: rows[member_row][m] for m in (*METRICS, "queries")},
                         "same_as": member_row, "texts_encoded": 0,
                         **({"adapt": adapt} if adapt else {})}  # fmt: skip
            continue
        started, load = time.perf_counter(), [round(v, 2) for v in os.getloadavg()]
        timed = True
        with counted_texts() as counter:
            record = evaluate(model, bench, split=split, data_dir=data_dir, scored=scored,
                              precision=precision)  # fmt: skip
        rows[key] = {
            **{metric: record["metrics"][metric] for metric in METRICS},
            "queries": record["queries"],
            "seconds": round(time.perf_counter() - started, 1),
            "texts_encoded": counter["texts"],
            "peak_rss_mib": peak_rss_mib(),
            # when, and how loaded the machine was (1, 5, 15-minute load averages) as it began
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_average": load,
            **({"precision": record["precision"]} if "precision" in record else {}),
            **({"max_length": record["max_length"]} if "max_length" in record else {}),
            **({"adapt": adapt} if adapt else {}),
        }
        row = rows[key]
        print(f"{key}: P@1 {row['p@1']:.4f} MAP {row['map']:.4f} "
              f"({row['seconds']} s, {counter['texts']} texts)", flush=True)  # fmt: skip
    zero_shot = rows.get(ZERO_SHOT)
    return {
        "benchmark": "insuranceqa",
        "split": split,
        "limit": limit or None,
        **counts,
        "rows": rows,
        "published": [
            {"model": ref.model, "p@1": ref.metrics["p@1"], "source": ref.source}
            for ref in bench.published
        ],  # fmt: skip
        "targets": {"bi_encoder_minutes": TARGET_MINUTES},
        "met": {
            "bi_encoder_minutes": zero_shot is not None
            and zero_shot["seconds"] <= 60 * TARGET_MINUTES
        },
        # the 1, 5 and 15-minute load averages before and after: how shared the machine was,
        # and which it was (a run that scored nothing new keeps the timed run's)
        **(
            {
                "load_average": {
                    "before": load_before,
                    "after": [round(v, 2) for v in os.getloadavg()],
                },
                "machine": machine_info(),
            }
            if timed or not same_record
            else {key: recorded[key] for key in ("load_average", "machine")}
        ),  # fmt: skip
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--limit", type=int, default=0,
                        help="score only the first N test questions (a smoke run)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=RESULTS / "insuranceqa.json")
    parser.add_argument("--precision", choices=("auto", "int8"), default="auto",
                        help="int8: ONNX Runtime's dynamic int8 (rows named '<model> [int8]')")  # fmt: skip
    parser.add_argument("--rescore", action="store_true",
                        help="score the models again though recorded (a quieter timing)")  # fmt: skip
    parser.add_argument("--note", default="",
                        help="what the record should say of its runs (replaces its note)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.limit < 0:
        parser.error("--limit must be 0 (all) or more")
    recorded = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else None
    if recorded and (recorded["split"], recorded["limit"]) != ("test", args.limit or None):
        recorded = None  # another run's record: replaced, nothing of it kept
    record = run(args.models, args.data_dir, args.limit, recorded=recorded,
                 precision=args.precision, rescore=args.rescore)  # fmt: skip
    record["args"] = {"models": args.models, "limit": args.limit or None,
                      "precision": args.precision, "rescore": args.rescore}  # fmt: skip
    # the note says what the record as it now stands is: a run's note replaces the last
    note = args.note or (recorded or {}).get("note")
    if note:
        record["note"] = note
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
