"""What the crash campaign checks after each kill and each rerun.

After a kill (:func:`problems`): nothing under a final name is half written. Every zoo
entry ``list`` shows passes ``verify_entry`` and no folder under an entry's name is broken;
every parsed forum, benchmark and results file that looks complete reads whole
(datasets row for row, every record of ``results.jsonl`` checked, no line twice); a pulled
snapshot holds only files with the entry's hashes; a Hub branch points at a whole entry.

After a rerun (:func:`fingerprint`): the outputs equal an uninterrupted run's. Datasets
compare row for row, JSON and JSON-lines field by field without the fields that say when
or how long (:data:`VOLATILE`) and with the run's folder written as ``{root}``, every other
file byte for byte (weights included). ``results.jsonl`` compares as its distinct records:
an ``evaluate`` killed after its records were in place (its work done, its exit not) left
them whole, and its rerun, another run, appends its own, the same but for their times; a
record written twice (the same line, times included) is a problem after the kill.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from adapter_zoo.zoo.store import CARD_FILE
from benchmarks.results import RESULTS_FILE

# Fields that record when, how long, or on what machine state a run went: they differ
# between any two runs, interrupted or not.
VOLATILE = frozenset({
    "created", "seconds", "wall_time_s", "timestamp", "dev_seconds", "eval_runtime",
    "train_runtime", "train_samples_per_second", "train_steps_per_second",
    "eval_samples_per_second", "eval_steps_per_second", "memory", "versions", "stage_seconds",
    "finished",
})  # fmt: skip
_BUILD_FOLDER = re.compile(r"(\.tmp-build-)\d+-[0-9a-f]+")
# huggingface_hub's probe of a cache folder's permissions (``_chmod_and_move``): an empty
# file it creates and deletes beside each download; a kill between the two leaves it, and
# nothing ever reads it.
_HUB_PROBE = re.compile(r"tmp_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# huggingface_hub's probe of whether a cache folder takes symlinks (``are_symlinks_supported``,
# once per cache folder and process): a temporary folder holding ``dummy_file_src`` and a link
# to it, removed at once; a kill inside it leaves them, and nothing ever reads them (seen as a
# failure of tests/faults/test_hub_kills.py::test_pull, a kill at change 29 of 40).
_HUB_SYMLINK_PROBE = re.compile(r"tmp[a-z0-9_]{8}/dummy_file_(src|dst)")
# Derived from the card (its "created" included): the card is compared instead.
SKIPPED = frozenset({"README.md", "leaderboard.html", "leaderboard.md"})


@contextlib.contextmanager
def zoo_at(home: Path) -> Iterator[None]:
    """``ADAPTER_ZOO_HOME`` set to ``home`` in this process for the block."""
    old = os.environ.get("ADAPTER_ZOO_HOME")
    os.environ["ADAPTER_ZOO_HOME"] = str(home)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("ADAPTER_ZOO_HOME", None)
        else:
            os.environ["ADAPTER_ZOO_HOME"] = old


def _visible(folder: Path) -> list[Path]:
    """What sits under a final name in ``folder`` (not a hidden temporary or lock)."""
    return (
        sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []
    )


def zoo_problems(home: Path) -> list[str]:
    """Entries of the zoo at ``home`` that are not whole: one ``list`` shows (or shows as
    broken) whose files do not verify, or a folder under an entry name without a card."""
    from adapter_zoo.zoo.store import local_cards, verify_entry
    from stackexchange.errors import AdapterZooError

    found = []
    with zoo_at(home):
        for card in local_cards():
            if "broken" in card:
                found.append(f"list shows {card['name']} as broken: {card['broken']}")
                continue
            try:
                verify_entry(card["path"])
            except (AdapterZooError, OSError) as error:
                found.append(f"list shows {card['name']}, not whole: {error}")
    for folder in _visible(home):
        if folder.is_dir() and not (folder / CARD_FILE).exists():
            found.append(f"{folder}: a folder under an entry name without a card")
    return found


def forum_problems(out: Path) -> list[str]:
    """Parsed forums under ``out`` that look complete but do not read whole."""
    from stackexchange.parse import is_complete
    from stackexchange.store import read_dataset

    found = []
    for forum in _visible(out):
        if not is_complete(forum):
            found.append(f"{forum}: a forum folder under its final name, not complete")
            continue
        for part in ("title_body", "title_answer", "duplicates", "questions"):
            try:
                _rows(read_dataset(forum / part))
            except (ValueError, OSError) as error:
                found.append(f"{forum / part}: {error}")
    return found


def benchmark_problems(folder: Path) -> list[str]:
    """A benchmark folder that exists under its final name but does not load whole."""
    import benchmarks
    from benchmarks.builder import BENCHMARK_FILE

    if not folder.exists():
        return []
    if not (folder / BENCHMARK_FILE).is_file():
        return [f"{folder}: a benchmark folder without {BENCHMARK_FILE}"]
    try:
        bench = benchmarks.get(f"local:{folder}")
        for split in json.loads((folder / BENCHMARK_FILE).read_text())["splits"]:
            _rows(bench.load(split))
    except (ValueError, OSError) as error:
        return [f"{folder}: {error}"]
    return []


def results_problems(folder: Path) -> list[str]:
    """A ``results.jsonl`` with a broken record, or a record written twice (the same line,
    its time stamp included: one run's record appended again)."""
    from benchmarks.results import read_results

    path = folder / RESULTS_FILE
    if not path.exists():
        return []
    try:
        read_results(folder)
    except (ValueError, OSError) as error:
        return [str(error)]
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [f"{path}: a record written twice"] if len(set(lines)) != len(lines) else []


def snapshot_problems(cache: Path, expected: dict[str, str]) -> list[str]:
    """Files of pulled snapshots in the Hugging Face cache ``cache`` whose bytes are not the
    entry's (``expected``: relative path -> sha256 of the pushed files)."""
    from stackexchange.io import sha256_file

    found = []
    for snapshot in cache.glob("models--*/snapshots/*"):
        for path in sorted(snapshot.rglob("*")):
            relative = path.relative_to(snapshot).as_posix()
            if path.is_file() and relative in expected and sha256_file(path) != expected[relative]:
                found.append(f"{path}: a pulled file whose bytes are not the entry's")
    return found


def hub_files(repo: Path) -> dict[str, bytes]:
    """The files of the main branch of the bare git ``repo`` (none when it has no main)."""
    git = ["git", "--git-dir", str(repo)]
    head = subprocess.run([*git, "rev-parse", "-q", "--verify", "refs/heads/main"],
                          capture_output=True, text=True) if (repo / "HEAD").exists() else None  # fmt: skip
    if head is None or head.returncode != 0:
        return {}
    commit = head.stdout.strip()
    names = subprocess.run([*git, "ls-tree", "-r", "--name-only", commit], capture_output=True,
                           text=True, check=True).stdout.split()  # fmt: skip
    return {
        name: subprocess.run(
            [*git, "show", f"{commit}:{name}"], capture_output=True, check=True
        ).stdout  # fmt: skip
        for name in names
    }


def hub_problems(repo: Path) -> list[str]:
    """A main branch of the bare git ``repo`` (served by olah) that holds an entry whose
    card does not match its files."""
    files = hub_files(repo)
    if set(files) <= {".gitattributes"}:
        return []
    if CARD_FILE not in files:
        return [f"{repo}: main has no {CARD_FILE}"]
    card = json.loads(files[CARD_FILE])
    return [
        f"{repo}: main's {name} does not match its card"
        for name, digest in card["files"].items()
        if name not in files or hashlib.sha256(files[name]).hexdigest() != digest
    ]


def hub_fingerprint(repo: Path) -> dict[str, str]:
    """The main branch's files by sha256 (``README.md`` compared through the card)."""
    return {name: hashlib.sha256(data).hexdigest() for name, data in hub_files(repo).items()
            if name not in SKIPPED}  # fmt: skip


def _rows(dataset) -> str:
    """The sha256 of ``dataset``'s rows (every split of a DatasetDict) in order."""
    digest = hashlib.sha256()
    parts = dataset.items() if hasattr(dataset, "items") else [("", dataset)]
    for split, table in sorted(parts):
        digest.update(split.encode())
        for row in table:
            digest.update(json.dumps(row, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def normalised(value, root: str):
    """``value`` (parsed JSON) without :data:`VOLATILE` fields, ``root`` written ``{root}``."""
    if isinstance(value, dict):
        return {k: normalised(v, root) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalised(v, root) for v in value]
    if isinstance(value, str):  # build's work folder is named by its process: any two differ
        return _BUILD_FOLDER.sub(r"\1{build}", value.replace(root, "{root}"))
    return value


def _json_digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def fingerprint(folder: Path, root: Path) -> dict[str, str]:
    """What a run left in ``folder``, comparable across runs: relative path -> digest.

    A ``save_to_disk`` folder is one digest of its rows; ``card.json`` leaves out its
    ``files`` (each file has its own digest here, and ``verify_entry`` matched them); hidden
    files and folders (temporaries, locks, run folders) and huggingface_hub's permission
    and symlink probes are not outputs. A recipe's ledger entry (``steps/<digest>.json``, the digest of
    a command line that names the run's folder) is keyed by its job's label.
    """
    import datasets

    found: dict[str, str] = {}
    if not folder.exists():
        return found
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        hidden = any(part.startswith(".") for part in relative.parts)
        probe = _HUB_PROBE.fullmatch(path.name) or _HUB_SYMLINK_PROBE.search(relative.as_posix())
        if hidden or path.name in SKIPPED or probe:
            continue
        key = relative.as_posix()
        if path.is_dir() and {"dataset_info.json", "dataset_dict.json"} & {
            p.name for p in path.iterdir()
        }:
            found[key] = _rows(datasets.load_from_disk(str(path)))
        elif not path.is_file() or any(part in found for part in _parents(key)):
            continue
        elif path.suffix == ".json":
            value = json.loads(path.read_text(encoding="utf-8"))
            if path.name == CARD_FILE:
                value.pop("files", None)
            if path.parent.name == "steps" and isinstance(value, dict) and "label" in value:
                key = f"{relative.parent.as_posix()}/{normalised(value['label'], str(root))}"
            found[key] = _json_digest(normalised(value, str(root)))
        elif path.name == RESULTS_FILE:  # the distinct records: see the module's docstring
            lines = path.read_text(encoding="utf-8").splitlines()
            records = {json.dumps(normalised(json.loads(x), str(root)), sort_keys=True)
                       for x in lines}  # fmt: skip
            found[key] = _json_digest(sorted(records))
        elif path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").splitlines()
            found[key] = _json_digest([normalised(json.loads(x), str(root)) for x in lines])
        else:
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def listing(folder: Path, parts) -> dict[str, tuple[int, int]]:
    """Every file under ``folder``'s ``parts`` with its size and modification time: equal
    before and after runs that only read them."""
    found = {}
    for part in parts:
        for path in sorted((folder / part).rglob("*")):
            if path.is_file():
                found[str(path)] = (path.stat().st_size, path.stat().st_mtime_ns)
    return found


def _parents(key: str) -> list[str]:
    parts = key.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def differences(got: dict[str, str], want: dict[str, str]) -> list[str]:
    """The paths whose digests differ between two fingerprints (missing or extra too)."""
    return sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
