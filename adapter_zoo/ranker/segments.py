"""Which token of a tokenized pair belongs to which text, found from a plain tokenizer batch.

:func:`adapter_zoo.ranker.encode_pairs` hands the pair-cosine head its ``pair_segments``
(1 query token, 2 candidate token, 0 special token or padding). A batch made by the tokenizer
alone has no such tensor; :func:`segments_from_inputs` derives the same values from what it
has, and :func:`add_pair_segments` (a forward pre-hook that ``register_heads`` installs)
adds them to the inputs of a model with a pair-cosine head, so that
``model(**tokenizer(queries, candidates, ...))`` scores as the Ranker does.
"""

from __future__ import annotations

import torch

QUERY, CANDIDATE = 1, 2  # values in pair_segments; 0 marks special tokens and padding
SEGMENTS_KEY = "pair_segments"
PAIR_COSINE = "pair_cosine"
_INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")  # forward()'s first arguments


def segments_from_inputs(
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None,
    token_type_ids: torch.Tensor | None,
    *,
    type_vocab_size: int = 2,
    sep_token_id: int | None = None,
) -> torch.Tensor | None:
    """``pair_segments`` (B, L) for a batch of tokenized pairs, or None when it cannot tell.

    With ``token_type_ids`` (and a model that reads them, ``type_vocab_size`` > 1; BERT's
    ``[CLS] query [SEP] candidate [SEP]``) the query is the first text's tokens after the
    first token and before its last (the ``[SEP]``), the candidate the second text's tokens
    before its last. Without them (RoBERTa's ``<s> query </s></s> candidate </s>``) the query
    lies between the first token and the first ``sep_token_id``, the candidate between the
    first and the last separator. Padding (``attention_mask`` 0) is 0 on either side.

    Args:
        input_ids: token ids (B, L).
        attention_mask: 1 for real tokens (B, L); None means no padding.
        token_type_ids: the tokenizer's segment ids (B, L), or None.
        type_vocab_size: the model config's ``type_vocab_size`` (1: token types unused).
        sep_token_id: the separator's id, for batches without token types.

    Example:
        >>> ids = torch.tensor([[101, 7, 8, 102, 9, 102, 0]])
        >>> mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
        >>> types = torch.tensor([[0, 0, 0, 0, 1, 1, 0]])
        >>> segments_from_inputs(ids, mask, types).tolist()
        [[0, 1, 1, 0, 2, 0, 0]]
        >>> segments_from_inputs(ids, mask, None, sep_token_id=102).tolist()
        [[0, 1, 1, 0, 2, 0, 0]]
    """
    valid = torch.ones_like(input_ids, dtype=torch.bool)
    if attention_mask is not None:
        valid = attention_mask.to(input_ids.device).bool()
    length = input_ids.shape[-1]
    positions = torch.arange(length, device=input_ids.device).expand_as(input_ids)

    def first(mask):  # (B, 1): first position where mask holds, else length
        return torch.where(mask, positions, length).min(-1, keepdim=True).values

    def last(mask):  # (B, 1): last position where mask holds, else -1
        return torch.where(mask, positions, -1).max(-1, keepdim=True).values

    start = first(valid)  # [CLS] / <s>
    if token_type_ids is not None and type_vocab_size > 1:
        types = token_type_ids.to(input_ids.device)
        one, two = valid & (types == 0), valid & (types == 1)
        query = one & (positions > start) & (positions < last(one))
        candidate = two & (positions < last(two))
    elif sep_token_id is not None:
        separator = valid & (input_ids == sep_token_id)
        query = valid & (positions > start) & (positions < first(separator))
        between = (positions > first(separator)) & (positions < last(separator))
        candidate = valid & ~separator & between
    else:
        return None
    return query.long() * QUERY + candidate.long() * CANDIDATE


def add_pair_segments(model, args: tuple, kwargs: dict):
    """Forward pre-hook: add ``pair_segments`` derived from the inputs when they lack it and
    ``model`` has a pair-cosine head (see :func:`segments_from_inputs`)."""
    if kwargs.get(SEGMENTS_KEY) is not None:
        return None
    heads = getattr(model, "heads", None) or {}
    if not any(getattr(h, "config", {}).get("head_type") == PAIR_COSINE for h in heads.values()):
        return None
    given = {
        n: kwargs.get(n, args[i] if len(args) > i else None) for i, n in enumerate(_INPUT_NAMES)
    }
    if given["input_ids"] is None:
        return None  # embeddings only: the head says what it needs
    config = model.config
    segments = segments_from_inputs(
        given["input_ids"],
        given["attention_mask"],
        given["token_type_ids"],
        type_vocab_size=int(getattr(config, "type_vocab_size", 1) or 1),
        sep_token_id=getattr(config, "sep_token_id", None) or getattr(config, "eos_token_id", None),
    )
    if segments is None:
        return None
    return args, {**kwargs, SEGMENTS_KEY: segments}
