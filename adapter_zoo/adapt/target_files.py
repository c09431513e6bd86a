"""The texts of a target that is a text file or a benchmark folder, read for both
:func:`~adapter_zoo.adapt.targets.read_target` and :func:`~adapter_zoo.adapt.threads.read_threads`."""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.errors import ZooError
from stackexchange.jsontext import read_json_object
from stackexchange.lists import BENCHMARK_FILE

BENCHMARK_SPLITS = ("train", "dev", "test")


def checked_texts(texts: list[str], about: dict, where) -> tuple[list[str], dict]:
    if not texts:
        raise ZooError(f"{where}: no text to describe the target domain (empty)")
    return texts, {**about, "texts": len(texts)}


def text_file_texts(path: Path) -> tuple[list[str], dict]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ZooError(
            f"{path}: not a UTF-8 text file ({error.reason} at byte {error.start})"
        ) from None
    texts = [line.strip() for line in lines if line.strip()]
    return checked_texts(texts, {"source": "text file", "file": path.name}, path)


def benchmark_texts(path: Path) -> tuple[list[str], dict]:
    # stackexchange.store loads pyarrow: the CLI starts without it
    from stackexchange.store import read_dataset

    manifest = read_json_object(path / BENCHMARK_FILE, ZooError, "the manifest")
    texts = []
    for split in manifest.get("splits") or []:
        if split not in BENCHMARK_SPLITS:
            raise ZooError(f"{path / BENCHMARK_FILE}: unknown split {split!r}")
        texts += [q.strip() for q in read_dataset(path / split, ZooError)["query"] if q.strip()]
    about = {
        "source": "benchmark",
        "benchmark": manifest.get("name"),
        "splits": manifest.get("splits"),
    }
    return checked_texts(texts, about, path)
