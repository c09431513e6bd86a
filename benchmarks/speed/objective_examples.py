"""Building the objectives' examples (``adapter_zoo.objectives``) from real documents: how
long ``read_documents`` and each objective take on InsuranceQA's 27,413 answer texts (a text
file, one a line: ``adapt``'s target of texts) and MedQuAD's answered pages (a JSONL corpus,
the question as the title, the answer's blocks as paragraphs).

CPU seconds (``time.process_time``, best of ``--rounds``: the machine is shared) of
``read_documents`` on the file, and of ``build_examples`` for every objective, unlimited and
at ``adapt``'s cap for a texts-only target
(``adapter_zoo.adapt.objective_pairs.OBJECTIVE_PAIRS``), with the examples built and how
many had a hard negative.

Run: ``python benchmarks/speed/objective_examples.py [--rounds 3]``
Output: ``results/objective_examples.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"


def write_sources(folder: Path) -> dict[str, Path]:
    """The two corpora as the files a user hands ``adapt``."""
    from benchmarks.datasets.insuranceqa import read_answer_json
    from benchmarks.datasets.medquad import read_medquad

    answers = SHARED / "benchmarks" / "insuranceqa-v2" / "insuranceqa_data" / "answers.json.gz"
    texts = [" ".join(t.split()) for t in read_answer_json(answers).values()]
    insurance = folder / "insuranceqa-answers.txt"
    insurance.write_text("\n".join(texts), encoding="utf-8")
    pages = read_medquad(
        SHARED / "benchmarks" / "outside" / "medquad" / "MedQuAD-xml-corpus.tar.gz"
    )
    medquad = folder / "medquad-corpus.jsonl"
    medquad.write_text("\n".join(json.dumps({"_id": p["id"], "title": p["question"],
                                             "text": p["answer"]}) for p in pages),
                       encoding="utf-8")  # fmt: skip
    return {"insuranceqa": insurance, "medquad": medquad}


def best_of(rounds: int, work):
    best, value = float("inf"), None
    for _ in range(rounds):
        start = time.process_time()
        value = work()
        best = min(best, time.process_time() - start)
    return best, value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path, default=RESULTS / "objective_examples.json")
    args = parser.parse_args(argv)
    from adapter_zoo.adapt.objective_pairs import OBJECTIVE_PAIRS, usable_objectives
    from adapter_zoo.documents import read_documents
    from adapter_zoo.objectives import build_examples, objective_names
    from benchmarks.machine import machine_info

    corpora = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in write_sources(Path(tmp)).items():
            seconds, corpus = best_of(args.rounds, lambda p=path: read_documents(p))
            row = {"read_s": round(seconds, 3), "structure": corpus.about,
                   "usable": usable_objectives(corpus), "objectives": {}}  # fmt: skip
            for objective in objective_names():
                cell = {}
                for label, limit in (("all", None), ("adapt_cap", OBJECTIVE_PAIRS)):
                    seconds, found = best_of(args.rounds, lambda o=objective, c=corpus, n=limit:
                                             build_examples(o, c, seed=0, limit=n))  # fmt: skip
                    cell[label] = {"seconds": round(seconds, 3), "examples": len(found),
                                   "with_hard_negative": sum(e.hard > 0 for e in found)}  # fmt: skip
                row["objectives"][objective] = cell
                print(f"{name:12} {objective:9} all {cell['all']['seconds']:6.2f} s "
                      f"{cell['all']['examples']:6}  cap {cell['adapt_cap']['seconds']:6.2f} s")  # fmt: skip
            corpora[name] = row
    out = {
        "benchmark": "objective_examples",
        "machine": machine_info(),
        "arguments": {"rounds": args.rounds, "adapt_cap": OBJECTIVE_PAIRS},
        "clock": "time.process_time (CPU seconds of this process), best round",
        "corpora": corpora,
    }
    from stackexchange.io import atomic_write_json

    atomic_write_json(args.output, out)
    print(f"saved {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
