"""The exported folder opens in plain sentence-transformers and scores as PyTorch (1e-4)."""

from __future__ import annotations

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.onnx.layout import FP32_FILE, write_folder

from .conftest import PAIRS


def st_scores(folder, bi: bool, file_name: str = FP32_FILE):
    from sentence_transformers import CrossEncoder, SentenceTransformer

    kwargs = {"backend": "onnx", "model_kwargs": {"file_name": file_name}, "device": "cpu"}
    if bi:
        model = SentenceTransformer(str(folder), **kwargs)
        q = model.encode([q for q, _ in PAIRS], normalize_embeddings=True)
        c = model.encode([c for _, c in PAIRS], normalize_embeddings=True)
        return np.einsum("ij,ij->i", q, c)
    return CrossEncoder(str(folder), **kwargs).predict(PAIRS, show_progress_bar=False)


@pytest.mark.parametrize("entry", ["bi_entry", "cross_entry", "cls_entry"])
def test_the_fp32_folder_opens_in_sentence_transformers_with_the_entrys_scores(
    entry, request, tmp_path
):
    path = request.getfixturevalue(entry)
    model = adapter_zoo.load(str(path), precision="fp32", device="cpu")
    write_folder(model, tmp_path)
    assert not (tmp_path / "model.safetensors").exists()
    ours = model.score(PAIRS)
    theirs = st_scores(tmp_path, entry == "bi_entry")
    np.testing.assert_allclose(theirs, ours, atol=1e-4)
