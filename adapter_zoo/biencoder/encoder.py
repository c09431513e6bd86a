"""The BiEncoder: query and candidate embedded apart, scored by cosine (sentence-transformers).

A bi-encoder entry is a sentence-transformers model (all-MiniLM-L6-v2 by default) with, for
the adapter kinds, bottleneck adapters of the ``adapters`` library inside its transformer.
Candidates can be embedded once and searched (``search``), which a cross-encoder cannot do.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapter_zoo.devices import pick_device
from adapter_zoo.lengths import BI_MAX_LENGTH
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.precision import cast_for_inference, precision_name
from adapter_zoo.ranker.inputs import (
    check_max_length,
    check_ranking,
    check_texts,
    check_top_k,
    distinct_texts,
    text_pairs,
)
from adapter_zoo.ranker.model import own_tensors, quiet_adapter_activation, resolve_base_model
from adapter_zoo.ranker.ranker import clip_text

# all-MiniLM-L6-v2 was trained on pairs of up to 128 tokens and reads up to 256.
# pairs whose cosines score() computes at once (bounds the gathered rows' memory)
_SCORE_CHUNK = 65536


def build_sentence_model(base: str, *, with_adapters: bool = True, device=None):
    """``base`` as a SentenceTransformer; ``with_adapters`` makes its transformer accept
    adapters (``adapters.init``). A base without sentence-transformers files gets mean pooling.
    """
    # sentence-transformers on first use: the CLI starts without it
    from sentence_transformers import SentenceTransformer

    # heavy: biencoder.guard loads torch, transformers, sentence-transformers when imported
    from adapter_zoo.biencoder.guard import AdapterSentenceTransformer

    # with adapters: a SentenceTransformer that refuses to save a folder dropping them
    model = (AdapterSentenceTransformer if with_adapters else SentenceTransformer)(
        resolve_base_model(base), device=str(pick_device(device)), trust_remote_code=False
    )
    if with_adapters:
        # adapters on first use: the CLI starts without it
        import adapters

        quiet_adapter_activation()
        adapters.init(model[0].auto_model)
        own_tensors(model)  # bit-identical reloads (see own_tensors)
    return model


def transformer_of(model):
    """The adapters-enabled transformer inside a SentenceTransformer (where adapters live)."""
    return model[0].auto_model


class BiEncoder:
    """Scores (query, candidate) pairs by the cosine of their sentence embeddings.

    Attributes:
        model: the ``sentence_transformers.SentenceTransformer``.
        base_model: the base model's short name, Hub id or path.
        card: the zoo card (dict) when loaded from the zoo, else None.
        device: the torch device the model runs on.
        max_length: texts are truncated to this many tokens.

    Example:
        >>> encoder = BiEncoder.from_base("minilm-l6")  # doctest: +SKIP
        >>> encoder.rank("Is a porter a stout?", ["Stouts began as strong porters.", "Tyres."])
        ... # doctest: +SKIP
        [('Stouts began as strong porters.', 0.71), ('Tyres.', 0.02)]
    """

    encoder_kind = "bi"

    def __init__(
        self,
        model,
        *,
        base_model: str,
        card: dict | None = None,
        max_length: int = BI_MAX_LENGTH,
        device=None,
    ):
        self.device = pick_device(device)
        self.model = model.to(self.device).eval()
        self.base_model = base_model
        self.card = card
        self.max_length = max_length
        self.precision = "fp32"

    def set_precision(self, dtype) -> BiEncoder:
        """Embed with the model's linear layers (base, adapters) in ``dtype`` (inference
        only; see :mod:`adapter_zoo.precision`); token states stay float32, so pooling and
        normalisation run in float32 and embeddings are float32."""

        cast_for_inference(self.model, dtype)
        self.precision = precision_name(dtype)
        return self

    @classmethod
    def from_base(
        cls, base: str = DEFAULT_BASE, *, max_length: int | None = None, device=None
    ) -> BiEncoder:
        """The zero-shot bi-encoder of ``base`` (no adapter); ``max_length`` defaults to the
        model's own (256 for all-MiniLM-L6-v2)."""
        model = build_sentence_model(base, with_adapters=False, device=device)
        length = max_length or model.max_seq_length or BI_MAX_LENGTH
        return cls(model, base_model=base, max_length=length, device=device)

    @property
    def max_length(self) -> int:
        return self.model.max_seq_length

    @max_length.setter
    def max_length(self, value: int) -> None:
        config = getattr(transformer_of(self.model), "config", None)
        self.model.max_seq_length = check_max_length(value, config, model=str(self.base_model))

    def encode(
        self, texts, *, batch_size: int = 64, progress: bool = False, **kwargs
    ) -> np.ndarray:
        """Embeddings of ``texts``: by default unit-length float32 numpy rows, one per text.

        Takes every keyword argument of sentence-transformers' ``SentenceTransformer.encode``
        (``show_progress_bar``, ``normalize_embeddings``, ``convert_to_tensor``,
        ``prompt_name``, ``precision``, ``truncate_dim``, ...) and passes it on to the wrapped
        model; only the defaults differ: ``batch_size=64``, ``normalize_embeddings=True``
        (the score is a cosine), ``show_progress_bar=progress``. One string gives one vector.

        Example:
            >>> encoder.encode(["a stout", "a lager"], show_progress_bar=False).shape
            ... # doctest: +SKIP
            (2, 384)
        """
        return self._encode(self.model.encode, texts, batch_size, progress, kwargs)

    def encode_query(self, texts, *, batch_size: int = 64, progress: bool = False, **kwargs):
        """:meth:`encode` through ``SentenceTransformer.encode_query`` (its "query" prompt,
        if the model has one; all-MiniLM-L6-v2 has none, so the same vectors)."""
        return self._encode(self.model.encode_query, texts, batch_size, progress, kwargs)

    def encode_document(self, texts, *, batch_size: int = 64, progress: bool = False, **kwargs):
        """:meth:`encode` through ``SentenceTransformer.encode_document`` (its "document"
        prompt, if the model has one)."""
        return self._encode(self.model.encode_document, texts, batch_size, progress, kwargs)

    def _encode(self, function, texts, batch_size: int, progress: bool, kwargs: dict):
        options = {
            "batch_size": batch_size,
            "normalize_embeddings": True,
            "convert_to_numpy": True,
            "show_progress_bar": progress,
            **kwargs,
        }
        if isinstance(texts, str):
            vectors = function(clip_text(texts, self.max_length), **options)
        elif not len(texts):
            vectors = function([], **options)
            if isinstance(vectors, np.ndarray) and vectors.ndim == 1:  # numpy of nothing
                dim = self.model.get_embedding_dimension()
                return np.zeros((0, dim), dtype=np.float32)
            return vectors
        else:
            # each text cut first to a bound derived from max_length (see clip_text)
            clipped = [clip_text(t, self.max_length) for t in check_texts(texts)]
            vectors = function(clipped, **options)
        if isinstance(vectors, np.ndarray) and vectors.dtype == np.float64:
            return vectors.astype(np.float32)
        return vectors

    # sentence-transformers' names, for its evaluators and for code written against a
    # SentenceTransformer. Listed one by one (no __getattr__ delegation): each is tested in
    # tests/adapter_zoo/test_st_compat.py, and an unknown name fails as an AttributeError.
    @property
    def similarity_fn_name(self) -> str:
        """The wrapped model's similarity name (``"cosine"`` for all-MiniLM-L6-v2); the
        embeddings are unit length by default, so cosine and dot agree."""
        return self.model.similarity_fn_name

    @similarity_fn_name.setter
    def similarity_fn_name(self, value: str) -> None:
        self.model.similarity_fn_name = value

    def similarity(self, embeddings1, embeddings2):
        """``SentenceTransformer.similarity``: the score matrix of two sets of embeddings."""
        return self.model.similarity(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1, embeddings2):
        """``SentenceTransformer.similarity_pairwise``: row i of one against row i of the other."""
        return self.model.similarity_pairwise(embeddings1, embeddings2)

    def get_sentence_embedding_dimension(self) -> int | None:
        return self.model.get_embedding_dimension()

    def get_embedding_dimension(self) -> int | None:
        return self.model.get_embedding_dimension()

    @property
    def model_card_data(self):
        """The wrapped model's card data, where evaluators record their metrics."""
        return self.model.model_card_data

    @property
    def max_seq_length(self) -> int:
        return self.model.max_seq_length

    @max_seq_length.setter
    def max_seq_length(self, value: int) -> None:
        self.model.max_seq_length = int(value)

    @property
    def tokenizer(self):
        return self.model.tokenizer

    def eval(self) -> BiEncoder:
        self.model.eval()
        return self

    def to(self, device) -> BiEncoder:
        # torch on first use: the CLI starts without it
        import torch

        self.device = torch.device(device)
        self.model.to(self.device)
        return self

    def save(self, path, *args, **kwargs) -> None:
        """``SentenceTransformer.save``: a sentence-transformers folder that
        ``SentenceTransformer(path)`` reopens with the same embeddings; refused (ZooError)
        while the model holds adapters, which no such folder can hold (see
        :mod:`adapter_zoo.biencoder.guard`)."""
        self.model.save(str(path), *args, **kwargs)

    def score(
        self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 64, progress: bool = False
    ) -> np.ndarray:
        """Cosine similarity of each (query, candidate) pair, in input order.

        Every distinct text is embedded once, however many pairs it appears in.
        """
        pairs = text_pairs(pairs)
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        texts, left, right = distinct_texts(pairs)
        vectors = self.encode(texts, batch_size=batch_size, progress=progress)
        scores = np.empty(len(pairs), dtype=np.float32)
        # a slice of pairs at a time: both sides' rows of all of them at once would be two
        # pairs x dimension matrices (2.5 GB for InsuranceQA's 812,500 pairs)
        for start in range(0, len(pairs), _SCORE_CHUNK):
            end = start + _SCORE_CHUNK
            scores[start:end] = np.einsum(
                "ij,ij->i", vectors[left[start:end]], vectors[right[start:end]]
            )
        return scores

    def rank(
        self, query: str, candidates: Sequence[str], *, top_k: int | None = None
    ) -> list[tuple[str, float]]:
        """``candidates`` sorted best first as (candidate, score); ties keep input order."""
        query, candidates = check_ranking(query, candidates, top_k)
        scores = self.score([(query, c) for c in candidates])
        order = np.argsort(-scores, kind="stable")
        ranked = [(candidates[i], float(scores[i])) for i in order]
        return ranked if top_k is None else ranked[:top_k]

    def search(
        self, queries: Sequence[str], corpus, *, top_k: int = 10, batch_size: int = 64
    ) -> list[list[tuple[int, float]]]:
        """The ``top_k`` corpus entries nearest to each query, as (corpus index, cosine).

        Args:
            queries: query texts.
            corpus: texts, or their embeddings from :meth:`encode` (embed a large corpus
                once, e.g. a forum's questions for duplicate search, and search it often).
            top_k: hits per query, best first.

        Example:
            >>> corpus = encoder.encode(["How do I fix a flat?", "Best stout?"])  # doctest: +SKIP
            >>> encoder.search(["puncture repair"], corpus, top_k=1)  # doctest: +SKIP
            [[(0, 0.62)]]
        """
        # sentence-transformers, torch on first use: the CLI starts without them
        import torch
        from sentence_transformers.util import semantic_search

        check_top_k(top_k, caller="search")
        queries = check_texts(queries, what="queries", caller="search")
        if not isinstance(corpus, np.ndarray):
            corpus = check_texts(corpus, what="corpus texts", caller="search")
        embeddings = corpus if isinstance(corpus, np.ndarray) else self.encode(corpus)
        hits = semantic_search(
            torch.from_numpy(self.encode(queries, batch_size=batch_size)),
            torch.from_numpy(np.ascontiguousarray(embeddings)),
            top_k=top_k,
        )
        return [[(int(h["corpus_id"]), float(h["score"])) for h in row] for row in hits]

    def __repr__(self) -> str:
        name = self.card.get("name") if self.card else None
        at = "" if self.precision == "fp32" else f", precision={self.precision!r}"
        return f"BiEncoder(base_model={self.base_model!r}, name={name!r}, device={self.device}{at})"
