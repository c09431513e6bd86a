"""The pair-cosine ranking head: a cross-encoder head that starts from a sentence encoder.

A sentence-embedding base (all-MiniLM-L6-v2 and the other sentence-transformers models) was
trained so that the mean of a text's token states is its meaning. A classification head on
the CLS token starts from a random function of a vector that model never trained; this head
starts from what the base knows: the pair is encoded jointly (every token attends to both
texts, so it stays a cross-encoder), then the score is a scaled cosine between the mean
state of the query's tokens and the mean state of the candidate's tokens. On the beer
forum's held-out answer-selection set this took a 200-step adapter from below BM25 (MAP 0.27
with the CLS head) to above it (0.73, BM25 0.64).

No library ships such a head, so it is written here as an adapters custom head: it is saved
and loaded with the adapter (``head_config.json`` names ``pair_cosine``), takes part in
``Parallel`` and ``Fuse`` setups, and reads which token belongs to which text from the
``pair_segments`` tensor that :func:`adapter_zoo.ranker.encode_pairs` adds to every batch. A
plain tokenizer batch works too once :func:`register_heads` has run: it derives the segments
from the token types or separators (see :mod:`adapter_zoo.ranker.segments`).
"""

from __future__ import annotations

import torch
from adapters.composition import adjust_tensors_for_parallel
from adapters.heads.base import PredictionHead
from torch import nn
from transformers.modeling_outputs import SequenceClassifierOutput

from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.segments import (
    CANDIDATE,
    PAIR_COSINE,
    QUERY,
    SEGMENTS_KEY,
    add_pair_segments,
)

# The initial scale is sentence-transformers' MultipleNegativesRankingLoss scale; the bias
# puts the decision boundary at cosine 0.5, so pointwise BCE starts sensible too.
INITIAL_SCALE = 20.0
INITIAL_BIAS = -10.0


def segment_means(hidden: torch.Tensor, segments: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Mean hidden state (B, H) of the query tokens and of the candidate tokens."""
    means = []
    for value in (QUERY, CANDIDATE):
        weights = (segments == value).unsqueeze(-1).to(hidden.dtype)
        means.append((hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0))
    return tuple(means)


def pair_cosine_logits(hidden, segments, scale, bias) -> torch.Tensor:
    """``scale * cos(query mean, candidate mean) + bias`` per pair, shape (B,)."""
    query, candidate = segment_means(hidden, segments)
    return scale * nn.functional.cosine_similarity(query, candidate, dim=-1) + bias


class PairCosineHead(PredictionHead):
    """One relevance logit per pair: a learnt scale times the cosine of the two texts' mean
    token states, plus a learnt bias.

    Example:
        >>> from adapter_zoo.ranker import Ranker
        >>> ranker = Ranker.from_base("minilm-l6")  # doctest: +SKIP
        >>> ranker.model.heads["ranker"].config["head_type"]  # doctest: +SKIP
        'pair_cosine'
    """

    def __init__(self, model, head_name, scale=INITIAL_SCALE, bias=INITIAL_BIAS, **_ignored):
        super().__init__(head_name)
        self.config = {"head_type": PAIR_COSINE, "num_labels": 1, "scale": scale, "bias": bias}
        self.scale = nn.Parameter(torch.tensor(float(scale)))
        self.bias = nn.Parameter(torch.tensor(float(bias)))
        self.train(model.training)

    def forward(self, outputs, cls_output=None, attention_mask=None, return_dict=False, **kwargs):
        hidden = outputs[0]
        segments = kwargs.get(SEGMENTS_KEY)
        if segments is None:
            raise ZooError(
                f"the {PAIR_COSINE} head needs the {SEGMENTS_KEY!r} tensor of "
                "adapter_zoo.ranker.encode_pairs, or input_ids with token_type_ids (or a "
                "separator token) to find the two texts"
            )
        (segments,) = adjust_tensors_for_parallel(hidden, segments.to(hidden.device))
        logits = pair_cosine_logits(hidden, segments, self.scale, self.bias).unsqueeze(-1)
        if return_dict:
            return SequenceClassifierOutput(
                logits=logits, hidden_states=outputs.hidden_states, attentions=outputs.attentions
            )
        return (logits,) + tuple(outputs[1:])


def register_heads(model) -> None:
    """Teach an adapters model adapter-zoo's pair-cosine head, so it can add and load one.

    Registers the ``pair_cosine`` custom head type (saved heads name it in
    ``head_config.json``) and a forward pre-hook that, for a model with such a head, derives
    ``pair_segments`` from a plain tokenizer batch (token types or separators) when the
    inputs lack it. Call it before ``load_adapter`` of an entry made on a sentence-encoder
    base such as all-MiniLM-L6-v2; it is harmless for other models and when called twice.

    Args:
        model: an ``adapters`` model with flexible heads (``AutoAdapterModel``).

    Example:
        >>> import adapters
        >>> from adapter_zoo import register_heads
        >>> model = adapters.AutoAdapterModel.from_pretrained(base)  # doctest: +SKIP
        >>> register_heads(model)  # doctest: +SKIP
        >>> model.load_adapter(entry, set_active=True, use_safetensors=True)  # doctest: +SKIP
        >>> batch = tokenizer(queries, answers, padding=True, return_tensors="pt")  # doctest: +SKIP
        >>> scores = model(**batch).logits[:, 0]  # = the Ranker's scores  # doctest: +SKIP
    """
    model.register_custom_head(PAIR_COSINE, PairCosineHead)
    if add_pair_segments not in model._forward_pre_hooks.values():
        model.register_forward_pre_hook(add_pair_segments, with_kwargs=True)
