"""A zoo entry is untrusted input: loading one runs no code from it and reads nothing outside it,
and nothing pushed carries a path of the machine that made it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.zoo import save_entry, verify_entry

COMMIT = "c0ffee" + "0" * 34
EVIL_MODULE = "custom_st_module.Evil"


def _evil_code(marker: Path) -> str:
    return (
        f"open({str(marker)!r}, 'w').close()\n"
        "import torch\n"
        "class Evil(torch.nn.Module):\n"
        "    @staticmethod\n"
        "    def load(*args, **kwargs):\n"
        "        return Evil()\n"
    )


def _bi_full_entry(base: Path, name: str, rewrite=None) -> Path:
    """A full bi-encoder entry of the tiny sentence BERT; ``rewrite(model_dir)`` changes its
    files before they are hashed (a hostile author writes a card that matches)."""
    from adapter_zoo.biencoder.encoder import build_sentence_model
    from adapter_zoo.biencoder.layouts import write_bi_full

    model = build_sentence_model(str(base), with_adapters=False, device="cpu")

    def writer(folder):
        write_bi_full(model, folder)
        if rewrite is not None:
            rewrite(folder / "model")

    card = {"mode": "full", "encoder": "bi", "layout": "full", "base_model": str(base)}
    return save_entry(writer, name, card)


def _add_evil_module(marker: Path):
    def rewrite(model_dir: Path) -> None:
        modules = json.loads((model_dir / "modules.json").read_text())
        modules.append({"idx": len(modules), "name": "evil", "path": "", "type": EVIL_MODULE})
        (model_dir / "modules.json").write_text(json.dumps(modules))
        (model_dir / "custom_st_module.py").write_text(_evil_code(marker))

    return rewrite


def _as_hub_cache(entry: Path, cache: Path, repo_id: str) -> Path:
    """``entry`` laid out in a Hugging Face cache the way ``pull`` stores it: files in
    ``blobs/`` by hash, the snapshot's files symlinks to them, ``refs/main`` the commit."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / COMMIT
    for file in sorted(p for p in entry.rglob("*") if p.is_file()):
        data = file.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / file.relative_to(entry)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    return snapshot


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    from huggingface_hub import constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


