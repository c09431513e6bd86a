"""The Hub model card: its adapters-only lines open a cross-encoder adapter entry and score
bit-identically to adapter_zoo.load; licence, attribution and dev scores in its metadata."""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml

import adapter_zoo
from adapter_zoo.hub.model_card import entry_head_type, render_model_card
from adapter_zoo.zoo import verify_entry


def adapters_lines(folder, repo_id: str) -> str:
    """The card's last Python block for the entry at ``folder``, as ``push`` renders it."""
    card = render_model_card(verify_entry(folder), repo_id, head_type=entry_head_type(folder))
    return re.findall(r"```python\n(.*?)```", card, re.S)[-1]


def run_lines(lines: str, repo_id: str, folder) -> dict:
    """Run the card's lines with the Hub download swapped for the entry's local folder."""
    namespace = {}
    exec(lines.replace(f'snapshot_download("{repo_id}")', repr(str(folder))), namespace)
    return namespace


@pytest.fixture
def pair_cosine_entry(tiny_sentence_bert_path, kit):
    return kit.make_adapter_entry(tiny_sentence_bert_path, "beer_st", 3, ["beer"])


@pytest.mark.parametrize("head", ["classification", "pair_cosine"])
def test_card_lines_open_the_adapter_entry_without_adapter_zoo_loading(
    head, entries, pair_cosine_entry
):
    """adapters + transformers alone (plus adapter-zoo's head registration for its own
    pair-cosine head) score exactly as adapter_zoo.load(...).score(pairs)."""
    folder = entries["beer"] if head == "classification" else pair_cosine_entry
    assert entry_head_type(folder) == head
    lines = adapters_lines(folder, "me/beer")
    imports = {line for line in lines.splitlines() if "import" in line}
    if head == "classification":
        assert not any("adapter_zoo" in line for line in imports)
    else:
        assert "from adapter_zoo import register_heads" in imports
    namespace = run_lines(lines, "me/beer", folder)
    assert namespace["model"].heads[namespace["name"]].config["head_type"] == head
    expected = adapter_zoo.load(str(folder), device="cpu").score(namespace["pairs"])
    # the card's plain batch and score()'s length-sorted batches: two code paths through
    # float kernels, equal to a tolerance (not to the bit on every machine)
    np.testing.assert_allclose(namespace["scores"].numpy(), expected, rtol=0, atol=1e-6)


def test_without_use_safetensors_the_plain_load_fails_as_the_card_says(entries):
    lines = adapters_lines(entries["beer"], "me/beer")
    assert "name = model.load_adapter(folder, set_active=True, use_safetensors=True)" in lines
    with pytest.raises(OSError) as error:
        run_lines(lines.replace(", use_safetensors=True", ""), "me/beer", entries["beer"])
    assert str(error.value).startswith("Unable to load weights from pytorch checkpoint file")


def meta_and_body(card: dict) -> tuple[dict, str]:
    _, front, body = render_model_card({"files": {}, **card}, "me/x").split("---\n", 2)
    return yaml.safe_load(front), body


def test_forum_trained_weights_are_cc_by_sa_with_attribution_and_dev_scores():
    meta, body = meta_and_body(
        {
            "name": "beer",
            "mode": "adapter",
            "base_model": "minilm-l6",
            "forums": ["beer"],
            "scores": {"dev_map": 0.5, "dev_p@1": 0.25},
        }  # fmt: skip
    )
    assert (meta["license"], meta["language"]) == ("cc-by-sa-4.0", "en")
    assert not {"datasets", "metrics", "model-index"} & set(meta)
    assert (
        "Trained on user contributions to beer.stackexchange.com from the Stack Exchange data "
        "dump (archive.org), licensed under CC BY-SA 4.0 (older posts CC BY-SA 2.5 or 3.0); "
        "these weights are shared under CC BY-SA 4.0. Attribution: Stack Exchange, the site, "
        "each post (`https://<site>/q/<id>`) and its author."
    ) in body
    assert (
        "## Dev scores\n\nMeasured while training on the dev split of its own training data "
        "(held-out questions, never a test set) to pick the checkpoint: dev scores, not "
        "benchmark results.\n\n| metric | value |\n|---|---|\n| dev_map | 0.5000 |\n"
        "| dev_p@1 | 0.2500 |\n"
    ) in body


@pytest.mark.parametrize(
    ("forums", "licence", "language"),
    [
        (["beer.stackexchange.com", "ru.stackoverflow.com"], "cc-by-sa-4.0", None),
        (["wikiqa"], None, None),  # a benchmark fine-tune: not Stack Exchange posts
        ([], None, None),
    ],
)
def test_licence_and_language_follow_the_forums(forums, licence, language):
    meta, body = meta_and_body(
        {"name": "x", "mode": "full", "base_model": "bert-base", "forums": forums}
    )
    assert (meta.get("license"), meta.get("language")) == (licence, language)
    assert ("Trained on user contributions" in body) == (licence is not None)


def test_a_composite_claims_no_licence_of_its_own():
    meta, _ = meta_and_body(
        {
            "name": "f",
            "mode": "composite",
            "base_model": "composite",
            "spec": "fusion:beer+bm25",
            "forums": ["beer.stackexchange.com"],
        }  # fmt: skip
    )
    assert "license" not in meta and "base_model" not in meta
