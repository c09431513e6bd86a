"""push() by its real result: what it sends becomes a commit olah serves, pulled back
bit-identical. The write endpoints are the ``upload_standin`` of conftest.py (olah has none)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.hub import list_remote, pull, push

PAIRS = [
    ("which glass for a stout", "a nonic pint"),
    ("why is my beer flat", "dead yeast"),
    ("what are hops", "the flowers of humulus lupulus"),
]


def scores(name_or_path):
    return adapter_zoo.load(str(name_or_path), device="cpu").score(PAIRS)


def test_push_then_pull_is_bit_identical(upload_standin, hub, entries, kit):
    sha = push(entries["beer"], "me/beer", tag="v1", commit_message="first beer", private=True)
    # One commit with every file of the entry plus the model card, nothing else.
    [sent] = upload_standin.sent
    files = kit.entry_files(entries["beer"])
    assert sorted(sent["files"]) == sorted(files)
    assert {k: v for k, v in sent["files"].items() if k != "README.md"} == {
        k: v for k, v in files.items() if k != "README.md"
    }
    assert sent["message"] == "first beer" and sent["deleted"] == []
    assert upload_standin.created == {"me/beer": {"private": True}}
    repo = hub.repo("me/beer")
    assert kit.git(repo, "rev-parse", "refs/heads/main") == sha
    assert kit.git(repo, "rev-parse", "v1^{commit}") == sha
    folder = pull("me/beer", revision="v1")
    assert folder.name == sha
    assert kit.entry_files(folder) == {**files, "README.md": sent["files"]["README.md"]}
    np.testing.assert_array_equal(scores(folder), scores(entries["beer"]))


def test_model_card_metadata(upload_standin, entries):
    push(entries["beer"], "me/beer-card")
    readme = upload_standin.sent[0]["files"]["README.md"].decode()
    _, front, body = readme.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["library_name"] == "adapter-transformers"
    assert "base_model" not in meta  # a local folder: the Hub could not link it
    assert (meta["license"], meta["language"]) == ("cc-by-sa-4.0", "en")
    assert {"adapters", "adapter-zoo", "beer.stackexchange.com"} <= set(meta["tags"])
    # forums are no Hub dataset ids, and dev scores are no benchmark results
    assert not {"datasets", "metrics", "model-index"} & set(meta)
    assert 'adapter_zoo.load("me/beer-card")' in body
    assert "## Dev scores" in body and "| dev_mrr@10 | 0.5100 |" in body
    # push read the head type: a classification head needs no adapter-zoo code to open
    assert "register_heads" not in body and "use_safetensors=True" in body


def test_model_card_base_model_is_a_hub_id():
    from adapter_zoo.hub import render_model_card

    card = {"name": "beer", "mode": "adapter", "base_model": "minilm-l6", "files": {}}
    meta = yaml.safe_load(render_model_card(card, "me/beer").split("---\n")[1])
    assert meta["base_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    card["base_model"] = "bert-base"
    meta = yaml.safe_load(render_model_card(card, "me/beer").split("---\n")[1])
    assert meta["base_model"] == "bert-base-uncased"
    assert "model-index" not in meta and "datasets" not in meta  # no scores, no forums


def test_second_push_to_a_branch_replaces_the_files(upload_standin, hub, entries, kit):
    first = push(entries["beer"], "me/zoo")
    second = push(entries["travel"], "me/zoo", revision="travel")
    repo = hub.repo("me/zoo")
    assert kit.git(repo, "rev-parse", "refs/heads/main") == first
    assert kit.git(repo, "rev-parse", f"{second}^") == first  # branched from main
    assert upload_standin.sent[1]["revision"] == "travel"
    assert (
        kit.entry_files(pull("me/zoo", revision="travel"))["card.json"]
        == (entries["travel"] / "card.json").read_bytes()
    )
    assert json.loads(kit.git_files(repo, "main")["card.json"])["name"] == "beer"


def test_stale_files_are_deleted_in_the_same_commit(upload_standin, hub, kit, entries):
    repo = hub.create("me/stale")
    kit.git_commit(repo, {"old/pytorch_adapter.bin": b"old weights"}, "old layout")
    sha = push(entries["beer"], "me/stale")
    assert upload_standin.sent[0]["deleted"] == ["old/pytorch_adapter.bin"]
    assert sorted(kit.git_files(repo, sha)) == sorted(
        [".gitattributes", *kit.entry_files(entries["beer"])]
    )


def test_failed_push_leaves_the_remote_at_its_previous_revision(upload_standin, hub, entries, kit):
    before = push(entries["beer"], "me/fail")
    # The fourth file of six: a push made of one commit per file would have landed three.
    upload_standin.fail_at = "model_head.safetensors"
    with pytest.raises(
        ConnectionError, match="connection lost while sending model_head.safetensors"
    ):
        push(entries["travel"], "me/fail", tag="v2")
    repo = hub.repo("me/fail")
    assert kit.git(repo, "rev-parse", "refs/heads/main") == before
    assert kit.git(repo, "tag", "--list") == ""
    assert json.loads((pull("me/fail") / "card.json").read_text())["name"] == "beer"


def test_push_refuses_a_corrupted_entry(upload_standin, entries, tmp_path, kit):
    import shutil

    copy = tmp_path / "beer"
    shutil.copytree(entries["beer"], copy)
    (copy / "adapter_config.json").write_text("{}")
    with pytest.raises(ZooError) as error:
        push(copy, "me/corrupt")
    assert str(error.value) == (
        f"{copy / 'adapter_config.json'}: corrupted (sha256 differs from the card of zoo "
        "entry 'beer')"
    )
    assert upload_standin.sent == [] and upload_standin.created == {}
    with pytest.raises(ZooError) as error:
        push("no-such-entry", "me/x")
    assert str(error.value) == (
        f"no-such-entry: no zoo entry of that name in {adapter_zoo.zoo_home()} "
        "and no card.json there"
    )


def test_push_refuses_card_files_outside_the_entry(upload_standin, entries, tmp_path):
    import shutil

    from adapter_zoo.zoo.store import sha256_file

    secret = tmp_path / "secret.txt"
    secret.write_text("not for the Hub")
    copy = shutil.copytree(entries["beer"], tmp_path / "entry" / "beer")
    card = json.loads((copy / "card.json").read_text())
    for name in (str(secret), "../../secret.txt"):
        files = {**card["files"], name: sha256_file(secret)}
        (copy / "card.json").write_text(json.dumps({**card, "files": files}))
        with pytest.raises(ZooError) as error:
            push(copy, "me/leak")
        assert str(error.value) == (
            f"{copy / 'card.json'}: file {name!r} is not a relative path inside the entry"
        )
    assert upload_standin.sent == [] and upload_standin.created == {}


def test_push_of_dot_dot_never_leaves_the_zoo_home():
    from adapter_zoo.hub.uploads import local_entry

    with pytest.raises(ZooError, match=r"^invalid zoo entry name '\.\.': a name is a plain"):
        local_entry("..")


def test_load_by_short_name_on_another_machine(
    upload_standin, hub, entries, tmp_path, monkeypatch, go_offline
):
    from huggingface_hub import constants

    expected = scores(entries["beer"])
    sha = push(entries["beer"], "me/beer-indexed", index=True)
    push(entries["travel"], "me/travel-indexed", index=True)
    index = list_remote()
    assert [e["name"] for e in index] == ["beer", "travel"]
    assert index[0] == {
        "name": "beer",
        "repo": "me/beer-indexed",
        "revision": sha,
        "base_model": json.loads((entries["beer"] / "card.json").read_text())["base_model"],
        "forums": ["beer.stackexchange.com"],
        "size": sum(len(v) for v in upload_standin.sent[0]["files"].values()),
        "scores": {"dev_mrr@10": 0.51, "dev_p@1": 0.25},
        "mode": "adapter",
        "encoder": "cross",
    }
    # "Another machine": an empty zoo and an empty Hugging Face cache.
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "other-zoo"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "other-cache"))
    np.testing.assert_array_equal(adapter_zoo.load("beer", device="cpu").score(PAIRS), expected)
    assert [c["name"] for c in adapter_zoo.list(remote=True)] == ["beer", "travel"]
    # Offline, the index and the entry come from the cache.
    go_offline()
    np.testing.assert_array_equal(adapter_zoo.load("beer", device="cpu").score(PAIRS), expected)
    with pytest.raises(ZooError) as error:
        adapter_zoo.hub.fetch("bear")
    assert str(error.value) == (
        f"'bear' is not in the zoo index {adapter_zoo.hub.index_repo()}; did you mean beer?"
    )
    with pytest.raises(ZooError) as error:
        adapter_zoo.hub.fetch("travel")  # listed, but never downloaded here
    assert str(error.value).startswith("me/travel-indexed@")
    assert "not in the Hugging Face cache" in str(error.value)


def test_index_offline_without_cache(hub, go_offline):
    from huggingface_hub import constants

    go_offline()
    with pytest.raises(ZooError) as error:
        list_remote()
    assert str(error.value) == (
        f"zoo index {adapter_zoo.hub.index_repo()}/index.json: not in the Hugging Face cache "
        f"({constants.HF_HUB_CACHE}) and the Hub cannot be reached; unset HF_HUB_OFFLINE to "
        "read it once"
    )


def test_cli_push_and_pull(upload_standin, entries, capsys):
    from adapter_zoo.cli import main

    assert main(["push", str(entries["beer"]), "me/cli", "--tag", "v1", "--message", "m"]) == 0
    sha = capsys.readouterr().out.strip()
    assert upload_standin.sent[0]["message"] == "m"
    assert main(["pull", "me/cli", "--revision", "v1"]) == 0
    assert capsys.readouterr().out.strip().endswith(f"/snapshots/{sha}")
    assert main(["pull", "not-a-repo"]) == 2
    assert capsys.readouterr().err.strip() == (
        "adapter-zoo pull: error: invalid Hub repository id 'not-a-repo': expected 'org/name'"
    )


def test_pushed_bi_encoder_entry_pulls_and_opens_with_the_card_lines(
    upload_standin, hub, tiny_sentence_bert_path, parsed_shipped
):
    """A bi-encoder entry round-trips through the Hub, and the model card's
    sentence-transformers lines, run on the pulled folder, embed exactly as adapter_zoo.load."""
    import re

    from adapter_zoo.training import TrainingConfig, train

    source = train(
        TrainingConfig(
            mode="adapter",
            data=str(parsed_shipped),
            forums=("beer",),
            name="beer-bi",
            base_model=str(tiny_sentence_bert_path),
            max_steps=2,
            batch_size=8,
            max_length=32,
            lr=1e-2,
        )  # fmt: skip
    )
    push(source, "me/beer-bi")
    readme = upload_standin.sent[0]["files"]["README.md"].decode()
    assert "bi-encoder (sentence embeddings, cosine) ranker" in readme
    folder = pull("me/beer-bi")
    np.testing.assert_array_equal(scores(folder), scores(source))

    snippet = re.findall(r"```python\n(.*?)```", readme, re.S)[-1]
    snippet = snippet.replace(f'"{tiny_sentence_bert_path}"', repr(str(tiny_sentence_bert_path)))
    namespace = {}
    exec(snippet.replace('snapshot_download("me/beer-bi")', repr(str(folder))), namespace)
    texts = ["your question", "an answer"]
    np.testing.assert_allclose(
        namespace["embeddings"], adapter_zoo.load(str(folder)).encode(texts), rtol=0, atol=1e-6
    )


def test_push_to_an_unreachable_hub_fails_fast_with_the_projects_error(dead_hub, entries):
    import time

    started = time.monotonic()
    with pytest.raises(ZooError) as error:
        push(entries["beer"], "me/beer")
    assert time.monotonic() - started < 5
    message = str(error.value)
    assert message.startswith(
        f"push {entries['beer']} to me/beer: the Hub at {dead_hub} cannot be reached ("
    )
    assert "Connection refused" in message and "\n" not in message


def test_push_offline_is_the_projects_error(entries):
    with pytest.raises(ZooError) as error:
        push(entries["beer"], "me/beer")
    assert str(error.value) == (
        f"push {entries['beer']} to me/beer: the Hub is switched off (HF_HUB_OFFLINE); "
        "unset it to go online"
    )


def test_index_on_an_unreachable_hub_fails_fast_without_retries(dead_hub, caplog):
    import logging
    import time

    from huggingface_hub import constants

    started = time.monotonic()
    with caplog.at_level(logging.WARNING), pytest.raises(ZooError) as error:
        list_remote()
    assert time.monotonic() - started < 5
    assert str(error.value) == (
        f"zoo index zoo/index/index.json: not in the Hugging Face cache ({constants.HF_HUB_CACHE}) "
        f"and the Hub cannot be reached; connect to {dead_hub} to read it once"
    )
    assert not [r for r in caplog.records if "Retrying" in r.getMessage()]


def test_model_card_of_a_composite_names_its_members_and_no_base():
    from adapter_zoo.hub import render_model_card

    card = {"name": "beer-fusion", "mode": "composite", "encoder": "composite",
            "base_model": "composite", "spec": "fusion:beer+bm25*0.1",
            "forums": ["beer.stackexchange.com"], "files": {}}  # fmt: skip
    text = render_model_card(card, "me/beer-fusion")
    meta = yaml.safe_load(text.split("---\n")[1])
    assert "base_model" not in meta  # no fake base id
    assert "`fusion:beer+bm25*0.1`: its members are loaded by name" in text
    assert "weights chosen on the dev split of beer.stackexchange.com." in text


def test_pushed_cascade_entry_pulls_and_scores_the_same(upload_standin, tiny_bert_path, tmp_path):
    """A cascade entry is written like every entry: its README is not hashed, so the Hub card
    that push puts in its place does not make the pulled entry look corrupted."""
    from adapter_zoo.cascade import CascadeConfig, CascadeRanker, run_cascade

    ranker = CascadeRanker.from_base(str(tiny_bert_path), CascadeConfig(exits=(1, 2)), device="cpu")
    entry = ranker.save(tmp_path / "cascade", card={"forums": ["beer.stackexchange.com"]})
    push(entry, "me/cascade")
    folder = pull("me/cascade")
    # the Hub card's "How to load" lines open it
    snippet = (folder / "README.md").read_text().split("```python\n", 1)[1].split("```", 1)[0]
    namespace = {}
    exec(snippet, namespace)
    assert isinstance(namespace["ranker"], CascadeRanker)
    lists = [(query, [candidate for _, candidate in PAIRS]) for query, _ in PAIRS]
    pulled = run_cascade(CascadeRanker.load(folder, device="cpu"), lists, alpha=0.3)
    local = run_cascade(ranker, lists, alpha=0.3)
    for a, b in zip(pulled.scores, local.scores, strict=True):
        np.testing.assert_array_equal(a, b)


def test_pushed_card_carries_no_local_path_and_the_local_card_keeps_it(
    upload_standin, entries, tmp_path
):
    import shutil

    folder = tmp_path / "beer-data"
    shutil.copytree(entries["beer"], folder)
    data = str(tmp_path / "home" / "me" / "parsed")
    card = json.loads((folder / "card.json").read_text())
    card["training"] = {"data": data, "venv": "/opt/venv/lib/python3.11/site-packages/m"}
    (folder / "card.json").write_text(json.dumps(card, indent=2))
    push(folder, "me/beer-data")
    sent = upload_standin.sent[0]["files"]
    pushed = json.loads(sent["card.json"])
    assert pushed["training"] == {"data": "parsed", "venv": "m"}
    assert pushed["base_model"] == card["base_model"]  # loading needs it as named
    for name in ("card.json", "README.md", "adapter_config.json"):
        assert data.encode() not in sent[name] and b"/opt/venv" not in sent[name]
    assert json.loads((folder / "card.json").read_text())["training"]["data"] == data


def test_a_pulled_entry_is_refused_when_its_adapter_no_longer_acts(
    upload_standin, tiny_bert_path, kit
):
    """The probe travels with the card: a pulled entry is checked as a local one is. Its
    second revision's adapter does nothing (up-projections zeroed, the hash made to match),
    so every file verifies and only the probe tells."""
    from safetensors.numpy import load_file, save_file

    from adapter_zoo.ranker.probe import pair_probe_record
    from stackexchange.io import sha256_file

    entry = kit.make_adapter_entry(tiny_bert_path, "acts", 3, ["beer.stackexchange.com"])
    ranker = adapter_zoo.load(str(entry), device="cpu")  # a card without a probe loads
    card = json.loads((entry / "card.json").read_text())
    card["probe"] = pair_probe_record(ranker.model, ranker.tokenizer)
    (entry / "card.json").write_text(json.dumps(card))
    first = push(entry, "me/acts")
    np.testing.assert_array_equal(scores(pull("me/acts", revision=first)), ranker.score(PAIRS))
    weights = entry / "adapter.safetensors"
    tensors = load_file(str(weights))
    save_file({k: v * 0 if "adapter_up" in k else v for k, v in tensors.items()}, str(weights))
    card["files"]["adapter.safetensors"] = sha256_file(weights)
    (entry / "card.json").write_text(json.dumps(card))
    second = push(entry, "me/acts")
    folder = pull("me/acts", revision=second)
    with pytest.raises(ZooError) as refused:
        adapter_zoo.load("me/acts", revision=second, device="cpu")
    assert str(refused.value) == (
        f"{folder}: zoo entry 'acts' does not act as saved (its probe pair's cosine to the "
        f"base is 1.000000, its card says {card['probe']['cosine_to_base']:.6f}): its weights "
        "are not active; refused"
    )
