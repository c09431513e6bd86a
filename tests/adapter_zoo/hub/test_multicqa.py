"""The published MultiCQA layout on the Hub: one repo, one branch per forum, pickled, headless.

A small synthetic repository in that layout (``adapter_config.json`` and ``pytorch_adapter.bin``
with early adapter-transformers key names, on a tiny BERT instead of bert-base) is served by
olah and pulled through the same path as the real one.
"""

from __future__ import annotations

import io
import json

import pytest
import torch

import adapter_zoo
from adapter_zoo.hub import pull
from adapter_zoo.ranker.probe import pair_probe_cosine

REPO = "AdapterHub/bert-base-uncased_sts_stackexchange_pfeiffer"
FORUMS = ("travel_stackexchange_com", "cooking_stackexchange_com")


@pytest.fixture(scope="module")
def reference(tiny_bert_path):
    """Per forum: the adapters 1.x weights, and the same weights under MultiCQA's old names."""
    from adapters import SeqBnConfig

    from adapter_zoo.ranker.model import build_model

    model, _ = build_model(str(tiny_bert_path))
    torch.manual_seed(3)
    made = {}
    for forum in FORUMS:
        model.add_adapter(forum, config=SeqBnConfig(reduction_factor=2))
        ours = {}
        for key, tensor in model.state_dict().items():
            if f".adapters.{forum}." in key:
                ours[key] = torch.randn_like(tensor) * 0.3
        old = {
            k.replace(".output.adapters.", ".output.layer_text_task_adapters."): v
            for k, v in ours.items()
        }
        buffer = io.BytesIO()
        torch.save(old, buffer)
        config = {
            "config": {
                "original_ln_before": True,
                "residual_before_ln": True,
                "reduction_factor": 2,
                "non_linearity": "relu",
            },
            "hidden_size": 32,
            "model_type": "bert",
            "name": forum,
            "type": "text_task",
            "version": "1.0.0",
        }
        made[forum] = {
            "ours": ours,
            "files": {
                "adapter_config.json": json.dumps(config).encode(),
                "pytorch_adapter.bin": buffer.getvalue(),
            },
        }
    return made


@pytest.fixture
def served(hub, kit, reference, tiny_bert_path, monkeypatch):
    """The layout on olah; the converter's base model is the tiny BERT (no bert-base here)."""
    monkeypatch.setattr("adapter_zoo.hub.downloads.MULTICQA_BASE", str(tiny_bert_path))
    repo = hub.create(REPO)
    main = kit.git(repo, "rev-parse", "refs/heads/main")
    commits = {}
    for forum in FORUMS:
        kit.git(repo, "update-ref", f"refs/heads/{forum}", main)
        commits[forum] = kit.git_commit(repo, reference[forum]["files"], forum, branch=forum)
    return commits


def test_multicqa_branch_becomes_a_zoo_entry_with_a_new_head(served, reference, kit, go_offline):
    forum = "travel_stackexchange_com"
    folder = pull(REPO, revision=forum)
    assert folder == adapter_zoo.zoo_home() / f"multicqa-{forum}"
    card = adapter_zoo.zoo.verify_entry(folder)
    assert card["hub"] == {"repo": REPO, "commit": served[forum]}
    assert card["source"] == "multicqa" and card["head_trained"] is False
    assert sorted(card["files"]) == [
        "adapter.safetensors",
        "adapter_config.json",
        "head_config.json",
        "model_head.safetensors",
    ]
    ranker = adapter_zoo.load(REPO, revision=forum, device="cpu")
    loaded = ranker.model.state_dict()
    for key, tensor in reference[forum]["ours"].items():
        assert torch.equal(loaded[key], tensor), key  # every old weight under its new name
    assert str(ranker.model.active_adapters) == f"Stack[{forum}]"
    assert ranker.score([("a question", "an answer")]).shape == (1,)
    # the probe loading checked: the old weights move it off the base, and acted when loaded
    assert card["probe"]["cosine_to_base"] < 0.999
    got = pair_probe_cosine(ranker.model, ranker.tokenizer)
    assert round(got, 7) == card["probe"]["cosine_to_base"]
    # Pulled again (online, then offline): the converted entry is reused, not re-made.
    stamp = (folder / "adapter.safetensors").stat().st_mtime_ns
    assert pull(REPO, revision=forum) == folder
    go_offline()
    assert pull(REPO, revision=forum) == folder
    assert (folder / "adapter.safetensors").stat().st_mtime_ns == stamp


def test_moved_branch_is_converted_again(served, reference, hub, kit):
    forum = "cooking_stackexchange_com"
    first = adapter_zoo.zoo.verify_entry(pull(REPO, revision=forum))
    moved = kit.git_commit(hub.repo(REPO), {"README.md": b"moved\n"}, "touch", branch=forum)
    second = adapter_zoo.zoo.verify_entry(pull(REPO, revision=forum))
    assert first["hub"]["commit"] == served[forum] and second["hub"]["commit"] == moved
    assert second["files"] == first["files"]  # same weights, re-made from the new commit


def test_a_users_entry_of_the_same_name_is_never_replaced(served):
    from adapter_zoo.errors import ZooError
    from adapter_zoo.zoo.store import save_entry

    forum = "travel_stackexchange_com"
    mine = save_entry(
        lambda folder: (folder / "adapter.safetensors").write_bytes(b"my own travel adapter"),
        f"multicqa-{forum}", {"mode": "adapter", "base_model": "bert-base"},
    )  # fmt: skip
    before = {p.name: p.read_bytes() for p in mine.iterdir()}
    with pytest.raises(ZooError) as error:
        pull(REPO, revision=forum)
    assert str(error.value) == (
        f"zoo entry 'multicqa-{forum}' at {mine} is not a MultiCQA adapter pulled from the Hub; "
        f"move it away to pull {REPO}@{forum}"
    )
    assert {p.name: p.read_bytes() for p in mine.iterdir()} == before
