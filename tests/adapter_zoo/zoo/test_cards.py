"""The local card (an entry's README.md, the one renderer the Hub card also comes from):
licence, attribution, dev scores, and a load line that opens every kind."""

from __future__ import annotations

import yaml

from adapter_zoo.zoo import save_entry

ATTRIBUTION = (
    "Trained on user contributions to beer.stackexchange.com from the Stack Exchange data dump "
    "(archive.org), licensed under CC BY-SA 4.0 (older posts CC BY-SA 2.5 or 3.0); these "
    "weights are shared under CC BY-SA 4.0. Attribution: Stack Exchange, the site, each post "
    "(`https://<site>/q/<id>`) and its author."
)


def saved_readme(**card) -> str:
    path = save_entry(lambda folder: (folder / "w.bin").write_bytes(b"0"), "entry", card)
    return (path / "README.md").read_text()


def test_local_card_of_forum_trained_weights():
    readme = saved_readme(
        mode="adapter", base_model="minilm-l6", forums=["beer.stackexchange.com"],
        scores={"dev_map": 0.61}, seed=0,
    )  # fmt: skip
    _, front, body = readme.split("---\n", 2)
    assert yaml.safe_load(front) == {  # the Hub card's metadata: one renderer for both
        "base_model": "sentence-transformers/all-MiniLM-L6-v2",
        "library_name": "adapter-transformers",
        "license": "cc-by-sa-4.0",
        "language": "en",
        "pipeline_tag": "text-ranking",
        "tags": ["adapters", "adapter-transformers", "adapter-zoo", "text-ranking", "adapter",
                 "beer.stackexchange.com"],
    }  # fmt: skip
    assert ATTRIBUTION in body and "adapter_zoo.load('entry')" in body
    assert "## Dev scores\n\nMeasured while training on the dev split" in body
    assert "| dev_map | 0.6100 |" in body and "**scores**" not in body


def test_local_card_without_forum_data_claims_no_licence():
    readme = saved_readme(mode="full", base_model="bert-base", forums=["wikiqa"])
    _, front, body = readme.split("---\n", 2)
    assert "license" not in yaml.safe_load(front) and "CC BY-SA" not in readme
    assert body.startswith("\n# entry\n\nA `full` cross-encoder ranker from the adapter zoo")


def test_cascade_card_carries_the_licence_of_its_forums():
    readme = saved_readme(
        mode="cascade", base_model="minilm-l6", forums=["beer"],
        cascade={"exits": [2, 4], "alpha": 0.3, "adapter": None},
    )  # fmt: skip
    _, front, body = readme.split("---\n", 2)
    assert yaml.safe_load(front)["license"] == "cc-by-sa-4.0"
    assert body.startswith("\n# entry\n") and ATTRIBUTION in body
    assert "ranker = adapter_zoo.load('entry')" in body  # load opens cascades too
