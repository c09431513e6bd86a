"""MTEB as an outside check: a benchmark split as an MTEB reranking task, run by ``mteb``.

Any benchmark the registry loads (a forum's held-out LAS set from
:func:`benchmarks.build_from_forum`, WikiQA from local files) becomes a custom MTEB
``Reranking`` task (``mteb``'s ``AbsTaskRetrieval`` with ``top_ranked``: every query is
scored against exactly its own candidate list, nothing is downloaded). ``mteb.evaluate``
runs a bi-encoder's SentenceTransformer through MTEB's retrieval evaluator and writes its
result JSON in MTEB's own format (``ResultCache`` layout:
``results/<model>/<revision>/<task>.json``).

How MTEB's MAP relates to ours (:func:`adapter_zoo.metrics.evaluate_rankings`):

* each candidate gets its own document id (``<query index>-<position>``), so every MTEB
  list is exactly our list, duplicated candidate texts included;
* MTEB's ``map_at_1000`` is trec_eval's MAP over the whole list (every list here is far
  shorter than 1,000): without tied scores it equals our MAP;
* **ties**: MTEB (pytrec_eval) orders tied candidates by document id, descending; we take the
  expectation over the tied candidates' orders. Equal scores come from duplicated candidate
  texts (a bi-encoder embeds them identically), so the two differ exactly there;
* queries without a relevant candidate: MTEB drops them, as our ``no_positive="drop"``
  benchmarks do; a ``"zero"`` benchmark (SemEval task 3) counts them as 0 in ours only.

Example:
    >>> from benchmarks.mteb_export import run_mteb
    >>> run_mteb("beer-bi", "local:bench/beer", results="mteb-results")  # doctest: +SKIP
    {'map': 0.91, 'mrr': 0.93, 'ndcg@10': 0.94, 'queries': 59, 'file': ...}
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from benchmarks.errors import BenchmarkError

log = logging.getLogger(__name__)

MAIN_SCORE = "map_at_1000"  # trec_eval's MAP cut at 1,000: the whole list here


def task_name(bench) -> str:
    """An MTEB task name for a benchmark (MTEB names are CamelCase identifiers)."""
    words = re.split(r"[^0-9A-Za-z]+", Path(bench.name).name if "/" in bench.name else bench.name)
    return "AdapterZoo" + "".join(w[:1].upper() + w[1:] for w in words if w) + "Reranking"


def split_data(rows) -> dict:
    """One benchmark split (rows with ``query``, ``candidates``, ``labels``) as MTEB's
    ``RetrievalSplitData``: queries, corpus, relevant_docs and top_ranked."""
    import datasets

    queries, corpus, relevant, top = [], [], {}, {}
    for index, row in enumerate(rows):
        query_id = f"q{index}"
        queries.append({"id": query_id, "text": row["query"]})
        ids = [f"{index}-{position}" for position in range(len(row["candidates"]))]
        corpus += [
            {"id": i, "title": "", "text": t} for i, t in zip(ids, row["candidates"], strict=True)
        ]
        relevant[query_id] = {i: int(label) for i, label in zip(ids, row["labels"], strict=True)}
        top[query_id] = ids
    return {
        "queries": datasets.Dataset.from_list(queries),
        "corpus": datasets.Dataset.from_list(corpus),
        "relevant_docs": relevant,
        "top_ranked": top,
    }


def reranking_task(benchmark, split: str = "test", data_dir=None):
    """``benchmark``'s ``split`` as an MTEB reranking task instance (data already loaded).

    Args:
        benchmark: a registry name, ``local:PATH`` or a Benchmark (as :func:`benchmarks.get`).
        split: the split to turn into the task's evaluation split.
        data_dir: the benchmark files' folder (see ``Benchmark.load``).
    """
    from benchmarks.registry import get

    bench = get(benchmark)
    return task_from_rows(bench.load(split, data_dir), task_name(bench), split=split)


def task_from_rows(rows, name: str, *, split: str = "test"):
    """Benchmark rows (``query``, ``candidates``, ``labels``) as the MTEB reranking task
    ``name`` whose evaluation split is ``split``."""
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.task_metadata import TaskMetadata

    metadata = TaskMetadata(
        name=name,
        description=f"adapter-zoo benchmark {name} ({split}), candidates reranked",
        reference="https://github.com/embeddings-benchmark/mteb",
        dataset={"path": f"adapter-zoo/{name}", "revision": "local"},
        type="Reranking",
        category="t2t",
        modalities=["text"],
        eval_splits=[split],
        eval_langs=["eng-Latn"],
        main_score=MAIN_SCORE,
        date=("2010-01-01", "2026-12-31"),
        domains=["Web"],
        task_subtypes=[],
        license="cc-by-sa-4.0",
        annotations_creators="derived",
        dialect=[],
        sample_creation="found",
        bibtex_citation="",
    )
    data = split_data(list(rows))

    class Task(AbsTaskRetrieval):
        def load_data(self, num_proc=None, **kwargs) -> None:
            self.dataset = {"default": {split: data}}
            self.data_loaded = True

    Task.metadata = metadata
    Task.__name__ = name
    task = Task()
    task.load_data()
    return task


def run_mteb(model, benchmark, *, split: str = "test", data_dir=None, results=None) -> dict:
    """Run bi-encoder ``model`` through MTEB's reranking evaluator on ``benchmark``.

    Args:
        model: a zoo bi-encoder (name, path or ``sbert:<base>``) or a loaded ``BiEncoder``.
        benchmark: a registry name, ``local:PATH`` or a Benchmark.
        split: the split to score.
        data_dir: the benchmark files' folder.
        results: a folder for MTEB's result JSON (``mteb.cache.ResultCache`` layout);
            None: not written.

    Returns:
        ``{"map", "mrr", "ndcg@10", "queries", "task", "file"}``: MTEB's own numbers (its
        ``map_at_1000``, ``mrr_at_1000``, ``ndcg_at_10``) and the JSON file it wrote.

    Raises:
        BenchmarkError: ``model`` is not a bi-encoder (MTEB embeds texts apart).
    """
    return run_task(_bi_encoder(model), reranking_task(benchmark, split, data_dir), results)


def run_task(encoder, task, results=None) -> dict:
    """Run a ``BiEncoder`` through MTEB on ``task`` (see :func:`run_mteb`)."""
    import mteb
    from mteb.cache import ResultCache

    card = encoder.card or {}
    # MTEB names the result folder after the model card's name and revision
    data = encoder.model.model_card_data
    data.model_name = (
        f"adapter-zoo/{card.get('name') or 'sbert-' + Path(str(encoder.base_model)).name}"
    )
    data.base_model_revision = _revision(card)
    cache = ResultCache(str(Path(results).resolve())) if results is not None else None
    result = mteb.evaluate(
        encoder.model, task, cache=cache, overwrite_strategy="always", show_progress_bar=False,
        encode_kwargs={"batch_size": 64},
    )  # fmt: skip
    split = task.metadata.eval_splits[0]
    scores = result.task_results[0].scores[split][0]
    record = {
        "map": float(scores[MAIN_SCORE]),
        "mrr": float(scores["mrr_at_1000"]),
        "ndcg@10": float(scores["ndcg_at_10"]),
        "task": task.metadata.name,
        "file": None,
    }
    if cache is not None:
        found = sorted(Path(results).resolve().rglob(f"{task.metadata.name}.json"))
        record["file"] = str(found[-1]) if found else None
    return record


def _revision(card: dict) -> str:
    """A short hash of the entry's file hashes: MTEB's revision folder (``zero-shot``: none)."""
    import hashlib
    import json

    files = card.get("files")
    if not files:
        return "zero-shot"
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:12]


def _bi_encoder(model):
    from adapter_zoo import BiEncoder, load
    from adapter_zoo.names import ZERO_SHOT, parse_model_name

    encoder = model
    name = parse_model_name(model) if isinstance(model, str) else None
    if name is not None and name.category == ZERO_SHOT:
        encoder = BiEncoder.from_base(name.base, device="cpu")
    elif isinstance(model, str | os.PathLike):
        encoder = load(str(model), device="cpu")
    if not isinstance(encoder, BiEncoder):
        raise BenchmarkError(
            f"MTEB runs embedding models: {model!r} is a cross-encoder (it reads the pair "
            "jointly); give a bi-encoder entry or sbert:<base>"
        )
    return encoder


__all__ = [
    "MAIN_SCORE",
    "reranking_task",
    "run_mteb",
    "run_task",
    "split_data",
    "task_from_rows",
    "task_name",
]


def main(argv=None) -> int:
    """``python -m benchmarks.mteb_export MODEL BENCHMARK --results DIR``: MTEB's numbers
    beside ours (``benchmarks.evaluate``) as one JSON line; MTEB's result file in DIR."""
    import argparse
    import json

    from benchmarks.evaluate import evaluate
    from stackexchange.errors import run_reported
    from stackexchange.io import check_writable
    from stackexchange.paths import folder_option, path_option

    prog = "python -m benchmarks.mteb_export"
    parser = argparse.ArgumentParser(prog=prog, description=main.__doc__.splitlines()[0])
    parser.add_argument("model", help="a zoo bi-encoder (name or path) or sbert:<base>")
    parser.add_argument("benchmark", help="a registry name or local:PATH")
    parser.add_argument("--split", default="test")
    parser.add_argument("--data-dir", type=path_option, default=None,
                        help="the benchmark files' folder")  # fmt: skip
    parser.add_argument("--results", type=folder_option, required=True,
                        help="folder for MTEB's result JSON")  # fmt: skip
    args = parser.parse_args(argv)

    def command() -> None:
        check_writable(args.results, what="MTEB's results",
                       advice="choose a --results folder you can write")  # fmt: skip
        theirs = run_mteb(args.model, args.benchmark, split=args.split, data_dir=args.data_dir,
                          results=args.results)  # fmt: skip
        ours = evaluate(args.model, args.benchmark, split=args.split, data_dir=args.data_dir)
        print(json.dumps({"mteb": theirs, "ours": ours["metrics"], "queries": ours["queries"]}))

    # adapter-zoo's own error path: bad input is one line and exit 2, a bug keeps its traceback
    return run_reported(prog, command)


if __name__ == "__main__":
    raise SystemExit(main())
