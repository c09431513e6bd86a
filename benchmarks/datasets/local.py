"""Benchmarks built by ``benchmarks.build_from_forum``, loaded as ``benchmarks.get("local:PATH")``.

Layout: ``PATH/benchmark.json`` (name, task, main_metric, no_positive, candidates, splits,
counts, source) and one ``datasets`` folder per split, ``PATH/<split>/`` (save_to_disk).
``name`` here is the builder's label; ``path`` is what ``evaluate`` records.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from benchmarks.errors import BenchmarkError
from benchmarks.registry import COLUMNS, Benchmark, DatasetMetadata, check_rows, register_prefix
from stackexchange.errors import unknown_name
from stackexchange.jsontext import read_json_object
from stackexchange.lists import BENCHMARK_FILE


@dataclasses.dataclass(frozen=True)
class LocalBenchmark(Benchmark):
    """A built benchmark folder; ``load`` ignores ``data_dir``. ``source_forum``: the parsed
    forum folder it was built from, ``forum`` that folder's host (its questions are held out
    of that forum's training); empty when the descriptor names none."""

    path: str = ""
    source_forum: str = ""
    forum: str = ""

    @classmethod
    def from_path(cls, path) -> LocalBenchmark:
        folder = Path(path).expanduser()
        descriptor = folder / BENCHMARK_FILE
        if not descriptor.is_file():
            raise BenchmarkError(f"{descriptor}: no benchmark descriptor (build one first)")
        spec = read_json_object(descriptor, BenchmarkError, "the descriptor")
        try:
            # the builder writes {"forum", "path"}; older descriptors the folder's path
            source = spec.get("source") or {}
            if not isinstance(source, dict):
                source = {"path": str(source), "forum": Path(str(source)).name}
            return cls(
                name=spec["name"],
                task=spec["task"],
                folder=folder.name,
                metadata=DatasetMetadata(
                    name=spec["name"],
                    description=spec.get("candidate_pool", ""),
                    reference="",
                    citation=json.dumps(spec.get("source", ""), sort_keys=True),
                    bibtex="",  # built from a forum here: no paper defines it
                    splits=tuple(spec["splits"]),
                    metrics=(spec["main_metric"],),
                ),
                split_files={split: () for split in spec["splits"]},
                candidate_pool=spec.get("candidate_pool", ""),
                main_metric=spec["main_metric"],
                no_positive=spec.get("no_positive", "drop"),
                bm25_scope=spec.get("bm25_scope", "query"),
                path=str(folder.resolve()),
                source_forum=str(source.get("path", "")),
                forum=str(source.get("forum", "")),
            )
        except BenchmarkError as error:
            raise BenchmarkError(f"{descriptor}: {error}") from None
        except (KeyError, TypeError, ValueError) as error:
            raise BenchmarkError(f"{descriptor}: bad descriptor ({error!r})") from None

    @property
    def key(self) -> str:
        return f"local:{self.path}"

    def load(self, split: str = "test", data_dir=None):
        from stackexchange.store import read_dataset

        if split not in self.split_files:
            raise unknown_name("split", split, self.splits, BenchmarkError, where=self.name)
        folder = Path(self.path) / split
        where = f"{self.name}/{split} ({folder})"
        if folder.is_dir() and not any(folder.glob("*.arrow")):  # how datasets saves 0 rows
            raise BenchmarkError(f"{where}: empty split (no queries)")
        dataset = read_dataset(folder, BenchmarkError)
        missing = [c for c in COLUMNS if c not in dataset.column_names]
        if missing:
            raise BenchmarkError(f"{folder}: missing columns {missing}")
        check_rows(dataset, where)
        return dataset


register_prefix("local:", LocalBenchmark.from_path)
