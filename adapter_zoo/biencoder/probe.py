"""Whether a loaded bi-encoder entry acts as the one saved: a fixed probe text's embedding.

The card records how far the entry moves one short probe text off its base (the cosine
between its embedding and the base's, the entry's adapters switched off), and loading
recomputes it; the tolerance, the card field and the refusal are every adapter entry's
(:mod:`adapter_zoo.ranker.probe`, which says why). One text, embedded twice, is all it costs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapter_zoo.biencoder.encoder import transformer_of
from adapter_zoo.ranker.model import adapters_off
from adapter_zoo.ranker.probe import PROBE_FIELD, PROBE_QUESTION, check_cosine, recorded_cosine

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

PROBE_TEXT = PROBE_QUESTION


def probe_cosine(model: SentenceTransformer, text: str = PROBE_TEXT) -> float:
    """The cosine between ``model``'s embedding of ``text`` and its base's (every adapter
    of ``model`` off), in float64 from the float32 embeddings.

    Example:
        >>> probe_cosine(adapter_zoo.load("beer-bi").model)  # doctest: +SKIP
        0.9731
    """
    # torch on first use: importing this module stays light
    import torch

    with torch.inference_mode():
        own = model.encode([text], convert_to_tensor=True, normalize_embeddings=True)
        with adapters_off(transformer_of(model)):
            base = model.encode([text], convert_to_tensor=True, normalize_embeddings=True)
    return float((own.double() * base.double()).sum())


def probe_record(model: SentenceTransformer) -> dict:
    """The card's ``probe`` field for ``model`` as saved.

    Example:
        >>> probe_record(model)  # doctest: +SKIP
        {'text': 'How often should I replace the chain on my bicycle?', 'cosine_to_base': 0.9731}
    """
    return {"text": PROBE_TEXT, "cosine_to_base": recorded_cosine(probe_cosine(model))}


def check_probe(model: SentenceTransformer, card: dict, path) -> None:
    """Refuse the loaded entry ``model`` (of ``card``, at ``path``) when it does not move
    the card's probe text off its base as it did when saved; a card without a probe passes.

    Raises:
        ZooError: one line naming the entry, both cosines and what that means
            (:func:`adapter_zoo.ranker.probe.check_cosine`; the card's field itself is
            checked with the card, :func:`adapter_zoo.zoo.store.check_card`).
    """
    probe = card.get(PROBE_FIELD)
    if probe is None:
        return
    check_cosine(probe_cosine(model, probe["text"]), card, path, "probe text")
