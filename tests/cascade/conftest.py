"""Fixtures of the cascade, sweep and recommender tests: tiny hand-made forums and benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

QUERIES = [
    (
        "what is a stout",
        ["a dark beer brewed with roasted malt", "a kind of bicycle", "hops", "a lager"],
    ),
    ("how are hops used", ["for bitterness and aroma", "in bread", "as a fuel"]),
    ("why is beer foamy", ["carbon dioxide and proteins", "it is not"]),
    ("single", ["only candidate"]),
]

FORUM_QUESTIONS = {
    "beer.example": [
        ("Which glass should I use for a stout?", "A nonic pint or a tulip glass."),
        ("Why does my lager taste of butter?", "Diacetyl from a short fermentation."),
        ("How long can I age an imperial stout?", "Several years in a cool cellar."),
        ("What makes an IPA bitter?", "Lots of hops added during the boil."),
        ("Is wheat beer served with lemon?", "Some bars do; purists do not."),
        ("How cold should I serve a pilsner?", "Around four to seven degrees."),
    ],
    "bikes.example": [
        ("How do I fix a flat tyre on my bike?", "Patch the inner tube or replace it."),
        ("Which gear ratio is best for climbing hills?", "A small chainring, a big cog."),
        ("How often should I oil my bicycle chain?", "Every few hundred kilometres."),
        ("Why do my disc brakes squeal?", "Contaminated pads or misaligned calipers."),
        ("What tyre pressure for a road bike?", "Around six to eight bar."),
        ("How do I adjust a rear derailleur?", "Turn the barrel adjuster a quarter turn."),
    ],
}


def write_forum(root: Path, host: str) -> Path:
    """A minimal parse output for ``host``: stats, title_answer (train/dev/test), questions."""
    import datasets

    rows = FORUM_QUESTIONS[host]
    forum = root / host
    forum.mkdir(parents=True)
    split_of = ["train", "train", "train", "train", "dev", "test"]
    columns = ("forum", "query", "positive", "query_id", "positive_id", "tags", "score")

    def table(indices):
        return datasets.Dataset.from_dict(
            {
                "forum": [host] * len(indices),
                "query": [rows[i][0] for i in indices],
                "positive": [rows[i][1] for i in indices],
                "query_id": [str(i) for i in indices],
                "positive_id": [str(100 + i) for i in indices],
                "tags": [[] for _ in indices],
                "score": [1 for _ in indices],
            }
        ).select_columns(list(columns))

    splits = {s: [i for i, x in enumerate(split_of) if x == s] for s in ("train", "dev", "test")}
    datasets.DatasetDict({s: table(ix) for s, ix in splits.items()}).save_to_disk(
        str(forum / "title_answer")
    )
    datasets.Dataset.from_dict(
        {
            "id": list(range(len(rows))),
            "title": [q for q, _ in rows],
            "body": [q for q, _ in rows],
            "split": split_of,
        }
    ).save_to_disk(str(forum / "questions"))
    (forum / "stats.json").write_text(json.dumps({"forum": host, "questions": len(rows)}))
    return forum


def write_local_benchmark(
    folder: Path, source: Path | None, queries=QUERIES, split: str = "test"
) -> Path:
    """A ``local:`` benchmark folder in the layout build_from_forum writes; one call per split."""
    import datasets

    labels = [[1] + [0] * (len(c) - 1) for _, c in queries]
    datasets.Dataset.from_dict(
        {
            "query_id": [f"q{i}" for i in range(len(queries))],
            "query": [q for q, _ in queries],
            "candidate_ids": [
                [f"c{i}-{j}" for j in range(len(c))] for i, (_, c) in enumerate(queries)
            ],
            "candidates": [list(c) for _, c in queries],
            "labels": labels,
        }
    ).save_to_disk(str(folder / split))
    descriptor = {
        "name": "tiny-las",
        "task": "answer_selection",
        "main_metric": "p@1",
        "no_positive": "drop",
        "candidates": 4,
        "splits": sorted(p.name for p in folder.iterdir() if (p / "dataset_info.json").is_file()),
        "source": str(source) if source else "",
    }
    (folder / "benchmark.json").write_text(json.dumps(descriptor))
    return folder


@pytest.fixture
def queries():
    return [(q, list(c)) for q, c in QUERIES]


@pytest.fixture(scope="session")
def parsed_forums(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("parsed")
    for host in FORUM_QUESTIONS:
        write_forum(root, host)
    return root


@pytest.fixture(scope="session")
def tiny_benchmark(tmp_path_factory, parsed_forums) -> Path:
    folder = tmp_path_factory.mktemp("bench") / "tiny-las"
    folder.mkdir()
    return write_local_benchmark(folder, parsed_forums / "beer.example")


@pytest.fixture
def make_local_benchmark():
    """``write_local_benchmark`` for tests (conftest modules are not importable here)."""
    return write_local_benchmark
