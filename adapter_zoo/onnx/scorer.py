"""A BiEncoder or Ranker scoring through ONNX Runtime (``precision="int8"``).

:func:`onnx_scorer` takes an fp32 model, finds (or builds) its export in the cache
(:func:`adapter_zoo.onnx.cache.cached_folder`) and returns the same class scoring through
that export: a :class:`~adapter_zoo.biencoder.BiEncoder` around the folder opened by
sentence-transformers' ONNX backend, or a :class:`~adapter_zoo.ranker.Ranker` whose model
runs the graph in an ONNX Runtime session; texts are cut and tokenized exactly as before.
Sessions use the process's threads (``torch.get_num_threads()``).

Example:
    >>> int8 = onnx_scorer(load("beer", precision="fp32"))  # doctest: +SKIP
    >>> int8.precision  # doctest: +SKIP
    'int8'
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from adapter_zoo.biencoder.encoder import BiEncoder
from adapter_zoo.onnx.cache import cached_folder
from adapter_zoo.onnx.graph import BI, encoder_kind, graph_inputs
from adapter_zoo.onnx.layout import FP32_FILE
from adapter_zoo.onnx.quantize import int8_file
from adapter_zoo.ranker.ranker import Ranker

INT8, FP32 = "int8", "fp32"


def session_options():
    """ONNX Runtime options with the process's thread count."""
    # onnxruntime on first use: the CLI starts without it
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    options.inter_op_num_threads = 1
    return options


class OrtPairModel(torch.nn.Module):
    """A cross-encoder graph in an ONNX Runtime session, called as the adapters model is
    (``model(**batch).logits``); it holds no torch weights."""

    def __init__(self, path, config, inputs: list[str]):
        # onnxruntime on first use: the CLI starts without it
        import onnxruntime

        super().__init__()
        self.config = config
        self.inputs = inputs
        self.session = onnxruntime.InferenceSession(
            str(path), session_options(), providers=["CPUExecutionProvider"]
        )

    def forward(self, **batch):
        feeds = {n: np.ascontiguousarray(batch[n].cpu().numpy(), dtype=np.int64)
                 for n in self.inputs}  # fmt: skip
        (logits,) = self.session.run(None, feeds)
        return SimpleNamespace(logits=torch.from_numpy(logits))


def onnx_refusal(scorer) -> str | None:
    """Why ``scorer`` has no ONNX export (what it is), or None for a BiEncoder or Ranker.

    Example:
        >>> onnx_refusal(object())
        'is a object, not a bi- or cross-encoder'
    """
    if isinstance(scorer, BiEncoder | Ranker) and not isinstance(scorer.model, OrtPairModel):
        return None
    return f"is a {type(scorer).__name__}, not a bi- or cross-encoder"


def to_int8(scorer):
    """``scorer`` scoring in int8 where it runs a model: a BiEncoder or Ranker through
    :func:`onnx_scorer`; a composition (anything with ``parts()``: a fusion, a rerank, a
    route) with each loaded member so (in place; BM25 members stay as they are). None when
    nothing in it has an export (BM25, a cascade).

    Example:
        >>> to_int8(object()) is None
        True
    """
    if onnx_refusal(scorer) is None:
        return onnx_scorer(scorer, INT8)
    if not callable(getattr(scorer, "parts", None)):
        return None
    converted = []

    def in_int8(member):
        if isinstance(member, str):
            return member  # a route's member, loaded when first routed to (in fp32)
        done = to_int8(member)
        converted.append(done is not None)
        return done or member

    members = getattr(scorer, "members", None)
    if isinstance(members, list):
        members[:] = [in_int8(m) for m in members]
    for key in ("retriever", "reranker", "embedder"):
        part = getattr(scorer, key, None)
        if part is not None and not isinstance(part, str):
            setattr(scorer, key, in_int8(part))
    routed = any(isinstance(m, str) for m in members or ())
    return scorer if any(converted) or routed else None


def onnx_scorer(scorer, precision: str = INT8, *, arch: str | None = None):
    """``scorer`` (an fp32 BiEncoder or Ranker) scoring through its ONNX export.

    Args:
        scorer: the model as :func:`adapter_zoo.load` gives it, fp32 on the CPU.
        precision: ``int8`` (the quantized file) or ``fp32`` (the exported graph).
        arch: the int8 file's CPU name (default: this CPU's).

    Returns:
        A new BiEncoder or Ranker with ``precision`` set; card, base model and token limit
        as ``scorer``'s.
    """
    folder = cached_folder(scorer, arch=arch)
    file_name = int8_file(arch) if precision == INT8 else FP32_FILE
    if encoder_kind(scorer) == BI:
        # sentence-transformers on first use: the CLI starts without it
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(
            str(folder), backend="onnx", device="cpu", local_files_only=True,
            trust_remote_code=False,
            model_kwargs={"file_name": file_name, "provider": "CPUExecutionProvider",
                          "session_options": session_options()},
        )  # fmt: skip
        out = BiEncoder(model, base_model=scorer.base_model, card=scorer.card, device="cpu",
                        max_length=scorer.max_length)  # fmt: skip
    else:
        model = OrtPairModel(folder / file_name, scorer.model.config, graph_inputs(scorer))
        out = Ranker(model, scorer.tokenizer, base_model=scorer.base_model, card=scorer.card,
                     max_length=scorer.max_length, device="cpu")  # fmt: skip
    out.precision = precision
    out.set_precision = lambda dtype: out  # its weights are the graph's: nothing to cast
    out.onnx_folder = folder
    return out


__all__ = ["OrtPairModel", "onnx_refusal", "onnx_scorer", "to_int8", "session_options"]
