"""LoRA beside SeqBn: ``train --method lora`` for both encoders, the card's record of it,
bit-identical reloads, continuing a LoRA entry, the refusals, and the merged export that
plain sentence-transformers opens without the adapters library or adapter-zoo.

Bi-encoders train on the two shipped forum archives (real data) with the tiny random
sentence-BERT; cross-encoders on the hand-made fixture with the tiny random BERT.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo import ZooError
from adapter_zoo.cli import main
from adapter_zoo.export import MERGED_TOLERANCE, export_merged_lora
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.models import setup_model, write_entry_weights
from adapter_zoo.zoo import save_entry

# one xdist process runs this module (--dist loadgroup): bi_lora is a module fixture
pytestmark = pytest.mark.xdist_group("lora")

BEER = "beer.stackexchange.com"
BICYCLES = "bicycles.meta.stackexchange.com"
# A high rate, so that 4 steps move the tiny random model on dev.
FAST = {"batch_size": 8, "max_length": 16, "max_steps": 4, "eval_steps": 2, "seed": 0,
        "lr": 1e-2, "dev_queries": 16}  # fmt: skip
PAIRS = [
    ("why is my stout flat", "dead yeast"),
    ("what are hops", "flowers of the hop plant, for bitterness and aroma"),
    ("which glass for lager", "a tall pilsner glass, rinsed cold"),
    ("how do I true a wheel", "tighten the spokes on the side the rim must move away from"),
]
# Run in a fresh interpreter: only sentence-transformers is imported, then the modules a
# user of the exported folder would need are listed.
PLAIN_OPEN = """
import json, sys
import numpy as np
from sentence_transformers import {cls}
folder, pairs = sys.argv[1], json.loads(sys.argv[2])
model = {cls}(folder, device="cpu")
if "{cls}" == "CrossEncoder":
    scores = model.predict(pairs, show_progress_bar=False)
