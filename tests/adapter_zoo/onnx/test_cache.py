"""The export cache: reused on a second scoring, a corrupt or foreign file rebuilt."""

from __future__ import annotations

import json

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.onnx import cache
from adapter_zoo.onnx.cache import MANIFEST, cache_root

from .conftest import PAIRS


@pytest.fixture
def count_builds(monkeypatch):
    built = []
    original = cache.build_folder

    def counting(*args, **kwargs):
        built.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(cache, "build_folder", counting)
    return built


def test_a_second_scoring_reuses_the_export(bi_entry, count_builds):
    first = adapter_zoo.load(str(bi_entry), precision="int8").score(PAIRS)
    second = adapter_zoo.load(str(bi_entry), precision="int8").score(PAIRS)
    assert len(count_builds) == 1
    np.testing.assert_array_equal(first, second)
    assert [p.parent for p in cache_root().glob(f"*/{MANIFEST}")] != []


@pytest.mark.parametrize("damage", ["truncate", "foreign", "manifest"])
def test_a_corrupt_or_foreign_export_is_rebuilt(cross_entry, count_builds, damage):
    model = adapter_zoo.load(str(cross_entry), precision="int8")
    expected = model.score(PAIRS)
    folder = model.onnx_folder
    graph = folder / "onnx/model.onnx"
    if damage == "truncate":
        graph.write_bytes(graph.read_bytes()[:1000])
    elif damage == "foreign":
        record = json.loads((folder / MANIFEST).read_text())
        record["key"] = "0" * 64
        (folder / MANIFEST).write_text(json.dumps(record))
    else:
        (folder / MANIFEST).write_text("not json")
    again = adapter_zoo.load(str(cross_entry), precision="int8")
    assert len(count_builds) == 2
    np.testing.assert_array_equal(again.score(PAIRS), expected)
