"""The pipeline on a CUDA GPU (marker ``gpu``; left out by default, skipped without CUDA).

Run on a machine with a GPU: ``.venv/bin/python -m pytest -m gpu tests/test_gpu.py`` (under
3 minutes is the budget). It trains a bi- and a cross-encoder adapter a few steps on the
shipped forums with the tiny random sentence-BERT, adapts on a tiny target, evaluates on the
GPU (scores as the CPU's within 1e-3) and exports (``--format onnx``, scored on the CPU).
Not yet run on a GPU: no device was lent when it was written (docs/performance.md).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo.cli import main

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

PAIRS = [("why is my stout flat", "dead yeast"), ("what are hops", "flowers of the hop plant")]


def test_train_adapt_evaluate_export_on_cuda(parsed_shipped, tiny_sentence_bert_path, tmp_path):
    forum = sorted(p.name for p in parsed_shipped.iterdir() if p.is_dir())[0]
    for encoder in ("bi", "cross"):
        assert main(["train", "--encoder", encoder, "--mode", "adapter", "--data",
                     str(parsed_shipped), "--forums", forum, "--name", f"gpu-{encoder}",
                     "--base", str(tiny_sentence_bert_path), "--max-steps", "4",
                     "--overwrite"]) == 0  # fmt: skip
        on_gpu = adapter_zoo.load(f"gpu-{encoder}", device="cuda", precision="fp32")
        on_cpu = adapter_zoo.load(f"gpu-{encoder}", device="cpu", precision="fp32")
        np.testing.assert_allclose(on_gpu.score(PAIRS), on_cpu.score(PAIRS), atol=1e-3)
        out = tmp_path / f"onnx-{encoder}"
        assert main(["export", f"gpu-{encoder}", "--format", "onnx", str(out)]) == 0
        assert (out / "onnx/model.onnx").is_file()
    target = parsed_shipped / forum
    assert main(["adapt", "--target", str(target), "--name", "gpu-adapted",
                 "--max-steps", "2", "--overwrite"]) == 0  # fmt: skip
    assert adapter_zoo.load("gpu-adapted", device="cuda").score(PAIRS).shape == (2,)
