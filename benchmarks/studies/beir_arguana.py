"""ArguAna as a BEIR folder (``beir:``): our BM25 beside Pyserini's and the BEIR paper's
published numbers, and the zero-shot base and the base fused with BM25 beside it.

The folder is ``benchmarks.datasets.arguana.write_beir_folder``'s (the Webis files' test
debates as BEIR poses ArguAna: every argument of the corpus searched for each test point's
counter), written to a temporary folder. Each model retrieves through
``benchmarks.retrieval.retrieval_run``, as ``adapter-zoo evaluate --benchmark beir:PATH``
does (``bm25`` and the bi-encoder over the whole corpus; the fusion re-ranks the union of
BM25's and the base's top 100), and is scored by ``adapter_zoo.metrics.query_metrics``: the
means, a 95% bootstrap interval of each mean over queries, and the paired bootstrap of each
model's nDCG@10 against the base fused with BM25.

Beside them, bm25s at Pyserini's BM25 settings (k1=0.9, b=0.4), with Porter stems when
PyStemmer is importable (it is no dependency of the project), on the same folder: what the
parameters and the folder each give of the gap to Pyserini's published number.

Results: ``results/beir_arguana.json`` (``--out``). Run: ``python
benchmarks/studies/beir_arguana.py [--limit N] [--models M ...]``; ``--limit 20`` scores the
first 20 queries only (a smoke run; its record says so); ``--models bm25`` the BM25 rows only
(the bi-encoder embeds all 8,567 documents: minutes on a GPU, most of an hour on 2 busy
cores).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import adapter_zoo  # noqa: E402
import benchmarks  # noqa: E402
from adapter_zoo.adapt.decide import paired_bootstrap  # noqa: E402
from adapter_zoo.metrics import RETRIEVAL_METRICS, query_metrics  # noqa: E402
from benchmarks.baselines import is_lexical  # noqa: E402
from benchmarks.datasets.arguana import BEIR_PUBLISHED, write_beir_folder  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.retrieval import retrieval_run, run_from_rows  # noqa: E402
from benchmarks.studies.adapt_study import FUSED, ZERO_SHOT  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
ARGUANA = ROOT.parent / "shared" / "data" / "benchmarks" / "outside" / "arguana"
MODELS = ("bm25", ZERO_SHOT, FUSED)
BOOTSTRAP_SAMPLES = 10_000
# Pyserini's BM25 (Anserini's defaults for BEIR)
PYSERINI_K1, PYSERINI_B = 0.9, 0.4


def interval(values: np.ndarray, seed: int = 0) -> list[float]:
    """95% bootstrap interval of the mean of ``values`` (resampling queries)."""
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(BOOTSTRAP_SAMPLES, len(values)))]
    return [float(q) for q in np.quantile(means.mean(axis=1), [0.025, 0.975])]


def score(run: dict, data) -> tuple[dict, dict[str, np.ndarray]]:
    """The means of ``run`` and each metric's per-query values (every query has a relevant
    document here)."""
    per_query = [v for v in query_metrics(run, data.qrels).values() if v is not None]
    values = {m: np.asarray([v[m] for v in per_query]) for m in RETRIEVAL_METRICS}
    return {m: round(float(v.mean()), 6) for m, v in values.items()}, values


def bm25s_run(data, k1: float, b: float, stemmer=None) -> dict:
    """bm25s at ``k1`` and ``b`` (Lucene's variant, English stopwords, as ours), stemmed
    with ``stemmer`` when given."""
    import bm25s

    def tokens(texts):
        return bm25s.tokenize(list(texts), stopwords="en", stemmer=stemmer, return_ids=False,
                              show_progress=False)  # fmt: skip

    index = bm25s.BM25(k1=k1, b=b)
    index.index([t or [""] for t in tokens(data.corpus_texts)], show_progress=False)
    rows = []
    for query in tokens(data.queries.values()):
        known = [t for t in query if t in index.vocab_dict]
        rows.append(
            np.asarray(index.get_scores(known)) if known else np.zeros(len(data.corpus_ids))
        )
    return run_from_rows(rows, data, 1000, matched=True)


def variants(data) -> dict:
    """bm25s at Pyserini's settings on the same folder, with and (if PyStemmer imports)
    without Porter stems."""
    rows = {}
    settings = {"bm25s k1=0.9 b=0.4": None}
    try:
        import Stemmer

        version = importlib.metadata.version("PyStemmer")
        settings[f"bm25s k1=0.9 b=0.4, Porter stems (PyStemmer {version})"] = Stemmer.Stemmer(
            "english"
        )
    except ImportError:
        pass
    for name, stemmer in settings.items():
        metrics, _ = score(bm25s_run(data, PYSERINI_K1, PYSERINI_B, stemmer), data)
        rows[name] = metrics
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N queries only")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS,
                        help="the rows to score (default all three)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=RESULTS / "beir_arguana.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work) / "arguana"
        started = time.perf_counter()
        counts = write_beir_folder(ARGUANA, folder)
        written = time.perf_counter() - started
        data = benchmarks.get(f"beir:{folder}").retrieval_data("test")
        if args.limit:
            keep = list(data.qrels)[: args.limit]
            data = type(data)(data.corpus_ids, data.corpus_texts,
                              {q: data.queries[q] for q in keep},
                              {q: data.qrels[q] for q in keep})  # fmt: skip
        rows, values, runs = {}, {}, {}
        for model in args.models:
            started = time.perf_counter()
            scorer = model if is_lexical(model) else adapter_zoo.load(model)
            # the fusion's pool takes BM25's and the base's runs, as evaluate_models gives them
            run, about = retrieval_run(scorer, data, load_base=adapter_zoo.load, recorded=runs.get)
            runs[model] = run
            rows[model], values[model] = score(run, data)
            rows[model] = {"metrics": rows[model], **about,
                           "seconds": round(time.perf_counter() - started, 1),
                           "ndcg@10_interval": interval(values[model]["ndcg@10"])}  # fmt: skip
            print(model, rows[model], flush=True)
        for model in args.models if FUSED in args.models else ():
            if model != FUSED:
                rows[model]["ndcg@10_vs_fused"] = paired_bootstrap(
                    values[model]["ndcg@10"], values[FUSED]["ndcg@10"]
                )
        record = {
            "machine": machine_info(),
            "arguments": {"limit": args.limit, "models": args.models},
            "folder": {**counts, "seconds": round(written, 1)},
            "queries": len(data.qrels),
            "rows": rows,
            "bm25s_at_pyserini_settings": variants(data),
            "published": [
                {"model": r.model, "metrics": dict(r.metrics), "source": r.source}
                for r in BEIR_PUBLISHED
            ],  # fmt: skip
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
