"""The Ranker: scores (query, candidate) pairs with a cross-encoder."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from adapter_zoo.devices import pick_device
from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import CROSS_MAX_LENGTH
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.precision import cast_for_inference, precision_name
from adapter_zoo.ranker.inputs import check_max_length, check_ranking, text_pairs
from adapter_zoo.ranker.model import add_ranking_head, build_model

UNTRAINED_HEAD = "ranker"
# Texts are cut to max_length * CHARS_PER_TOKEN characters before tokenisation: a pair's
# tokenisation (with truncation) costs memory in proportion to the product of both texts'
# lengths, so a 1 MB candidate would otherwise take gigabytes for the same max_length tokens.
# English WordPiece tokens average 4-5 characters; 16 leaves every normal text untouched.
CHARS_PER_TOKEN = 16
_LAST_SPACE = re.compile(r"\s(?=\S*$)")


def clip_text(text: str, max_length: int) -> str:
    """``text`` cut to ``max_length * CHARS_PER_TOKEN`` characters, at the last whitespace
    before that bound (a word is never split); a text within the bound is returned as is.

    The cut keeps far more than ``max_length`` tokens of any ordinary text, so the tokens a
    model reads are those of the whole text; only a text with more characters per token than
    the bound allows (e.g. one very long "word") can read differently.

    Example:
        >>> clip_text("a stout", 1)
        'a stout'
        >>> clip_text("a stout " * 3, 1)
        'a stout a stout'
        >>> len(clip_text("word " * 1000, 2))
        29
    """
    bound = int(max_length) * CHARS_PER_TOKEN
    if len(text) <= bound:
        return text
    head = text[:bound]
    space = _LAST_SPACE.search(head)
    return head[: space.start()] if space and space.start() > 0 else head


def clip_pair(query: str, candidate: str, max_length: int) -> tuple[str, str]:
    """A (query, candidate) pair cut for tokenisation: the longer text (in characters) at
    twice :func:`clip_text`'s bound, the other at the bound itself.

    Truncation (``longest_first``) takes tokens from the longer side first, so the longer
    text must stay the longer one after the cut for the model to read the same tokens.

    Example:
        >>> [len(t) for t in clip_pair("word " * 1000, "word " * 10, 4)]
        [124, 50]
    """
    query_bound, candidate_bound = (2, 1) if len(query) > len(candidate) else (1, 2)
    return (
        clip_text(query, query_bound * max_length),
        clip_text(candidate, candidate_bound * max_length),
    )


def encode_pairs(
    tokenizer, queries: Sequence[str], candidates: Sequence[str], max_length: int, *, padding=True
):
    """Tokenize (query, candidate) pairs the one way every model here reads them.

    One sequence per pair, the longer side truncated first; padded torch tensors unless
    ``padding=False`` (then plain lists, without ``pair_segments``). Padded batches also
    hold ``pair_segments`` (see :func:`pair_segments`), which the pair-cosine head reads
    and other heads ignore. Texts are cut first (:func:`clip_pair`), so memory does not grow
    with text length.
    """
    clipped = [clip_pair(q, c, max_length) for q, c in zip(queries, candidates, strict=True)]
    encoded = tokenizer(
        [q for q, _ in clipped],
        [c for _, c in clipped],
        truncation="longest_first",
        max_length=max_length,
        padding=padding,
        return_tensors="pt" if padding else None,
    )
    if padding:
        # torch on first use: the CLI starts without it
        import torch

        # heavy: ranker.heads loads torch, transformers, adapters when imported
        from adapter_zoo.ranker.heads import SEGMENTS_KEY

        encoded[SEGMENTS_KEY] = torch.tensor(pair_segments(encoded), dtype=torch.long)
    return encoded


def pair_segments(encoded) -> list[list[int]]:
    """Per tokenized pair: 1 for each query token, 2 for each candidate token, 0 for special
    tokens and padding (from the fast tokenizer's ``sequence_ids``, so BERT and RoBERTa alike)."""
    return [
        [0 if s is None else s + 1 for s in encoded.sequence_ids(i)]
        for i in range(len(encoded["input_ids"]))
    ]


def length_order(tokenizer, pairs: Sequence[tuple[str, str]], max_length: int) -> np.ndarray:
    """Indices of ``pairs``, longest first (stable), so batches taken in order pad little."""
    clipped = [clip_pair(q, c, max_length) for q, c in pairs]
    lengths = tokenizer(
        [q for q, _ in clipped],
        [c for _, c in clipped],
        truncation="longest_first",
        max_length=max_length,
        return_length=True,
    )["length"]
    return np.argsort(-np.asarray(lengths), kind="stable")


def rank_candidates(
    scorer,
    query: str,
    candidates: Sequence[str],
    *,
    top_k: int | None = None,
    return_documents: bool | None = None,
    scores=None,
) -> list[tuple[str, float]] | list[dict]:
    """``candidates`` sorted best first by ``scorer.score`` (anything with ``score(pairs)``),
    or by ``scores`` when given (one per candidate); ties keep input order; the first
    ``top_k`` when given.

    By default each is a (candidate, score) tuple. With ``return_documents`` given (True or
    False) each is a sentence-transformers ``CrossEncoder.rank`` dict instead:
    ``{"corpus_id": index in candidates, "score": score}``, plus ``"text"`` when True.
    """
    query, candidates = check_ranking(query, candidates, top_k)
    if scores is None:
        scores = scorer.score([(query, c) for c in candidates])
    scores = np.asarray(scores)
    order = np.argsort(-scores, kind="stable")[:top_k]
    if return_documents is None:
        return [(candidates[i], float(scores[i])) for i in order]
    ranked = [{"corpus_id": int(i), "score": float(scores[i])} for i in order]
    if return_documents:
        for row in ranked:
            row["text"] = candidates[row["corpus_id"]]
    return ranked


class Ranker:
    """Scores (query, candidate) pairs: query and candidate joined as a text pair.

    Attributes:
        model: the ``adapters`` model; its active setup yields one logit per pair.
        tokenizer: the base model's tokenizer.
        base_model: the base model's short name, Hub id or path.
        card: the zoo card (dict) when loaded from the zoo, else None.
        device: the torch device the model runs on.
        max_length: pairs are truncated to this many tokens (the candidate first).

    Example:
        >>> ranker = Ranker.from_base("minilm-l6")  # doctest: +SKIP
        >>> ranker.score([("What is a stout?", "A dark beer.")])  # doctest: +SKIP
        array([0.03], dtype=float32)
    """

    def __init__(
        self,
        model,
        tokenizer,
        *,
        base_model: str,
        card: dict | None = None,
        max_length: int = CROSS_MAX_LENGTH,
        device=None,
    ):
        self.device = pick_device(device)
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.base_model = base_model
        self.card = card
        self.max_length = max_length
        self.precision = "fp32"

    def set_precision(self, dtype) -> Ranker:
        """Score with the model's linear layers (base, adapters) in ``dtype`` (inference
        only; see :mod:`adapter_zoo.precision`); the prediction heads stay float32 and read
        float32 token states, so the logits are float32."""

        heads = getattr(self.model, "heads", None)
        cast_for_inference(self.model, dtype, keep_float=[heads] if heads is not None else [])
        self.precision = precision_name(dtype)
        return self

    @property
    def max_length(self) -> int:
        return self._max_length

    @max_length.setter
    def max_length(self, value: int) -> None:
        self._max_length = check_max_length(
            value, getattr(self.model, "config", None), model=str(self.base_model)
        )

    @classmethod
    def from_base(
        cls, base: str = DEFAULT_BASE, *, max_length: int = CROSS_MAX_LENGTH, device=None
    ) -> Ranker:
        """An untrained ranker: ``base`` with a fresh head seeded with 0 (reproducible)."""
        # torch on first use: the CLI starts without it
        import torch

        model, tokenizer = build_model(base)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            add_ranking_head(model, UNTRAINED_HEAD)
        return cls(model, tokenizer, base_model=base, max_length=max_length, device=device)

    def encode(self, queries: Sequence[str], candidates: Sequence[str]):
        """Tokenize pairs as padded tensors (the longer side truncated first)."""
        return encode_pairs(self.tokenizer, queries, candidates, self.max_length)

    def score(
        self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 64, progress: bool = False
    ) -> np.ndarray:
        """Relevance logits for ``pairs`` (higher is more relevant), in input order.

        Pairs are sorted by token length so each batch pads little, then put back in order.
        """
        # torch, tqdm on first use: the CLI starts without them
        import torch
        from tqdm.auto import tqdm

        pairs = text_pairs(pairs)
        scores = np.zeros(len(pairs), dtype=np.float32)
        if not pairs:
            return scores
        order = length_order(self.tokenizer, pairs, self.max_length)
        self.model.eval()
        with torch.inference_mode():
            starts = range(0, len(order), batch_size)
            for start in tqdm(starts, disable=not progress, desc="scoring", unit="batch"):
                index = order[start : start + batch_size]
                batch = self.encode([pairs[i][0] for i in index], [pairs[i][1] for i in index])
                batch = {k: v.to(self.device) for k, v in batch.items()}
                logits = self.model(**batch).logits
                scores[index] = logits[:, 0].float().cpu().numpy()
        return scores

    def predict(
        self,
        pairs: Sequence[tuple[str, str]] | tuple[str, str],
        *,
        batch_size: int = 64,
        show_progress_bar: bool | None = False,
        activation_fn=None,
        apply_softmax: bool | None = False,
        convert_to_numpy: bool = True,
        convert_to_tensor: bool = False,
        prompt_name: str | None = None,
        prompt: str | None = None,
        device=None,
    ):
        """:meth:`score` under sentence-transformers' ``CrossEncoder.predict`` name and
        keywords: float32 logits as a numpy array, or one numpy scalar for a single pair.

        Args:
            pairs: (query, candidate) pairs, or one pair.
            batch_size: pairs per forward pass.
            show_progress_bar: a progress bar over the batches (None: off).
            activation_fn: applied to the logits (a torch callable such as
                ``torch.nn.Sigmoid()``); None keeps the logits, as the entry's exported
                CrossEncoder (identity activation) does.
            apply_softmax: accepted for CrossEncoder's signature; with one logit per pair
                it changes nothing there either.
            convert_to_numpy: False gives a list of 0-d tensors, as CrossEncoder does.
            convert_to_tensor: one tensor (overrides ``convert_to_numpy``).
            prompt_name: must be None: a zoo ranker has no prompts.
            prompt: must be None (as ``prompt_name``).
            device: None or the ranker's own device; multi-device pools are not supported.

        Raises:
            ZooError: a prompt, or another device, was asked for.

        Example:
            >>> ranker.predict([("What is a stout?", "A dark beer.")])  # doctest: +SKIP
            array([0.03], dtype=float32)
        """
        # torch on first use: the CLI starts without it
        import torch

        if prompt_name is not None or prompt is not None:
            raise ZooError(f"{self!r} has no prompts (asked for {prompt_name or prompt!r})")
        if device is not None and torch.device(device) != self.device:
            raise ZooError(f"{self!r} runs on {self.device}, not {device!r}; use ranker.to()")
        single = len(pairs) == 2 and all(isinstance(text, str) for text in pairs)
        scores = self.score(
            [pairs] if single else pairs, batch_size=batch_size, progress=bool(show_progress_bar)
        )
        if activation_fn is None and convert_to_numpy and not convert_to_tensor:
            return scores[0] if single else scores
        tensor = torch.from_numpy(scores)
        if activation_fn is not None:
            tensor = activation_fn(tensor).float()
        if single:
            tensor = tensor[0]
        if convert_to_tensor:
            return tensor
        if convert_to_numpy:
            return tensor.numpy()
        return tensor if single else list(tensor)

    def rank(
        self,
        query: str,
        candidates: Sequence[str],
        *,
        top_k: int | None = None,
        return_documents: bool | None = None,
        **predict_options,
    ) -> list[tuple[str, float]] | list[dict]:
        """``candidates`` sorted best first; ties keep input order.

        Args:
            query: the question.
            candidates: the texts to rank.
            top_k: keep only the best ``top_k``.
            return_documents: None (default): (candidate, score) tuples. True or False:
                sentence-transformers ``CrossEncoder.rank`` dicts, ``{"corpus_id": i,
                "score": s}`` (``i`` the index in ``candidates``), with ``"text"`` when True.
            **predict_options: :meth:`predict`'s keywords (``batch_size``,
                ``show_progress_bar``, ``activation_fn``, ...), as ``CrossEncoder.rank`` takes.

        Example:
            >>> ranker.rank("Stout?", ["Hops", "Dark ale"], return_documents=True)  # doctest: +SKIP
            [{'corpus_id': 1, 'score': 2.1, 'text': 'Dark ale'}, {'corpus_id': 0, ...}]
        """
        query, candidates = check_ranking(query, candidates, top_k)
        options = {**predict_options, "convert_to_numpy": True, "convert_to_tensor": False}
        scores = self.predict([(query, c) for c in candidates], **options) if candidates else []
        return rank_candidates(
            self, query, candidates, top_k=top_k, return_documents=return_documents,
            scores=scores,
        )  # fmt: skip

    @property
    def model_card_data(self):
        """A sentence-transformers ``CrossEncoderModelCardData``, where its evaluators
        (``CrossEncoderRerankingEvaluator``) record their metrics; made on first use."""
        if getattr(self, "_model_card_data", None) is None:
            # sentence-transformers on first use: the CLI starts without it
            from sentence_transformers.cross_encoder.model_card import CrossEncoderModelCardData

            self._model_card_data = CrossEncoderModelCardData(local_files_only=True)
        return self._model_card_data

    @property
    def num_labels(self) -> int:
        """One relevance logit per pair (``CrossEncoder.num_labels``)."""
        return 1

    def to(self, device) -> Ranker:
        self.device = pick_device(device)
        self.model.to(self.device)
        return self

    def __repr__(self) -> str:
        name = self.card.get("name") if self.card else None
        at = "" if self.precision == "fp32" else f", precision={self.precision!r}"
        return f"Ranker(base_model={self.base_model!r}, name={name!r}, device={self.device}{at})"
