"""InsuranceQA v2 (Feng et al. ASRU 2015), as MultiCQA evaluates it: P@1 over 500 SOLR candidates.

Original files (``V2/``): ``vocabulary`` (``idx_N \t word``), ``InsuranceQA.label2answer.token.
encoded.gz`` (answer label → ``idx_`` tokens) and ``InsuranceQA.question.anslabel.token.500.pool.
solr.{train,valid,test}.encoded.gz`` (domain, question tokens, ground-truth labels, 500 pool
labels). Token ids are turned back into words. Queries whose pool misses every ground-truth
answer are dropped (MultiCQA's reader does the same; test keeps 1,625 of 2,000).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from benchmarks.datasets._io import read_tsv
from benchmarks.errors import BenchmarkError
from benchmarks.registry import Benchmark, SourceFile, register

_REPO = (
    "https://raw.githubusercontent.com/shuzi/insuranceQA/"
    "5c380dd086067adacc2fec3bfa920a78e57bdcf6/V2/"
)
VOCAB = "V2/vocabulary"
ANSWERS = "V2/InsuranceQA.label2answer.token.encoded.gz"
_POOL = "V2/InsuranceQA.question.anslabel.token.500.pool.solr.{}.encoded.gz"
_SHA = {
    VOCAB: "087ad8bd0254b57711082856b24d3526178b407d6f849798af1e34f599b2557d",
    _POOL.format("valid"): "626d911325be95c9c5ec9979ad6927b69a077bc2bd60147b5655f4d749a8a79e",
    _POOL.format("test"): "e8be7a19cc391989eb54c80b551e56db0026ac638b4a8ac75c0ce46be6671e14",
}
_ALL = (VOCAB, ANSWERS, *(_POOL.format(s) for s in ("train", "valid", "test")))


def read_vocabulary(path: Path) -> dict[str, str]:
    """``idx_N`` → word."""
    return {f[0]: f[1] for f in read_tsv(path, min_fields=2)}


def decode(tokens: str, vocabulary: dict[str, str], where: str) -> str:
    """Turn ``idx_1 idx_2`` into words; an unknown id is an error naming ``where``."""
    try:
        return " ".join(vocabulary[t] for t in tokens.split())
    except KeyError as error:
        raise BenchmarkError(f"{where}: token {error.args[0]} not in the vocabulary") from None


@dataclasses.dataclass(frozen=True)
class InsuranceQA(Benchmark):
    """InsuranceQA v2 with the 500-answer SOLR pools."""

    name: str = "insuranceqa"
    task: str = "answer_selection"
    folder: str = "insuranceqa-v2"
    homepage: str = "https://github.com/shuzi/insuranceQA"
    citation: str = "Feng et al. Applying Deep Learning to Answer Selection. ASRU 2015"
    files: tuple[SourceFile, ...] = tuple(
        SourceFile(p, _REPO + p[3:], _SHA.get(p, "")) for p in _ALL
    )
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: {
            split: (VOCAB, ANSWERS, _POOL.format(name))
            for split, name in (("train", "train"), ("dev", "valid"), ("test", "test"))
        }
    )
    candidate_pool: str = "500 answers retrieved by SOLR (the released pools)"
    main_metric: str = "p@1"
    no_positive: str = "drop"

    def read(self, split: str, root: Path) -> list[dict]:
        vocabulary = read_vocabulary(root / VOCAB)
        answers = {
            f[0]: decode(f[1], vocabulary, f"{ANSWERS} label {f[0]}")
            for f in read_tsv(root / ANSWERS, min_fields=2)
        }
        pool_path = root / self.split_files[split][2]
        rows = []
        for number, fields in enumerate(read_tsv(pool_path, min_fields=4), start=1):
            truth = set(fields[2].split())
            pool = fields[3].split()
            if not truth & set(pool):
                continue
            missing = [label for label in pool if label not in answers]
            if missing:
                raise BenchmarkError(f"{pool_path}:{number}: answer {missing[0]} not in {ANSWERS}")
            rows.append(
                {
                    "query_id": f"{split}-{number}",
                    "query": decode(fields[1], vocabulary, f"{pool_path}:{number}"),
                    "candidate_ids": pool,
                    "candidates": [answers[label] for label in pool],
                    "labels": [int(label in truth) for label in pool],
                }
            )
        return rows


register(InsuranceQA())
