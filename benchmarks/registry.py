"""The benchmark registry: one frozen dataclass per benchmark, registered by name.

Every benchmark loads into the same ``datasets.Dataset`` with columns ``query_id``, ``query``,
``candidate_ids``, ``candidates``, ``labels`` (one row per query; the three lists have equal
length; labels are ints, > 0 is relevant, larger is more relevant).

Example:
    >>> import benchmarks
    >>> bench = benchmarks.get("wikiqa")
    >>> bench.main_metric, bench.no_positive
    ('map', 'drop')
    >>> test = bench.load("test", data_dir="../shared/data/benchmarks")  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from benchmarks.errors import BenchmarkError
from benchmarks.fetch import benchmark_root, ensure_files

COLUMNS = ("query_id", "query", "candidate_ids", "candidates", "labels")
TASKS = ("answer_selection", "question_similarity")
METRICS = ("map", "mrr", "p@1", "ndcg@10")


@dataclasses.dataclass(frozen=True)
class SourceFile:
    """One original file: path inside the benchmark folder, where it comes from, its sha256."""

    path: str
    url: str = ""
    sha256: str = ""


@dataclasses.dataclass(frozen=True)
class Reference:
    """A published score: which model, on which split, the metrics, and the citation."""

    model: str
    metrics: Mapping[str, float]
    source: str
    split: str = "test"


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """A ranking benchmark. Subclasses set the fields and implement ``read``.

    Attributes:
        name: registry name, e.g. ``"wikiqa"``.
        task: ``"answer_selection"`` or ``"question_similarity"``.
        folder: folder name under the data dir.
        homepage: where the data is described.
        citation: the paper that defines the benchmark.
        files: every original file, with URL and sha256 where known.
        split_files: split → paths (within ``files``) that split needs.
        candidate_pool: how each query's candidates are formed.
        main_metric: the metric the papers report first (one of METRICS).
        no_positive: ``"drop"`` (queries without a relevant candidate are left out of the
            mean) or ``"zero"`` (they count 0), as that benchmark's papers did.
        bm25_scope: ``"query"`` (BM25 statistics over each query's candidates) or ``"corpus"``
            (over all candidates of the split).
        published: published reference scores.
        expected: our own reproducible scores, ``{(model, split): {metric: value}}``.
    """

    name: str = ""
    task: str = "answer_selection"
    folder: str = ""
    homepage: str = ""
    citation: str = ""
    files: tuple[SourceFile, ...] = ()
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    candidate_pool: str = ""
    main_metric: str = "map"
    no_positive: str = "drop"
    bm25_scope: str = "query"
    published: tuple[Reference, ...] = ()
    expected: Mapping[tuple[str, str], Mapping[str, float]] = dataclasses.field(
        default_factory=dict
    )

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(self.split_files)

    def root(self, data_dir: str | os.PathLike | None = None) -> Path:
        """The folder this benchmark's files are read from."""
        return benchmark_root(self.folder, data_dir, [f.path for f in self.files])

    def load(self, split: str = "test", data_dir: str | os.PathLike | None = None):
        """Load one split as a query–candidates–labels ``datasets.Dataset``.

        Args:
            split: one of ``self.splits``.
            data_dir: folder holding the benchmark folder (default ``$ADAPTER_ZOO_DATA`` or
                the user cache); missing files are downloaded when online and checksummed.

        Raises:
            BenchmarkError: unknown split, missing files, or a malformed record.
        """
        if split not in self.split_files:
            raise BenchmarkError(f"{self.name}: unknown split {split!r}; one of {self.splits}")
        root = self.root(data_dir)
        by_path = {f.path: f for f in self.files}
        ensure_files(self, root, [by_path.get(p, SourceFile(p)) for p in self.split_files[split]])
        rows = list(self.read(split, root))
        for row in rows:
            n = len(row["candidates"])
            if len(row["candidate_ids"]) != n or len(row["labels"]) != n:
                raise BenchmarkError(f"{self.name}/{split}: query {row['query_id']}: list lengths")
        import datasets

        columns = {c: [row[c] for row in rows] for c in COLUMNS}
        return datasets.Dataset.from_dict(columns, features=features())

    def read(self, split: str, root: Path) -> Iterable[dict]:
        """Yield one dict per query (keys COLUMNS) from the original files in ``root``."""
        raise NotImplementedError(f"{type(self).__name__}.read")


def features():
    """The ``datasets.Features`` of the query–candidates–labels representation."""
    import datasets

    return datasets.Features(
        {
            "query_id": datasets.Value("string"),
            "query": datasets.Value("string"),
            "candidate_ids": datasets.Sequence(datasets.Value("string")),
            "candidates": datasets.Sequence(datasets.Value("string")),
            "labels": datasets.Sequence(datasets.Value("int32")),
        }
    )


_REGISTRY: dict[str, Benchmark] = {}


def register(benchmark: Benchmark) -> Benchmark:
    """Add a benchmark instance to the registry under its name (names are unique)."""
    if benchmark.name in _REGISTRY:
        raise BenchmarkError(f"benchmark {benchmark.name!r} registered twice")
    _REGISTRY[benchmark.name] = benchmark
    return benchmark


def _load_families() -> None:
    import benchmarks.datasets  # noqa: F401  (registers every family on import)


def names() -> list[str]:
    """Names of every registered benchmark, sorted."""
    _load_families()
    return sorted(_REGISTRY)


def get(name: str) -> Benchmark:
    """The benchmark registered as ``name``, or a built one: ``"local:PATH"``.

    Raises:
        BenchmarkError: unknown name (the message lists the known ones).
    """
    if isinstance(name, Benchmark):
        return name
    if name.startswith("local:"):
        from benchmarks.datasets.local import LocalBenchmark

        return LocalBenchmark.from_path(name[len("local:") :])
    _load_families()
    if name not in _REGISTRY:
        raise BenchmarkError(f"unknown benchmark {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]
