"""Whether a loaded bi-encoder entry acts as the one saved: a fixed probe text's embedding.

Adapters that load without error can still leave a model returning its base's embeddings
(weights loaded but not activated, or dropped by a loader that does not know them), and
nothing else would notice: scores still come out, a little worse. So at save time the card
records how far the entry moves one short probe text off its base (the cosine between its
embedding and the base's, the entry's adapters switched off), and loading recomputes it:
an entry that no longer moves the probe as its card says is refused. One text, embedded
twice, is all it costs. A whole fine-tuned model (layout ``full``) has no adapters to switch
off, and no base at hand to compare with, so its card holds no probe; nor do cards written
before the probe, which load as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapter_zoo.biencoder.encoder import transformer_of
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.model import adapters_off

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

PROBE_FIELD = "probe"
PROBE_TEXT = "How often should I replace the chain on my bicycle?"
# A loaded entry's distance to the base on the probe (1 - cosine) may differ from the saved
# one by rounding (another device or thread count, a base trained in bf16 and loaded in
# float32): this share of it, plus NOISE. An
# entry whose weights are off is at distance 0, far outside; an entry that hardly moves the
# probe (an adapter still at its identity start) is within NOISE of the base and cannot be
# told from it, which is then no error.
SHARE = 0.25
NOISE = 5e-5


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
    cosine = min(1.0, max(-1.0, probe_cosine(model)))  # float rounding may pass 1
    return {"text": PROBE_TEXT, "cosine_to_base": round(cosine, 7)}


def check_probe(model: SentenceTransformer, card: dict, path) -> None:
    """Refuse the loaded entry ``model`` (of ``card``, at ``path``) when it does not move
    the card's probe text off its base as it did when saved; a card without a probe passes.

    Raises:
        ZooError: one line naming the entry, both cosines and what that means (the card's
            field itself is checked with the card, :func:`adapter_zoo.zoo.store.check_card`).
    """
    probe = card.get(PROBE_FIELD)
    if probe is None:
        return
    text, want = probe["text"], probe["cosine_to_base"]
    got = probe_cosine(model, text)
    saved, loaded = 1.0 - float(want), 1.0 - got
    if abs(loaded - saved) > NOISE + SHARE * abs(saved):
        raise ZooError(
            f"{path}: zoo entry {card['name']!r} does not act as saved (its probe text's "
            f"cosine to the base is {got:.6f}, its card says {float(want):.6f}): its weights "
            "are not active; refused"
        )
