"""Sentence segmenters for ``adapter_zoo.documents``: BlingFire (Di Liello et al.'s),
pySBD and sentencex on the project's real texts.

Texts, one paragraph at a time (what ``adapter_zoo.documents.read_documents`` hands its
segmenter): forum posts (every post body of ai.stackexchange.com, rendered by
``stackexchange.html_to_text``, one block element a paragraph), MedQuAD's answers and
ArguAna's training arguments (blocks at blank lines), InsuranceQA's answer texts; each
whitespace-collapsed, those of 40 characters or more.

* speed: CPU seconds (``time.process_time``, best of ``--rounds`` interleaved rounds: the
  machine is shared) over a seeded sample of ``--paragraphs`` paragraphs per source;
  sentences per second;
* agreement: each segmenter's sentences against hand-checked ones
  (``sentence_splitters_gold.json``: per source, 4 paragraphs the three split alike and up
  to 6 where they differ, drawn from a seeded sample of 300, each read and split by hand),
  as exact paragraphs and boundary F1; and how often the three agree on that sample of 300.

The losers are not project dependencies; install the measured versions first
(``pip install blingfire==0.1.8 pysbd==0.3.4 sentencex==1.0.32``).

Run: ``python benchmarks/speed/sentence_splitters.py [--rounds 3] [--paragraphs 3000]``
Output: ``results/sentence_splitters.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"
GOLD = Path(__file__).resolve().parent / "sentence_splitters_gold.json"
AGREEMENT_SAMPLE = 300  # paragraphs per source the gold sample was drawn from
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")


def _forum_paragraphs() -> list[str]:
    from lxml import etree

    from stackexchange.text import html_to_text

    out = []
    posts = SHARED / "stackexchange" / "ai.stackexchange.com" / "Posts.xml"
    for _, row in etree.iterparse(str(posts), tag="row"):
        out += html_to_text(row.get("Body")).splitlines()
        row.clear()
    return out


def sources() -> dict[str, list[str]]:
    """Each source's paragraphs, whitespace collapsed, of 40 characters or more."""
    from benchmarks.datasets.arguana import training_pairs
    from benchmarks.datasets.insuranceqa import read_answer_json
    from benchmarks.datasets.medquad import read_medquad

    outside = SHARED / "benchmarks" / "outside"
    medquad = read_medquad(outside / "medquad" / "MedQuAD-xml-corpus.tar.gz")
    arguana = training_pairs(outside / "arguana")
    answers = SHARED / "benchmarks" / "insuranceqa-v2" / "insuranceqa_data" / "answers.json.gz"
    raw = {
        "forum": _forum_paragraphs(),
        "medquad": [b for r in medquad for b in _BLANK_LINE.split(r["answer"])],
        "arguana": [b for r in arguana for t in (r["question"], r["answer"])
                    for b in _BLANK_LINE.split(t)],
        "insuranceqa": list(read_answer_json(answers).values()),
    }  # fmt: skip
    flat = {name: [" ".join(p.split()) for p in paragraphs] for name, paragraphs in raw.items()}
    return {name: [p for p in paragraphs if len(p) >= 40] for name, paragraphs in flat.items()}


def segmenters() -> dict[str, tuple[str, object]]:
    """name -> (version, paragraph -> sentences), those installed."""
    found = {}
    try:
        import blingfire

        found["blingfire"] = (metadata.version("blingfire"),
                              lambda t: blingfire.text_to_sentences(t).split("\n"))  # fmt: skip
    except ImportError:
        pass
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False)
        found["pysbd"] = (metadata.version("pysbd"), segmenter.segment)
    except ImportError:
        pass
    try:
        import sentencex

        found["sentencex"] = (metadata.version("sentencex"),
                              lambda t: list(sentencex.segment("en", t)))  # fmt: skip
    except ImportError:
        pass
    return found


def clean(sentences) -> list[str]:
    return [s.strip() for s in sentences if s.strip()]


