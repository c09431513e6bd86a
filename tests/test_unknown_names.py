"""Every registry answers a misspelt name with the project's one-line error: the name asked
for, the closest known names and every choice (``stackexchange.errors.unknown_name``)."""

from __future__ import annotations

import pytest

import benchmarks
from adapter_zoo.cascade.config import get_config
from adapter_zoo.compose.entry import compose_entry
from adapter_zoo.compose.fusion import check_normalisation
from adapter_zoo.errors import ZooError
from adapter_zoo.losses.registry import get_loss
from adapter_zoo.objectives.registry import get_objective
from adapter_zoo.onnx.quantize import int8_file
from adapter_zoo.precision import PrecisionError, check_precision
from adapter_zoo.registry import get_kind
from adapter_zoo.training.config import TrainingConfig
from adapter_zoo.training.pretrain_config import PretrainConfig
from benchmarks.builder import build_from_forum
from benchmarks.datasets._io import keep
from benchmarks.errors import BenchmarkError
from benchmarks.finetune import finetune
from recipes.recipe import RecipeError
from recipes.runner import find_recipe
from stackexchange.catalog import forum_set
from stackexchange.errors import DumpError, closest_names, unknown_name

RUN = {"data": "d", "forums": ("beer",), "name": "x"}
LOSSES = (
    "CachedGISTEmbedLoss, CachedMultipleNegativesRankingLoss, "
    "CachedMultipleNegativesSymmetricRankingLoss, FusedMarginMSELoss, GISTEmbedLoss, "
    "MegaBatchMarginLoss, MultipleNegativesRankingLoss, MultipleNegativesSymmetricRankingLoss, "
    "bce, listwise, pairwise"
)
KINDS = (
    "base, bi-adapter, bi-full, bi-fusion, bi-multitask, bi-soup, bm25, cascade, composite, "
    "cross-adapter, cross-full, cross-fusion, cross-multitask, multicqa, sbert, spec, tfidf"
)
BENCHMARKS = (
    "arguana-01, arguana-02, arguana-05, askubuntu, asnq, insuranceqa, las-academia, "
    "las-apple, las-aviation, las-cooking, las-travel, mediqa2019, semeval2016, semeval2017, "
    "trecqa, wikipassageqa, wikiqa, wikiqa-noallneg, wikiqa-raw"
)
RECIPES = (
    "cascade_alpha_sweep, multicqa_adapters, multicqa_af_balanced, multicqa_af_largest, "
    "multicqa_indomain_bert, multicqa_mt_all, multicqa_mt_balanced, multicqa_mt_largest, "
    "sentence_objectives_paper, sentence_objectives_wikiqa, shipped_zoo, tanda_trecqa, "
    "tanda_wikiqa"
)

