"""Fixtures for adapter_zoo tests: parsed-forum folders in the CONTRIBUTING layout.

``parsed_fixture`` is a small hand-made parse output (three forums, all pair kinds);
``parsed_beer`` is the real beer archive parsed by ``stackexchange.parse_forum``
(``parsed_shipped``, both archives shipped in the package, is in tests/conftest.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

try:
    import datasets

    datasets.disable_progress_bars()
except ImportError:  # pragma: no cover
    pass

COLUMNS = ("forum", "query", "positive", "query_id", "positive_id", "tags", "score")

TOPICS = {
    "beer.stackexchange.com": ["stout", "lager", "hops", "yeast", "barrel", "ale", "malt", "cask"],
    "cooking.stackexchange.com": [
        "bread",
        "knife",
        "oven",
        "garlic",
        "pasta",
        "sauce",
        "rice",
        "egg",
    ],
    "bicycles.stackexchange.com": [
        "chain",
        "brake",
        "tyre",
        "saddle",
        "gear",
        "spoke",
        "pedal",
        "frame",
    ],
}


def split_of(question_id: int) -> str:
    """80/10/10 split by hashed question id (as the parser does)."""
    bucket = int(hashlib.sha256(str(question_id).encode()).hexdigest(), 16) % 10
    return "test" if bucket == 0 else "dev" if bucket == 1 else "train"


def write_pairs(folder: Path, rows: list[dict]) -> dict:
    """Save ``rows`` as a DatasetDict with train/dev/test splits; return the counts."""
    import datasets

    features = datasets.Features(
        {
            "forum": datasets.Value("string"),
            "query": datasets.Value("string"),
            "positive": datasets.Value("string"),
            "query_id": datasets.Value("int64"),
            "positive_id": datasets.Value("int64"),
            "tags": datasets.Sequence(datasets.Value("string")),
            "score": datasets.Value("int64"),
        }
    )
    splits = {"train": [], "dev": [], "test": []}
    for row in rows:
        splits[split_of(row["query_id"])].append(row)
    dd = datasets.DatasetDict(
        {
            name: datasets.Dataset.from_dict(
                {c: [r[c] for r in part] for c in COLUMNS}, features=features
            )
            for name, part in splits.items()
        }
    )
    dd.save_to_disk(str(folder))
    return {name: len(part) for name, part in splits.items()}


def write_forum(root: Path, host: str, pairs: dict[str, list[dict]]) -> Path:
    folder = root / host
    folder.mkdir(parents=True)
    counts = {kind: write_pairs(folder / kind, rows) for kind, rows in pairs.items()}
    stats = {
        "forum": host,
        "pairs": {k: sum(v.values()) for k, v in counts.items()},
        "splits": counts,
    }
    (folder / "stats.json").write_text(json.dumps(stats))
    return folder


def fixture_rows(host: str, n: int) -> dict[str, list[dict]]:
    """Synthetic but consistent pairs: each question about one topic word of its forum."""
    words = TOPICS[host]
    title_body, title_answer, duplicates = [], [], []
    for i in range(n):
        word = words[i % len(words)]
        base = {"forum": host, "query_id": 1000 + i, "tags": [word], "score": i % 5}
        title = f"question {i} about the {word}"
        title_body.append(
            {
                **base,
                "query": title,
                "positive": f"my {word} number {i} has a problem",
                "positive_id": 1000 + i,
            }
        )
        title_answer.append(
            {
                **base,
                "query": title,
                "positive": f"fix the {word} like this {i}",
                "positive_id": 5000 + i,
            }
        )
        if i % 4 == 0:
            duplicates.append(
                {
                    **base,
                    "query": f"duplicate of {i}: {word}?",
                    "positive": title,
                    "positive_id": 1000 + i,
                }
            )
    return {"title_body": title_body, "title_answer": title_answer, "duplicates": duplicates}


@pytest.fixture(scope="session")
def parsed_fixture(tmp_path_factory) -> Path:
    """A parse output folder with three small forums (48 questions each)."""
    root = tmp_path_factory.mktemp("parsed")
    for host in TOPICS:
        write_forum(root, host, fixture_rows(host, 48))
    return root


@pytest.fixture(scope="session")
def parsed_beer(tmp_path_factory, shared_file) -> Path:
    """The real beer forum, parsed; returns the parse output folder (parent of the forum)."""
    archive = shared_file("stackexchange/beer.stackexchange.com.7z")
    out = tmp_path_factory.mktemp("parsed-beer")
    from stackexchange import parse_forum

    parse_forum(archive, out)
    return out


@pytest.fixture(scope="session")
def forum_kit():
    """The helpers above for tests (conftest cannot be imported under --import-mode=importlib)."""
    import types

    return types.SimpleNamespace(
        fixture_rows=fixture_rows, split_of=split_of, write_forum=write_forum
    )


class _Planted:
    """Unpickles by calling ``open(marker, "w")``: any code could run in its place."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.fixture
def planted_pickle(tmp_path):
    """An object whose unpickling creates a marker file, and that (absent) marker."""
    marker = tmp_path / "code-ran"
    return _Planted(marker), marker


@pytest.fixture
def cpu_without_bf16(monkeypatch):
    """A CPU with neither AMX-BF16 nor AVX512-BF16, whatever this machine has."""
    from adapter_zoo import precision

    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ())


@pytest.fixture
def cpu_with_bf16(monkeypatch):
    """A CPU with AMX-BF16 (and AVX512-BF16): where an explicit ``bf16`` runs."""
    from adapter_zoo import precision

    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ("amx_bf16", "avx512_bf16"))