def boundaries(sentences: list[str]) -> set[int]:
    """Where each sentence but the last ends, in characters of the text without spaces."""
    ends, at = set(), 0
    for sentence in sentences[:-1]:
        at += len(sentence.replace(" ", ""))
        ends.add(at)
    return ends


def score(found: list[list[str]], gold: list[list[str]]) -> dict:
    hits = wanted = given = 0
    for ours, right in zip(found, gold, strict=True):
        a, b = boundaries(ours), boundaries(right)
        hits, wanted, given = hits + len(a & b), wanted + len(b), given + len(a)
    precision = hits / given if given else 1.0
    recall = hits / wanted if wanted else 1.0
    return {
        "exact": sum(a == b for a, b in zip(found, gold)),
        "paragraphs": len(gold),
        "boundary_precision": round(precision, 4),
        "boundary_recall": round(recall, 4),
        "boundary_f1": round(2 * precision * recall / (precision + recall), 4),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--paragraphs", type=int, default=3000)
    parser.add_argument("--output", type=Path, default=RESULTS / "sentence_splitters.json")
    args = parser.parse_args(argv)
    from benchmarks.machine import machine_info

    texts = sources()
    found = segmenters()
    rng = random.Random(0)
    timed = {name: rng.sample(paragraphs, min(args.paragraphs, len(paragraphs)))
             for name, paragraphs in texts.items()}  # fmt: skip
    seconds = {(s, t): float("inf") for s in found for t in timed}
    counts = {}
    for _ in range(args.rounds):  # interleaved: a burst of load hits all alike
        for name, (_, split) in found.items():
            for source, paragraphs in timed.items():
                start = time.process_time()
                counts[name, source] = sum(len(clean(split(p))) for p in paragraphs)
                seconds[name, source] = min(seconds[name, source], time.process_time() - start)
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    rng = random.Random(0)
    agreement_sample = {name: rng.sample(paragraphs, AGREEMENT_SAMPLE)
                        for name, paragraphs in texts.items()}  # fmt: skip
    results = {}
    for name, (version, split) in found.items():
        per_source = {}
        for source in timed:
            per_source[source] = {
                "paragraphs": len(timed[source]),
                "sentences": counts[name, source],
                "cpu_s": round(seconds[name, source], 4),
                "sentences_per_s": round(counts[name, source] / seconds[name, source]),
            }
        total_sentences = sum(counts[name, s] for s in timed)
        total_seconds = sum(seconds[name, s] for s in timed)
        results[name] = {
            "version": version,
            "sentences_per_s": round(total_sentences / total_seconds),
            "sources": per_source,
            "gold": score(
                [clean(split(g["text"])) for g in gold], [g["sentences"] for g in gold]
            ),  # fmt: skip
            "gold_where_they_differ": score(
                [clean(split(g["text"])) for g in gold if not g["splitters_agreed"]],
                [g["sentences"] for g in gold if not g["splitters_agreed"]],
            ),
        }
        print(f"{name:10} {results[name]['sentences_per_s']:>9} sentences/s  gold "
              f"{results[name]['gold']}")  # fmt: skip
    agreed = {}
    if len(found) > 1:
        for source, paragraphs in agreement_sample.items():
            splits = [[clean(split(p)) for _, split in found.values()] for p in paragraphs]
            agreed[source] = sum(all(s == parts[0] for s in parts) for parts in splits)
    out = {
        "benchmark": "sentence_splitters",
        "machine": machine_info(),
        "arguments": {"rounds": args.rounds, "paragraphs": args.paragraphs},
        "clock": "time.process_time (CPU seconds of this process), best round",
        "gold": {
            "file": GOLD.name,
            "paragraphs": len(gold),
            "where_they_differ": sum(not g["splitters_agreed"] for g in gold),
        },  # fmt: skip
        "all_agree_of_300": agreed,
        "segmenters": results,
        # the project ships the most accurate on the hand-checked sentences
        "chosen": max(results, key=lambda n: results[n]["gold"]["boundary_f1"]),
    }
    from stackexchange.io import atomic_write_json

    atomic_write_json(args.output, out)
    print(f"saved {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
