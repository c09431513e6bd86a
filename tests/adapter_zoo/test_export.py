"""export: a full cross-encoder entry as a CrossEncoder folder scoring as the Ranker; refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.cli import main
from adapter_zoo.training import TrainingConfig
from adapter_zoo.training.models import setup_model, write_entry_weights
from adapter_zoo.zoo import save_entry, verify_entry, zoo_home

PAIRS = [
    ("why is my stout flat", "dead yeast"),
    ("what are hops", "flowers of the hop plant, for bitterness and aroma"),
    ("which glass for lager", "a tall pilsner glass, rinsed cold"),
]


def make_entry(parsed, base, mode, name):
    """A cross-encoder entry of ``mode`` on ``base`` with randomised trainable weights."""
    config = TrainingConfig(
        mode=mode, data=str(parsed), forums=("beer",), name=name, base_model=str(base),
        encoder="cross", max_length=64,
    )  # fmt: skip
    torch.manual_seed(7)
    model, tokenizer, setup = setup_model(config)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.add_(torch.randn_like(parameter) * 0.1)
    card = {
        "mode": mode, "encoder": "cross", "layout": config.layout, "base_model": str(base),
        "forums": ["beer.stackexchange.com"], "head": setup["head"], "max_length": 64,
        "scores": {"dev_map": 0.5},
    }  # fmt: skip
    return save_entry(
        lambda folder: write_entry_weights(model, tokenizer, config, setup, folder), name, card
    )


def card_entry(name, **card):
    """An entry whose card alone decides the refusal (a placeholder weights file)."""
    fields = {"base_model": "minilm-l6", "forums": [], **card}
    return save_entry(lambda folder: (folder / "weights.bin").write_bytes(b"0"), name, fields)


@pytest.fixture
def full_entry(parsed_fixture, tiny_bert_path):
    return make_entry(parsed_fixture, tiny_bert_path, "full", "beer-full")


def test_export_predicts_the_rankers_scores(full_entry, tmp_path):
    from sentence_transformers.cross_encoder import CrossEncoder

    out = adapter_zoo.export_cross_encoder("beer-full", tmp_path / "ce")
    assert out == tmp_path / "ce"
    model = CrossEncoder(str(out))
    # Two code paths (CrossEncoder's batching and padding, the Ranker's length-sorted
    # batches) through float kernels agree to about 1e-7, not to the bit, once thread counts
    # or instruction sets differ (8.9e-08 seen on a second machine).
    np.testing.assert_allclose(
        model.predict(PAIRS),
        adapter_zoo.load("beer-full", device="cpu").score(PAIRS),
        rtol=0,
        atol=1e-6,
    )
    assert isinstance(model.activation_fn, torch.nn.Identity) and model.max_seq_length == 64
    assert json.loads((out / "adapter_zoo_export.json").read_text()) == {
        "entry": "beer-full",
        "source": str(full_entry),
    }
    readme = (out / "README.md").read_text()
    assert "license: cc-by-sa-4.0" in readme and "library_name: sentence-transformers" in readme
    assert "Trained on user contributions to beer.stackexchange.com" in readme


def test_cli_export_writes_and_rewrites_its_own_folder(full_entry, tmp_path, capsys):
    out = tmp_path / "ce"
    assert main(["export", "beer-full", "--out", str(out)]) == 0
    assert capsys.readouterr().out == (
        f"wrote {out} (sentence_transformers.CrossEncoder({str(out)!r}))\n"
    )
    assert main(["export", "beer-full", "--out", str(out)]) == 0  # an earlier export: replaced


REFUSALS = {
    "adapter": "it is an adapter entry (adapter), and a CrossEncoder runs no adapters; load it "
    "with the adapters library (see its model card)",
    "pair-cosine": "its pair_cosine head (a scaled cosine of the two texts' mean token states) "
    "has no CrossEncoder equivalent",
    "fusion": "it is an AdapterFusion entry, and a CrossEncoder runs no adapters",
    "bi": "it is a bi-encoder with bottleneck adapters, which do not merge into the base's "
    "weights, so no plain sentence-transformers folder reproduces it; open it with "
    "sentence-transformers and the adapters library as the lines in {entry}/README.md show, "
    "or with adapter_zoo.load",
    "bi-full": "it is a bi-encoder, and its model/ folder already is a sentence-transformers "
    "folder: SentenceTransformer('{entry}/model')",
    "composite": "it is a composite (fusion:a+bm25*0.1); export its members instead",
    "cascade": "it is a cascade (early exits); load it with adapter_zoo.load",
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_cli_refuses_what_a_cross_encoder_cannot_reproduce(
    case, parsed_fixture, tiny_bert_path, tiny_sentence_bert_path, tmp_path, capsys
):
    if case == "adapter":
        make_entry(parsed_fixture, tiny_bert_path, "adapter", case)
    elif case == "pair-cosine":
        make_entry(parsed_fixture, tiny_sentence_bert_path, "full", case)
    elif case == "fusion":
        card_entry(case, mode="fusion", layout="fusion", adapters=["a", "b"])
    elif case == "bi":
        card_entry(case, mode="adapter", layout="adapter", encoder="bi")
    elif case == "bi-full":
        card_entry(case, mode="full", layout="full", encoder="bi")
    elif case == "composite":
        card_entry(case, mode="composite", encoder="composite", spec="fusion:a+bm25*0.1")
    else:
        card_entry(case, mode="cascade", cascade={"exits": [1], "alpha": 0.3, "adapter": None})
    out = tmp_path / "out"
    assert main(["export", case, "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo export: error: cannot export {case!r} as a CrossEncoder: "
        f"{REFUSALS[case].replace('{entry}', str(zoo_home() / case))}\n"
    )
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary folder


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("fusion:beer+bm25*0.1", "it is a composition; export its members instead"),
        (
            "sbert:minilm-l6",
            "it is a bi-encoder (the base used zero-shot), a sentence-transformers model",
        ),
    ],
)
def test_compositions_and_zero_shot_bi_encoders_are_refused(name, why, tmp_path):
    with pytest.raises(ZooError) as error:
        adapter_zoo.export_cross_encoder(name, tmp_path / "out")
    assert str(error.value) == f"cannot export {name!r} as a CrossEncoder: {why}"
    assert not (tmp_path / "out").exists()


def test_a_folder_it_did_not_write_is_kept(full_entry, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["export", "beer-full", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo export: error: {out}: already exists and is not a CrossEncoder export "
        "written by adapter-zoo; move it away or pass --overwrite\n"
    )
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_the_entry_itself_is_never_the_output(full_entry):
    with pytest.raises(ZooError) as error:
        adapter_zoo.export_cross_encoder("beer-full", full_entry, overwrite=True)
    assert str(error.value) == (
        f"{full_entry}: input inside or equal to the output {full_entry}; choose another output"
    )
    assert verify_entry(full_entry)["name"] == "beer-full"  # untouched
