"""precision="int8": bi- and cross-encoder entries score through ONNX Runtime like fp32."""

from __future__ import annotations

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.onnx.scorer import onnx_scorer
from adapter_zoo.precision import PrecisionError

from .conftest import PAIRS


@pytest.mark.parametrize(
    "entry", ["bi_entry", "cross_entry", "cls_entry", "lora_bi_entry", "full_cross_entry"]
)
def test_int8_ranks_a_small_list_as_fp32_and_onnx_fp32_equals_torch(entry, request):
    path = str(request.getfixturevalue(entry))
    fp32 = adapter_zoo.load(path, precision="fp32")
    torch_scores = fp32.score(PAIRS)
    np.testing.assert_allclose(onnx_scorer(fp32, "fp32").score(PAIRS), torch_scores, atol=1e-4)
    int8 = adapter_zoo.load(path, precision="int8")
    assert int8.precision == "int8"
    scores = int8.score(PAIRS)
    assert scores.dtype == np.float32 and scores.shape == (len(PAIRS),)
    if np.ptp(torch_scores) > 0.01:  # the same order where the list is not near-tied
        assert np.corrcoef(scores, torch_scores)[0, 1] > 0.9
    else:  # the random CLS head scores every pair within 1e-3: int8 keeps them close
        assert np.abs(scores - torch_scores).max() < 0.01
    ranked = [c for c, _ in int8.rank(PAIRS[0][0], [c for _, c in PAIRS])]
    assert sorted(ranked) == sorted(c for _, c in PAIRS)


def test_int8_of_a_zero_shot_base(tiny_sentence_bert_path):
    name = f"sbert:{tiny_sentence_bert_path}"
    fp32 = adapter_zoo.load(name, precision="fp32").score(PAIRS)
    int8 = adapter_zoo.load(name, precision="int8").score(PAIRS)
    assert np.corrcoef(fp32, int8)[0, 1] > 0.9


def test_int8_of_a_kind_without_an_export_is_one_line():
    with pytest.raises(PrecisionError) as raised:
        adapter_zoo.load("bm25", precision="int8")
    message = str(raised.value)
    assert "\n" not in message and message.startswith("precision int8: bm25 is a ")