else:
    q = model.encode([p[0] for p in pairs], normalize_embeddings=True)
    c = model.encode([p[1] for p in pairs], normalize_embeddings=True)
    scores = np.einsum("ij,ij->i", q, c)
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & {{"adapters", "adapter_zoo"}})
print(json.dumps({{"scores": [float(s) for s in scores], "loaded": loaded}}))
"""


def bi_config(parsed, base, name, forums=("beer",), **extra):
    return TrainingConfig(
        mode="adapter", data=str(parsed), forums=forums, name=name, base_model=str(base),
        **{**FAST, "method": "lora", **extra},
    )  # fmt: skip


def open_plainly(folder, cls: str) -> dict:
    """Scores of PAIRS from ``folder`` opened by sentence-transformers alone (a subprocess)."""
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_OPEN.format(cls=cls), str(folder), json.dumps(PAIRS)],
        capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def cross_entry(parsed, base, name, method="lora"):
    """A cross-encoder adapter entry on ``base`` with randomised adapter and head weights
    (LoRA's B starts at zero, which would make the merge a no-op)."""
    config = TrainingConfig(
        mode="adapter", data=str(parsed), forums=("beer",), name=name, base_model=str(base),
        encoder="cross", max_length=64, method=method,
    )  # fmt: skip
    torch.manual_seed(7)
    model, tokenizer, setup = setup_model(config)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.add_(torch.randn_like(parameter) * 0.1)
    card = {
        "mode": "adapter", "encoder": "cross", "layout": "adapter", "base_model": str(base),
        "forums": [BEER], "head": setup["head"], "max_length": 64, "scores": {"dev_map": 0.5},
    }  # fmt: skip
    return save_entry(
        lambda folder: write_entry_weights(model, tokenizer, config, setup, folder), name, card
    )


@pytest.fixture(scope="module")
def bi_lora(parsed_shipped, tiny_sentence_bert_path, tmp_path_factory):
    """The trained entry's folder, in a zoo home of its own (a module fixture runs before
    the per-test zoo home is set, and each test has its own, so tests use the path)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADAPTER_ZOO_HOME", str(tmp_path_factory.mktemp("zoo-lora")))
        # LoRA (rank 8 on Q and V) moves the tiny random model less than an adapter does: at
        # 1e-2 whether its 4 steps beat the base on dev depended on the batches' order
        config = bi_config(parsed_shipped, tiny_sentence_bert_path, "beer-lora", lr=3e-2)
        return str(train(config))


def test_bi_encoder_lora_entry_records_its_method_and_reloads_bit_identically(bi_lora):
    card = json.loads((Path(bi_lora) / "card.json").read_text())
    assert (card["encoder"], card["mode"], card["method"]) == ("bi", "adapter", "lora")
    assert card["training"]["method"] == "lora"
    recorded = card["adapter_config"]
    assert (recorded["architecture"], recorded["r"], recorded["alpha"]) == ("lora", 8, 16)
    assert recorded["attn_matrices"] == ["q", "v"]
    on_disk = json.loads((Path(bi_lora) / "adapter_config.json").read_text())["config"]
    assert on_disk == recorded  # load_adapter reads the method back from here
    assert card["scores"]["dev_map"] > card["base_scores"]["dev_map"]
    first, again = adapter_zoo.load(bi_lora), adapter_zoo.load(bi_lora)
    assert np.array_equal(first.score(PAIRS), again.score(PAIRS))
    base = adapter_zoo.BiEncoder.from_base(card["base_model"], max_length=first.max_length)
    assert not np.allclose(first.score(PAIRS), base.score(PAIRS), atol=1e-4)


def test_bi_encoder_lora_exports_merged_as_a_plain_sentence_transformer(bi_lora, tmp_path):
    out = export_merged_lora(bi_lora, tmp_path / "st")
    opened = open_plainly(out, "SentenceTransformer")
    assert opened["loaded"] == []  # neither adapters nor adapter_zoo was imported
    ours = adapter_zoo.load(bi_lora).score(PAIRS)
    # merging sums W + scale*B@A once instead of W x + scale*B(A x): rounding only
    np.testing.assert_allclose(opened["scores"], ours, rtol=0, atol=MERGED_TOLERANCE)
    assert json.loads((out / "adapter_zoo_export.json").read_text())["merged"] == "lora"
    assert "SentenceTransformer(" in (out / "README.md").read_text()


def test_cli_export_routes_a_lora_entry_to_the_merged_export(bi_lora, tmp_path, capsys):
    assert main(["export", bi_lora, "--out", str(tmp_path / "st")]) == 0
    assert "sentence_transformers.SentenceTransformer(" in capsys.readouterr().out
    assert (tmp_path / "st" / "modules.json").is_file()
    assert not (tmp_path / "st" / "adapter_config.json").exists()


def test_continuing_a_lora_entry_keeps_lora_in_multitask_mode(
    bi_lora, parsed_shipped, tiny_sentence_bert_path
):
    config = TrainingConfig(
        mode="multitask", data=str(parsed_shipped), forums=("beer", "bicycles.meta"),
        name="both-lora", base_model=str(tiny_sentence_bert_path), init_from=bi_lora,
        **{**FAST, "max_steps": 2},
    )  # fmt: skip
    assert config.method is None  # taken from the entry when the run starts
    card = json.loads((train(config) / "card.json").read_text())
    assert (card["mode"], card["method"], card["forums"]) == ("multitask", "lora", [BEER, BICYCLES])
    assert card["training"]["method"] == "lora" and card["init_from"]["entry"] == bi_lora
    with pytest.raises(ZooError, match=r"--method seqbn disagrees with --init-from '.*beer-lora', "
                                       r"a lora adapter"):  # fmt: skip
        train(TrainingConfig(
            mode="adapter", data=str(parsed_shipped), forums=("beer",), name="x",
            base_model=str(tiny_sentence_bert_path), init_from=bi_lora, method="seqbn",
            **FAST,
        ))  # fmt: skip


def test_cross_encoder_trains_lora_and_records_it(parsed_fixture, tiny_bert_path):
    config = TrainingConfig(
        mode="adapter", data=str(parsed_fixture), forums=("beer",), name="cross-lora",
        base_model=str(tiny_bert_path), encoder="cross", max_length=32, batch_size=8,
        max_steps=2, method="lora", lora_r=4, lora_alpha=8,
    )  # fmt: skip
    path = train(config)
    card = json.loads((path / "card.json").read_text())
    assert (card["encoder"], card["method"]) == ("cross", "lora")
    assert (card["adapter_config"]["r"], card["adapter_config"]["alpha"]) == (4, 8)
    ranker = adapter_zoo.load("cross-lora")
    assert ranker.model.adapters_config.get("cross_lora").architecture == "lora"
    assert np.array_equal(ranker.score(PAIRS), adapter_zoo.load("cross-lora").score(PAIRS))


def test_cross_encoder_lora_exports_merged_as_a_plain_cross_encoder(
    parsed_fixture, tiny_bert_path, tmp_path
):
    cross_entry(parsed_fixture, tiny_bert_path, "cross-lora-random")
    ours = adapter_zoo.load("cross-lora-random").score(PAIRS)
    out = export_merged_lora("cross-lora-random", tmp_path / "ce")
    opened = open_plainly(out, "CrossEncoder")
    assert opened["loaded"] == []
    np.testing.assert_allclose(opened["scores"], ours, rtol=0, atol=MERGED_TOLERANCE)
    assert np.ptp(ours) > 1e-3  # the LoRA weights matter: a merge that dropped them would fail


def test_refusals(parsed_fixture, tiny_bert_path, tiny_sentence_bert_path, bi_lora, tmp_path):
    common = {"data": "x", "forums": ("beer",), "name": "n", "base_model": str(tiny_bert_path)}
    with pytest.raises(ZooError, match=r"^--method lora: the adapters library cannot fuse LoRA"):
        TrainingConfig(mode="fusion", adapters=("a", "b"), method="lora", **common)
    with pytest.raises(ZooError, match=r"^--method lora trains a LoRA adapter .* mode 'full'"):
        TrainingConfig(mode="full", method="lora", **common)
    with pytest.raises(ZooError, match=r"^unknown method 'ia3'; choose one of seqbn, lora$"):
        TrainingConfig(mode="adapter", method="ia3", **common)
    cross_entry(parsed_fixture, tiny_sentence_bert_path, "minilm-like-lora")
    with pytest.raises(ZooError, match=r"^cannot export 'minilm-like-lora' merged: its "
                                       r"pair_cosine head reads the pair jointly"):  # fmt: skip
        export_merged_lora("minilm-like-lora", tmp_path / "refused")
    assert not (tmp_path / "refused").exists()
    fused = TrainingConfig(mode="fusion", data=str(parsed_fixture), forums=("beer",), name="f",
                           base_model=str(tiny_sentence_bert_path),
                           adapters=(bi_lora, "minilm-like-lora"))  # fmt: skip
    with pytest.raises(ZooError, match=r"'beer-lora' is a LoRA adapter; the adapters library "
                                       r"fuses bottleneck adapters only"):  # fmt: skip
        train(fused)


def test_a_seqbn_entry_is_not_exported_merged(parsed_fixture, tiny_bert_path, tmp_path):
    cross_entry(parsed_fixture, tiny_bert_path, "seqbn-entry", method="seqbn")
    with pytest.raises(ZooError, match=r"^cannot export 'seqbn-entry' merged: its adapter is a "
                                       r"bottleneck \(SeqBn\) adapter"):  # fmt: skip
        export_merged_lora("seqbn-entry", tmp_path / "x")
