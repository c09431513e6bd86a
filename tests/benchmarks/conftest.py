"""Fixtures of the benchmarks tests: the original-format fixtures and the real data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def real_benchmarks(shared_file) -> Path:
    return shared_file("benchmarks")


@pytest.fixture
def beer_archive(shared_file) -> Path:
    """The real beer.stackexchange.com dump (fails under CI when missing)."""
    return shared_file("stackexchange/beer.stackexchange.com.7z")


# (id, title, body, accepted answer or "", split) of a made-up forum in the parsed layout
TINY_FORUM = [
    (
        1,
        "How long does a stout keep?",
        "I bought a bottle of imperial stout.",
        "An imperial stout keeps for years in a cool cellar.",
        "train",
    ),
    (
        2,
        "Which glass for a lager?",
        "Does the glass shape matter for lager?",
        "A tall pilsner glass shows the lager's carbonation.",
        "train",
    ),
    (
        3,
        "Why do hops make beer bitter?",
        "What in hops gives bitterness?",
        "Alpha acids in hops isomerise while boiling and taste bitter.",
        "train",
    ),
    (
        4,
        "What temperature to serve a stout?",
        "Cold or cellar temperature for stout?",
        "Serve a stout at cellar temperature, around 12 degrees.",
        "train",
    ),
    (
        5,
        "Is lager bottom fermented?",
        "How is lager yeast different?",
        "Lager yeast ferments cold at the bottom of the tank.",
        "dev",
    ),
    (
        6,
        "Can I age an IPA?",
        "Will my IPA get better with age?",
        "No, the hop aroma of an IPA fades within months.",
        "test",
    ),
    (
        7,
        "How long can stout be cellared?",
        "Cellaring imperial stout for years?",
        "Imperial stout can be cellared for many years.",
        "test",
    ),
    (8, "What is a hop?", "What plant are hops from?", "", "train"),
    (
        9,
        "Best glass for stout?",
        "Which glass suits a stout?",
        "A nonic pint glass suits a stout.",
        "train",
    ),
    (10, "How long does imperial stout keep?", "Can imperial stout be kept for years?", "", "test"),
    (11, "Which glass should I use for lager beer?", "Glass shape for lager?", "", "train"),
]
# (duplicate question id, canonical question id)
TINY_DUPLICATES = [(10, 1), (11, 2)]


def write_tiny_forum(parent: Path, host: str = "tiny.stackexchange.com") -> Path:
    """A parsed forum in the CONTRIBUTING layout (questions/ and duplicates/ datasets)."""
    import datasets

    folder = parent / host
    folder.mkdir(parents=True)
    rows = [
        {"id": qid, "title": title, "body": body, "tags": ["beer"], "score": 1,
         "accepted_answer_id": 100 + qid if answer else None, "accepted_answer": answer,
         "split": split}
        for qid, title, body, answer, split in TINY_FORUM
    ]  # fmt: skip
    datasets.Dataset.from_list(rows).save_to_disk(str(folder / "questions"))
    text = {qid: f"{title} {body}" for qid, title, body, _, _ in TINY_FORUM}
    split_of = {qid: split for qid, *_, split in TINY_FORUM}
    pairs = {"train": [], "dev": [], "test": []}
    for dup, canonical in TINY_DUPLICATES:
        pairs[split_of[dup]].append(
            {"forum": host, "query": text[dup], "positive": text[canonical],
             "query_id": str(dup), "positive_id": str(canonical), "tags": ["beer"], "score": 1}
        )  # fmt: skip
    features = datasets.Features(
        {"forum": datasets.Value("string"), "query": datasets.Value("string"),
         "positive": datasets.Value("string"), "query_id": datasets.Value("string"),
         "positive_id": datasets.Value("string"),
         "tags": datasets.Sequence(datasets.Value("string")), "score": datasets.Value("int64")}
    )  # fmt: skip
    datasets.DatasetDict(
        {
            s: datasets.Dataset.from_dict({c: [r[c] for r in p] for c in features}, features)
            for s, p in pairs.items()
        }
    ).save_to_disk(str(folder / "duplicates"))
    (folder / "stats.json").write_text(json.dumps({"forum": host}))
    return folder


@pytest.fixture(scope="session")
def tiny_forum(tmp_path_factory) -> Path:
    """A made-up parsed forum folder (TINY_FORUM, TINY_DUPLICATES)."""
    return write_tiny_forum(tmp_path_factory.mktemp("parsed"))


@pytest.fixture(scope="session")
def tiny_forum_rows():
    """The rows behind ``tiny_forum``: (questions, duplicate pairs)."""
    return TINY_FORUM, TINY_DUPLICATES
