"""The folder plain sentence-transformers opens with ``backend="onnx"``.

A bi-encoder becomes a SentenceTransformer folder (``modules.json``, the base's Pooling and
Normalize modules, tokenizer, ``config.json``, the entry's ``max_seq_length``); a
cross-encoder a CrossEncoder folder (one label, identity activation, so ``predict`` gives
the entry's logits, and its ``max_length``). Neither holds PyTorch weights: the model is
``onnx/model.onnx`` (fp32) and the ``onnx/model_qint8_<arch>.onnx`` files
(:mod:`adapter_zoo.onnx.quantize`). Opening one needs no adapter-zoo::

    SentenceTransformer(folder, backend="onnx", model_kwargs={"file_name": "onnx/model.onnx"})
    CrossEncoder(folder, backend="onnx", model_kwargs={"file_name": "onnx/model.onnx"})
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from adapter_zoo.biencoder.encoder import build_sentence_model
from adapter_zoo.onnx.graph import BI, encoder_kind, export_graph

ONNX_DIR = "onnx"
FP32_FILE = f"{ONNX_DIR}/model.onnx"
TORCH_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


def write_folder(scorer, folder: str | Path) -> Path:
    """Write ``scorer``'s sentence-transformers ONNX folder (fp32 graph only) into ``folder``.

    Args:
        scorer: a BiEncoder or a Ranker, fp32, on the CPU.
        folder: an existing, empty folder.

    Returns:
        ``folder`` as a Path.

    Example:
        >>> write_folder(load("beer", precision="fp32"), "beer-onnx")  # doctest: +SKIP
    """
    folder = Path(folder)
    if encoder_kind(scorer) == BI:
        _write_sentence_transformer(scorer, folder)
    else:
        _write_cross_encoder(scorer, folder)
    for name in TORCH_WEIGHTS:  # the ONNX graph is the model; no PyTorch weights mislead
        (folder / name).unlink(missing_ok=True)
    (folder / ONNX_DIR).mkdir(exist_ok=True)
    export_graph(scorer, folder / FP32_FILE)
    return folder


def _write_sentence_transformer(encoder, folder: Path) -> None:
    plain = build_sentence_model(str(encoder.base_model), with_adapters=False, device="cpu")
    plain.max_seq_length = encoder.max_length
    plain.save(str(folder), safe_serialization=True, create_model_card=False)


def _write_cross_encoder(ranker, folder: Path) -> None:
    # sentence-transformers, torch, transformers on first use: the CLI starts without them
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder
    from transformers import AutoConfig, AutoModelForSequenceClassification

    config = AutoConfig.for_model(**{**ranker.model.config.to_dict(), "num_labels": 1})
    config.architectures = None
    stub = AutoModelForSequenceClassification.from_config(config)
    with tempfile.TemporaryDirectory(prefix="adapter-zoo-onnx-") as scratch:
        stub.save_pretrained(scratch, safe_serialization=True)
        ranker.tokenizer.save_pretrained(scratch)
        cross_encoder = CrossEncoder(
            scratch, num_labels=1, max_length=ranker.max_length,
            activation_fn=torch.nn.Identity(), device="cpu", trust_remote_code=False,
            local_files_only=True,
        )  # fmt: skip
        cross_encoder.save_pretrained(str(folder), create_model_card=False)


__all__ = ["FP32_FILE", "ONNX_DIR", "write_folder"]