def test_full_entry_with_module_file_is_refused_and_runs_nothing(
    tiny_sentence_bert_path, tmp_path, hub_cache, capsys
):
    from adapter_zoo.cli import main

    marker = tmp_path / "code-ran"
    entry = _bi_full_entry(tiny_sentence_bert_path, "evil", _add_evil_module(marker))
    expected = (
        f"{entry / 'model' / 'modules.json'}: module 3 ('evil') is {EVIL_MODULE!r}, not a "
        "sentence-transformers module the zoo knows (Transformer, Pooling, Normalize, Dense, "
        "Dropout, LayerNorm, WeightedLayerPooling); refused, nothing of it was run"
    )
    for name in ("evil", str(entry)):
        with pytest.raises(ZooError) as error:
            adapter_zoo.load(name, device="cpu")
        assert str(error.value) == expected
    # the same entry pulled: a snapshot in the Hugging Face cache, loaded by its Hub name
    snapshot = _as_hub_cache(entry, hub_cache, "someone/evil")
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("someone/evil", device="cpu")
    pulled = "someone/evil@main: " + expected.replace(str(entry), str(snapshot))
    assert str(error.value) == pulled
    fixtures = Path(__file__).resolve().parents[2] / "benchmarks" / "fixtures"
    code = main(
        ["evaluate", "--model", "someone/evil", "--benchmark", "wikiqa-raw"]
        + ["--data-dir", str(fixtures)]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "adapter-zoo evaluate: error: " + pulled
    assert not marker.exists()


@pytest.mark.parametrize(
    "ref",
    [
        "os.system",  # an installed module, not a sentence-transformers one
        "sentence_transformers.models.Router",  # names further classes in its own config
        "sentence_transformers.util.misc.import_from_string",  # the right package, no module
        "sentence_transformers.models.Evil",
    ],
)
def test_a_modules_json_naming_an_unknown_class_is_refused(tiny_sentence_bert_path, ref):
    def rewrite(model_dir: Path) -> None:
        modules = json.loads((model_dir / "modules.json").read_text())
        modules[1]["type"] = ref
        (model_dir / "modules.json").write_text(json.dumps(modules))

    entry = _bi_full_entry(tiny_sentence_bert_path, "odd", rewrite)
    with pytest.raises(ZooError, match=r"modules.json: module 1 \('1'\) is .*refused"):
        verify_entry(entry)


def test_a_known_full_bi_entry_still_loads_from_the_zoo_and_the_hub_cache(
    tiny_sentence_bert_path, hub_cache
):
    entry = _bi_full_entry(tiny_sentence_bert_path, "plain")
    modules = json.loads((entry / "model" / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[-1] for m in modules] == [
        "Transformer",
        "Pooling",
        "Normalize",
    ]
    local = adapter_zoo.load("plain", device="cpu").score([("a stout", "a dark beer")])
    _as_hub_cache(entry, hub_cache, "someone/plain")
    pulled = adapter_zoo.load("someone/plain", device="cpu").score([("a stout", "a dark beer")])
    assert pulled.tolist() == local.tolist()  # the same computation, repeated


def test_an_auto_map_in_any_config_of_an_entry_is_refused(tiny_sentence_bert_path, tmp_path):
    marker = tmp_path / "code-ran"

    def rewrite(model_dir: Path) -> None:
        config = json.loads((model_dir / "config.json").read_text())
        config["auto_map"] = {"AutoModel": "custom.Model"}
        (model_dir / "config.json").write_text(json.dumps(config))
        (model_dir / "custom.py").write_text(_evil_code(marker))

    entry = _bi_full_entry(tiny_sentence_bert_path, "mapped", rewrite)
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("mapped", device="cpu")
    assert str(error.value) == (
        f"{entry / 'model' / 'config.json'}: its 'auto_map' names code to import; a zoo entry "
        "runs no code of its own, refused"
    )
    assert not marker.exists()


def test_a_symlink_inside_an_entry_is_refused_and_never_pushed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("private")

    def writer(folder):
        (folder / "w.bin").symlink_to(secret)

    entry = save_entry(writer, "linked", {"mode": "adapter", "base_model": "minilm-l6"})
    with pytest.raises(ZooError) as error:
        verify_entry(entry)
    assert str(error.value) == (
        f"{entry / 'w.bin'}: a symbolic link inside zoo entry 'linked' (to {str(secret)!r}); "
        "an entry must hold its own files, refused"
    )
    # a linked folder is refused too, whatever it holds
    (entry / "w.bin").unlink()
    (entry / "w.bin").write_bytes(b"private")  # hash differs from the card: refused anyway
    (entry / "sub").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ZooError, match=r"/sub: a symbolic link inside zoo entry 'linked'"):
        verify_entry(entry)
    from adapter_zoo.hub import push

    with pytest.raises(ZooError, match=r"/sub: a symbolic link inside zoo entry 'linked'"):
        push("linked", "me/linked")  # refused before the Hub is asked anything


def test_a_fusion_card_naming_a_folder_outside_the_entry_is_refused(tmp_path):
    outside = "../../../../etc"

    def writer(folder):
        (folder / "fusion").mkdir()
        (folder / "fusion" / "w.bin").write_bytes(b"abc")

    card = {"mode": "fusion", "layout": "fusion", "base_model": "minilm-l6", "adapters": []}
    for adapters, named in (([outside], outside), (["ok", "/etc"], "/etc")):
        entry = save_entry(writer, "fused", {**card, "adapters": adapters}, overwrite=True)
        with pytest.raises(ZooError) as error:
            adapter_zoo.load("fused", device="cpu")
        assert str(error.value) == (
            f"{entry / 'card.json'}: adapters names {named!r}, not a relative path inside the "
            "entry; refused"
        )


@pytest.mark.parametrize("member", ["/tmp/x", "../other", "sbert:/home/me/model", "~/m"])
def test_a_composite_member_that_is_a_local_path_is_refused(member):
    spec = f"fusion:bm25+{member}"
    card = {"mode": "composite", "base_model": "bm25", "spec": spec}
    entry = save_entry(lambda folder: None, "comp", card)
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("comp")
    assert str(error.value) == (
        f"{entry / 'card.json'}: composite member {member!r} is a path outside the entry; a "
        "composite names its members by zoo or Hub name, refused"
    )


def test_saved_configs_and_pushed_cards_carry_no_local_path(tiny_bert_path, tmp_path):
    """adapters' adapter_config.json records the base's path; the card the training data's."""
    from adapters import SeqBnConfig

    from adapter_zoo.ranker.model import add_ranking_head, build_model
    from adapter_zoo.zoo.layouts import write_adapter
    from adapter_zoo.zoo.untrusted import without_local_paths

    model, _ = build_model(str(tiny_bert_path))
    model.add_adapter("beer", config=SeqBnConfig(reduction_factor=4))
    add_ranking_head(model, "beer")
    data = str(tmp_path / "home" / "me" / "parsed")
    card = {
        "mode": "adapter",
        "layout": "adapter",
        "base_model": "tiny-bert-short",
        "head": "beer",
        "training": {"data": data, "lr": 0.001},
        "transfer": {"data": data, "forums": ["beer"]},
    }
    entry = save_entry(lambda folder: write_adapter(model, "beer", folder), "beer", card)
    configs = {p.name: json.loads(p.read_text()) for p in entry.rglob("*.json")}
    assert configs["adapter_config.json"]["model_name"] == "tiny-bert-short"
    for text in (p.read_text() for p in entry.rglob("*.json") if p.name != "card.json"):
        assert str(tiny_bert_path) not in text and str(tmp_path) not in text
    local = verify_entry(entry)
    assert local["training"]["data"] == data  # kept for the tools that read the data again
    public = without_local_paths(local)
    assert public["training"] == {"data": "parsed", "lr": 0.001}
    assert public["transfer"]["data"] == "parsed"
    assert str(tmp_path) not in json.dumps(public)


def test_hub_snapshot_links_into_its_blobs_pass_but_a_planted_blobs_link_does_not(tmp_path):
    entry = save_entry(
        lambda folder: (folder / "w.bin").write_bytes(b"abc"),
        "ok", {"mode": "adapter", "base_model": "minilm-l6"},
    )  # fmt: skip
    snapshot = _as_hub_cache(entry, tmp_path / "cache", "me/ok")
    assert verify_entry(snapshot)["name"] == "ok"
    blobs = snapshot.parents[1] / "blobs"
    elsewhere = tmp_path / "elsewhere"
    shutil.move(blobs, elsewhere)
    blobs.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ZooError, match=r"a symbolic link inside zoo entry 'ok'"):
        verify_entry(snapshot)
