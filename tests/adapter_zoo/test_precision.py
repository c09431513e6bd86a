"""The one precision decision (adapter_zoo.precision) and scoring in bf16 through load."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo import precision
from adapter_zoo.precision import PrecisionError, resolve_precision
from adapter_zoo.precision import cpu_bf16_flags as host_cpu_bf16_flags  # before any patch

PAIRS = [
    ("How long does a stout keep?", "An imperial stout keeps for years in a cool cellar."),
    ("How long does a stout keep?", "A tall pilsner glass shows the lager's carbonation."),
    ("Why do hops make beer bitter?", "Alpha acids in hops isomerise while boiling."),
]


def test_auto_is_fp32_on_a_cpu_without_bf16(cpu_without_bf16):
    assert resolve_precision("auto", "cpu") == torch.float32
    assert resolve_precision("fp32", "cpu") == torch.float32


def test_auto_is_fp32_on_a_cpu_with_amx_where_bf16_is_asked_for(cpu_with_bf16):
    # measured there (benchmarks/speed/precision.py): 1.6x, and beer's LAS set -0.011 MAP
    assert resolve_precision("auto", "cpu") == torch.float32
    assert resolve_precision("bf16", "cpu") == torch.bfloat16
    assert resolve_precision("fp32", "cpu") == torch.float32


def test_auto_keeps_fp32_on_avx512_bf16_without_amx_where_bf16_is_asked_for(monkeypatch):
    # measured there (benchmarks/speed/precision.py): bf16 scoring 0.88x fp32 on short texts
    monkeypatch.setattr(precision, "cpu_bf16_flags", lambda: ("avx512_bf16",))
    assert resolve_precision("auto", "cpu") == torch.float32
    assert resolve_precision("bf16", "cpu") == torch.bfloat16


def test_auto_is_bf16_on_a_cuda_gpu_with_it(monkeypatch):
    monkeypatch.setattr(precision, "device_has_bf16", lambda device: True)
    assert resolve_precision("auto", "cuda") == torch.bfloat16
    monkeypatch.setattr(precision, "device_has_bf16", lambda device: False)
    assert resolve_precision("auto", "cuda") == torch.float32


def test_bf16_is_refused_in_one_line_where_the_cpu_lacks_it(cpu_without_bf16):
    with pytest.raises(PrecisionError) as error:
        resolve_precision("bf16", "cpu")
    message = str(error.value)
    assert "\n" not in message and "AVX512-BF16" in message and "--precision" in message
    with pytest.raises(
        PrecisionError,
        match=r"^unknown precision 'fp16'; did you mean bf16, fp32\? choose one of auto, fp32, bf16, int8$",
    ):
        resolve_precision("fp16", "cpu")


def test_the_cpu_flags_come_from_proc_cpuinfo():
    flags = host_cpu_bf16_flags()
    assert set(flags) <= {"amx_bf16", "avx512_bf16"}


def test_auto_is_fp32_under_the_suite(tiny_bert_path):
    """tests/conftest.py gives every test a CPU without bf16: auto is fp32 there."""
    assert resolve_precision("auto", "cpu") == torch.float32


def test_load_forced_to_fp32_keeps_float32_weights(cpu_without_bf16, tiny_bert_path):
    ranker = adapter_zoo.load(f"base:{tiny_bert_path}", device="cpu")
    assert ranker.precision == "fp32"
    assert {p.dtype for p in ranker.model.parameters()} == {torch.float32}
    with pytest.raises(PrecisionError):
        adapter_zoo.load(f"base:{tiny_bert_path}", device="cpu", precision="bf16")


def test_a_cross_encoder_scores_in_bf16_with_float32_heads(cpu_with_bf16, tiny_bert_path):
    fp32 = adapter_zoo.load(f"base:{tiny_bert_path}", device="cpu", precision="fp32")
    bf16 = adapter_zoo.load(f"base:{tiny_bert_path}", device="cpu", precision="bf16")
    assert bf16.precision == "bf16" and "precision='bf16'" in repr(bf16)
    linear = bf16.model.base_model.encoder.layer[0].attention.self.query
    assert linear.weight.dtype == torch.bfloat16
    assert {p.dtype for p in bf16.model.heads.parameters()} == {torch.float32}
    scores = bf16.score(PAIRS)
    assert scores.dtype == np.float32
    np.testing.assert_allclose(scores, fp32.score(PAIRS), atol=0.05)


def test_a_bi_encoder_embeds_in_bf16_and_normalises_in_float32(
    cpu_with_bf16, tiny_sentence_bert_path
):
    fp32 = adapter_zoo.load(f"sbert:{tiny_sentence_bert_path}", device="cpu", precision="fp32")
    bf16 = adapter_zoo.load(f"sbert:{tiny_sentence_bert_path}", device="cpu", precision="bf16")
    assert bf16.precision == "bf16"
    vectors = bf16.encode([q for q, _ in PAIRS])
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # fp32 norm
    cosines = (vectors * fp32.encode([q for q, _ in PAIRS])).sum(1)
    assert cosines.min() > 0.99


def test_compositions_pass_the_precision_to_their_members(
    cpu_with_bf16, tiny_sentence_bert_path, tiny_bert_path
):
    fused = adapter_zoo.load(
        f"fusion:sbert:{tiny_sentence_bert_path}+bm25*0.5", device="cpu", precision="bf16"
    )
    assert fused.precision == "bf16" and fused.members[0].precision == "bf16"
    assert fused.score(PAIRS).shape == (3,)
    kept = adapter_zoo.load(
        f"rerank:sbert:{tiny_sentence_bert_path}>base:{tiny_bert_path}@2", device="cpu",
        precision="fp32",
    )  # fmt: skip
    assert kept.precision == "fp32" and kept.reranker.precision == "fp32"
    assert {p.dtype for p in kept.reranker.model.parameters()} == {torch.float32}


def test_scoring_precision_is_what_a_run_sets():
    assert precision.current_precision() == "auto"
    with precision.scoring_precision("fp32"):
        assert precision.current_precision() == "fp32"
    assert precision.current_precision() == "auto"
    with pytest.raises(PrecisionError), precision.scoring_precision("half"):
        pass
