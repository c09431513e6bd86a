"""Every writer of a zoo entry asks the store's one name check (``entry_folder``): a name
that is not a plain entry name is refused in one line, before any work, and nothing is
written anywhere (``adapt --name ../../../x`` must not write outside the zoo home)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from adapter_zoo.cli import main
from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.store import MAX_NAME_BYTES, NAME_RULE, zoo_home

ROOT = Path(__file__).resolve().parents[3]
CARD = {"mode": "adapter", "base_model": "minilm-l6"}


def _bad_names(tmp_path: Path) -> list[str]:
    return ["../x", str(tmp_path / "abs"), "a/b", "..", ".", ".hidden", "", " x", "a\nb",
            "a\\b", "\udcff", "caf\udce9", "x" * (MAX_NAME_BYTES + 1)]  # fmt: skip


def _forbidden(*_args, **_kwargs):
    raise AssertionError("reached the expensive part before the name was checked")


def _writers(tmp_path: Path, monkeypatch) -> dict:
    """Each writer of a zoo entry, called with a name; its expensive part (loading a model,
    reading a target) fails the test if it is reached."""
    from adapter_zoo.adapt.adapt import adapt, alias_entry
    from adapter_zoo.adapt.route import route_entry
    from adapter_zoo.adapt.soup import soup_entry
    from adapter_zoo.build import build_entry
    from adapter_zoo.cascade import train as cascade_train
    from adapter_zoo.cascade.storage import save_cascade
    from adapter_zoo.compose.entry import compose_entry
    from adapter_zoo.zoo import multicqa
    from adapter_zoo.zoo.store import save_entry
    from benchmarks import cascade as bench_cascade
    from benchmarks.finetune import finetune

    monkeypatch.setattr(multicqa, "load_legacy", _forbidden)
    monkeypatch.setattr(bench_cascade, "pairs_from_benchmark", _forbidden)
    monkeypatch.setattr(sys.modules["adapter_zoo.adapt.adapt"], "zoo_centroids", _forbidden)
    monkeypatch.setattr(sys.modules["adapter_zoo.adapt.zoo_members"], "zoo_centroids", _forbidden)
    monkeypatch.setattr("adapter_zoo.cascade.model.CascadeRanker.from_base", _forbidden)
    import adapter_zoo.adapt.targets  # noqa: F401  (modules the package's names shadow)
    import adapter_zoo.adapt.threads  # noqa: F401

    monkeypatch.setattr(sys.modules["adapter_zoo.zoo.domain"], "domain_centroid", _forbidden)
    monkeypatch.setattr(sys.modules["adapter_zoo.adapt.targets"], "read_target", _forbidden)
    monkeypatch.setattr(sys.modules["adapter_zoo.adapt.threads"], "read_threads", _forbidden)
    data = tmp_path / "parsed"
    from adapter_zoo.training import TrainingConfig, train
    from adapter_zoo.training.pretrain import pretrain
    from adapter_zoo.training.pretrain_config import PretrainConfig

    return {
        "save_entry": lambda n: save_entry(lambda f: (f / "w.bin").write_bytes(b"0"), n, CARD),
        "alias_entry": lambda n: alias_entry(n, "bm25"),
        "soup_entry": lambda n: soup_entry(n, ["beer", "bikes"]),
        "route_entry": lambda n: route_entry(n, ["beer", "bikes"], np.zeros((2, 384))),
        "compose_entry": lambda n: compose_entry(n, "fusion:bm25+tfidf"),
        "adapt": lambda n: adapt(["a question"], name=n, strategy="zero-shot"),
        "adapt auto (learns from the target)": lambda n: adapt(["a question"], name=n),
        "train": lambda n: train(
            TrainingConfig(mode="adapter", data=str(data), forums=("beer",), name=n)
        ),
        "pretrain": lambda n: pretrain(
            PretrainConfig(objective="ssp", corpus=str(tmp_path / "docs.jsonl"), name=n)
        ),
        "save_cascade": lambda n: save_cascade(object(), n),
        "cascade train_entry": lambda n: cascade_train.train_entry(
            n, pairs=[("q", "c", 1.0)], base=str(tmp_path / "no-base")
        ),
        "cascade train_on_benchmark": lambda n: bench_cascade.train_on_benchmark(n, "wikiqa"),
        "import_legacy": lambda n: multicqa.import_legacy(tmp_path / "legacy", n),
        "build_entry": lambda n: build_entry("beer", name=n, dump=tmp_path / "beer.7z"),
        "finetune": lambda n: finetune(
            "minilm-l6",
            SimpleNamespace(name="b", splits=("train", "dev")),
            "adapter",
            work_dir=tmp_path / "work",
            name=n,
        ),  # fmt: skip
    }


def _tree(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_every_writer_refuses_a_name_that_is_no_plain_entry_name(tmp_path, monkeypatch):
    home = zoo_home()
    home.mkdir(parents=True, exist_ok=True)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    writers = _writers(tmp_path, monkeypatch)
    before = (_tree(tmp_path), _tree(home))
    for writer, call in writers.items():
        for name in _bad_names(tmp_path):
            with pytest.raises(ZooError) as error:
                call(name)
            assert str(error.value) == f"invalid zoo entry name {name!r}: {NAME_RULE}", writer
            assert "\n" not in str(error.value) or "\n" in name
    assert (_tree(tmp_path), _tree(home)) == before


def test_the_walk_covers_every_module_that_writes_an_entry(tmp_path, monkeypatch):
    """A new writer of zoo entries (a caller of save_entry, entry_path or entry_folder) must
    join the walk above; the modules below are those it covers."""
    covered = {
        "adapter_zoo/adapt/adapt.py", "adapter_zoo/adapt/route.py", "adapter_zoo/adapt/soup.py",
        "adapter_zoo/adapt/learn.py", "adapter_zoo/adapt/zoo_members.py",
        "adapter_zoo/training/trainer.py",
        "adapter_zoo/training/train.py", "adapter_zoo/training/pretrain.py",
        "adapter_zoo/compose/entry.py",
        "adapter_zoo/zoo/multicqa.py", "adapter_zoo/build.py", "adapter_zoo/cascade/storage.py",
        "adapter_zoo/cascade/train.py", "benchmarks/finetune.py", "benchmarks/cascade.py",
        # pull_multicqa: its name is made of a revision (multicqa-<revision>), through
        # import_legacy; the quickstart checks its own fixed names before it replaces them
        "adapter_zoo/hub/downloads.py", "recipes/quickstart.py",
    }  # fmt: skip
    names = {"save_entry", "entry_path", "entry_folder"}
    writers = set()
    for package in ("adapter_zoo", "benchmarks", "recipes", "stackexchange"):
        for file in (ROOT / package).rglob("*.py"):
            relative = file.relative_to(ROOT).as_posix()
            calls = {
                getattr(node.func, "id", getattr(node.func, "attr", None))
                for node in ast.walk(ast.parse(file.read_text()))
                if isinstance(node, ast.Call)
            }
            if relative != "adapter_zoo/zoo/store.py" and calls & names:
                writers.add(relative)
    assert writers == covered


@pytest.mark.parametrize(
    "argv",
    [
        ["adapt", "--target", "{target}", "--name", "{name}", "--strategy", "zero-shot"],
        ["train", "--data", "{tmp}", "--forums", "beer", "--mode", "adapter", "--name", "{name}"],
        ["compose", "--name", "{name}", "--fusion", "bm25", "tfidf"],
        ["build", "beer", "--dump", "{tmp}/beer.7z", "--name", "{name}"],
        ["cascade-train", "--data", "{tmp}", "--name", "{name}", "--base", "{tmp}/base"],
    ],
    ids=lambda argv: argv[0],
)
def test_commands_refuse_a_path_as_entry_name_in_one_line(argv, tmp_path, monkeypatch, capsys):
    target = tmp_path / "target.txt"
    target.write_text("how do I brew a stout?\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    home = zoo_home()
    home.mkdir(parents=True, exist_ok=True)
    before = (_tree(tmp_path), _tree(home))
    for name in ("../../../x", str(tmp_path / "abs"), "a/b"):
        values = {"target": str(target), "name": name, "tmp": str(tmp_path)}
        code = main([part.format(**values) for part in argv])
        err = capsys.readouterr().err
        assert code == 2, err
        assert (
            err == f"adapter-zoo {argv[0]}: error: invalid zoo entry name {name!r}: {NAME_RULE}\n"
        )
    assert (_tree(tmp_path), _tree(home)) == before


def test_a_path_object_is_the_folder_a_python_caller_chose(tmp_path):
    from adapter_zoo.zoo.store import entry_folder, save_entry, verify_entry

    entry = save_entry(lambda f: (f / "w.bin").write_bytes(b"0"), tmp_path / "mine", CARD)
    assert entry == tmp_path / "mine" and verify_entry(entry)["name"] == "mine"
    assert entry_folder("beer") == zoo_home() / "beer"
    for folder in (Path("."), Path("..")):
        with pytest.raises(ZooError, match="invalid zoo entry folder"):
            entry_folder(folder)