# (registry, the call with a misspelt name, the error type, its exact message)
CASES = [
    ("objectives", lambda: get_objective("keyword"), ZooError,
     "unknown objective 'keyword'; did you mean keywords? "
     "choose one of ict, keywords, psd, sp, ssp, title"),
    ("losses of an encoder", lambda: get_loss("bcee", "cross"), ZooError,
     "unknown cross-encoder loss 'bcee'; did you mean bce? choose one of bce, listwise, pairwise"),
    ("losses", lambda: get_loss("pairwis"), ZooError,
     f"unknown loss 'pairwis'; did you mean pairwise, listwise? choose one of {LOSSES}"),
    ("model kinds", lambda: get_kind("crosss"), ZooError,
     "unknown model kind 'crosss'; did you mean cross-fusion, cross-full, cross-multitask? "
     f"choose one of {KINDS}"),
    ("cascade presets", lambda: get_config("adaptor"), ZooError,
     "unknown cascade config 'adaptor'; did you mean adapter? choose one of adapter, full"),
    ("benchmarks", lambda: benchmarks.get("wikiq"), BenchmarkError,
     "unknown benchmark 'wikiq'; did you mean wikiqa, wikiqa-raw, wikipassageqa? "
     f"choose one of {BENCHMARKS}"),
    ("a benchmark's splits", lambda: benchmarks.get("wikiqa").load("tset"), BenchmarkError,
     "wikiqa: unknown split 'tset'; did you mean test? choose one of train, dev, test"),
    ("fusion normalisations", lambda: check_normalisation("minmx"), ZooError,
     "unknown fusion normalisation 'minmx'; did you mean minmax? "
     "choose one of zscore, minmax, rrf"),
    ("precisions", lambda: check_precision("bf61"), PrecisionError,
     "unknown precision 'bf61'; did you mean bf16? choose one of auto, fp32, bf16, int8"),
    ("training modes", lambda: TrainingConfig(mode="ful", **RUN), ZooError,
     "unknown training mode 'ful'; did you mean full? "
     "choose one of adapter, full, multitask, fusion, tanda"),
    ("encoders", lambda: TrainingConfig(mode="adapter", encoder="bii", **RUN), ZooError,
     "unknown encoder 'bii'; did you mean bi? choose one of bi, cross"),
    ("negative miners",
     lambda: TrainingConfig(mode="adapter", encoder="bi", hard_negatives=True,
                            negative_miner="bm52", **RUN),
     ZooError, "unknown negative miner 'bm52'; did you mean bm25? choose one of bm25, base"),
    ("pair kinds", lambda: TrainingConfig(mode="adapter", pair_kinds=("title_bdy",), **RUN),
     ZooError,
     "unknown pair kind 'title_bdy'; did you mean title_body, title_answer? "
     "choose one of title_body, title_answer, duplicates, question_answer, objectives"),
    ("adapter methods", lambda: TrainingConfig(mode="adapter", method="lor", **RUN), ZooError,
     "unknown method 'lor'; did you mean lora? choose one of seqbn, lora"),
    ("pretraining objectives", lambda: PretrainConfig(objective="sspp", corpus="c", name="x"),
     ZooError,
     "unknown objective 'sspp'; did you mean ssp, sp? "
     "choose one of ict, keywords, psd, sp, ssp, title, all, mlm"),
    ("pretraining modes",
     lambda: PretrainConfig(objective="ssp", corpus="c", name="x", mode="ful"), ZooError,
     "unknown pretraining mode 'ful'; did you mean full? choose one of adapter, full"),
    ("compositions", lambda: compose_entry("x", ["bm25", "tfidf"], composition="fusin"),
     ZooError, "unknown composition 'fusin'; did you mean fusion? choose one of fusion, rerank"),
    ("int8 architectures", lambda: int8_file("avx2x"), ZooError,
     "unknown arch 'avx2x'; did you mean avx2, avx512, avx512_vnni? "
     "choose one of arm64, avx2, avx512, avx512_vnni"),
    ("fine-tuning modes", lambda: finetune("minilm-l6", benchmarks.get("wikiqa"), "adaptr"),
     BenchmarkError,
     "unknown fine-tuning mode 'adaptr'; did you mean adapter, tanda? "
     "choose one of full, adapter, tanda"),
    ("benchmark tasks", lambda: build_from_forum("f", "o", task="answer_selectin"),
     BenchmarkError,
     "unknown task 'answer_selectin'; did you mean answer_selection? "
     "choose one of answer_selection, question_similarity"),
    ("query filters", lambda: keep([], "claen"), BenchmarkError,
     "unknown query filter 'claen'; did you mean clean? choose one of raw, no-all-negative, clean"),
    ("forum sets", lambda: forum_set("balancd"), DumpError,
     "unknown forum set 'balancd'; did you mean balanced? choose one of all, balanced, largest"),
    ("recipes", lambda: find_recipe("tanda_wikiq"), RecipeError,
     f"unknown recipe 'tanda_wikiq'; did you mean tanda_wikiqa, tanda_trecqa? "
     f"choose one of {RECIPES}"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "error", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_a_misspelt_name_is_answered_with_the_closest_names(call, error, message):
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value) == message


def test_a_name_close_to_none_lists_every_choice():
    assert str(unknown_name("precision", "half", ("fp32", "bf16"), ZooError)) == (
        "unknown precision 'half'; choose one of fp32, bf16"
    )
    assert closest_names("spp", ["ict", "sp", "ssp", "title"]) == ["sp", "ssp"]
