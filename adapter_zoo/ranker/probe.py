"""Whether a loaded adapter entry acts as the one saved: the card's ``probe``, recomputed.

Adapters that load without error can still leave a model returning its base's outputs
(weights loaded but not activated, or dropped by a loader that does not know them), and
nothing else would notice: scores still come out, a little worse. So at save time the card
records how far the entry moves a fixed probe off its base (a cosine between the entry's
output and the same with its adapters switched off), and loading recomputes it: an entry
that no longer moves the probe as its card says is refused in one line. Every entry kind
that loads adapter weights shares what is here: the tolerance, the card field's shape and
the refusal. A bi-encoder embeds one text (:mod:`adapter_zoo.biencoder.probe`); a
cross-encoder, and a cascade's encoder, read one (question, answer) pair, compared by its
first token's last hidden state (:func:`pair_probe_cosine`).

A whole fine-tuned model (layout ``full``) has no adapters to switch off, and no base at hand
to compare with, so its card holds no probe; nor do cards written before the probe, which
load as before (they have no saved cosine to compare with).
"""

from __future__ import annotations

from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.model import adapters_off
from adapter_zoo.ranker.ranker import encode_pairs

PROBE_FIELD = "probe"
PROBE_QUESTION = "How often should I replace the chain on my bicycle?"
PROBE_ANSWER = "Every few thousand kilometres, or once a chain checker shows it has stretched."
# A probe's texts are embedded or read at load: a card's may not be long.
MAX_PROBE_CHARS = 1_000
# A loaded entry's distance to the base on the probe (1 - cosine) may differ from the saved
# one by rounding (another device or thread count, a base trained in bf16 and loaded in
# float32): this share of it, plus NOISE. An entry whose weights are off is at distance 0,
# far outside; an entry that hardly moves the probe (an adapter still at its identity start)
# is within NOISE of the base and cannot be told from it, which is then no error.
SHARE = 0.25
NOISE = 5e-5
# The probe's token limit: the pair is short, and every base's positions hold it.
PROBE_LENGTH = 64


def probe_texts(card: dict) -> tuple[str, ...]:
    """The texts a card's probe holds, by the entry's encoder: a bi-encoder's ``text``, a
    cross-encoder's (and a cascade's) ``question`` and ``answer``.

    Example:
        >>> probe_texts({"encoder": "bi"})
        ('text',)
        >>> probe_texts({"mode": "cascade"})
        ('question', 'answer')
    """
    return ("text",) if card.get("encoder") == "bi" else ("question", "answer")


def probe_field_problem(card: dict) -> str | None:
    """What the card's ``probe`` field must be when it is not that; None when it is, or when
    the card has none (cards written before it, entries without adapters).

    Example:
        >>> probe_field_problem({"probe": {"text": "a", "cosine_to_base": 0.5}})
        "an object of a 'question' and an 'answer' of 1 to 1000 characters each and a 'cosine_to_base' in [-1, 1]"
    """
    probe = card.get(PROBE_FIELD)
    if probe is None:
        return None
    fields = probe if isinstance(probe, dict) else {}
    keys = probe_texts(card)
    cosine = fields.get("cosine_to_base")
    number = isinstance(cosine, int | float) and not isinstance(cosine, bool)
    short = all(
        isinstance(fields.get(key), str) and 0 < len(fields[key]) <= MAX_PROBE_CHARS for key in keys
    )
    if short and number and -1 <= cosine <= 1:
        return None
    texts = (
        f"a 'text' of 1 to {MAX_PROBE_CHARS} characters"
        if keys == ("text",)
        else f"a 'question' and an 'answer' of 1 to {MAX_PROBE_CHARS} characters each"
    )
    return f"an object of {texts} and a 'cosine_to_base' in [-1, 1]"


def recorded_cosine(cosine: float) -> float:
    """``cosine`` as a card records it: within [-1, 1] (float rounding may pass 1, as an
    adapter still at its identity start does), to 7 decimals.

    Example:
        >>> recorded_cosine(1.0000001), recorded_cosine(0.97312345678)
        (1.0, 0.9731235)
    """
    return round(min(1.0, max(-1.0, float(cosine))), 7)


def check_cosine(got: float, card: dict, path, what: str) -> None:
    """Refuse the entry of ``card`` (at ``path``) when ``got``, its probe's cosine to the base
    recomputed on load, is not the card's within the tolerance; ``what`` names the probe in
    the message (``probe text``, ``probe pair``).

    Raises:
        ZooError: one line naming the entry, both cosines and what that means.

    Example:
        >>> card = {"name": "beer", "probe": {"cosine_to_base": 0.9}}
        >>> check_cosine(0.90001, card, "zoo/beer", "probe pair")
        >>> check_cosine(1.0, card, "zoo/beer", "probe pair")
        Traceback (most recent call last):
        ...
        adapter_zoo.errors.ZooError: zoo/beer: zoo entry 'beer' does not act as saved (its probe pair's cosine to the base is 1.000000, its card says 0.900000): its weights are not active; refused
    """
    want = float(card[PROBE_FIELD]["cosine_to_base"])
    saved, loaded = 1.0 - want, 1.0 - got
    if abs(loaded - saved) > NOISE + SHARE * abs(saved):
        raise ZooError(
            f"{path}: zoo entry {card['name']!r} does not act as saved (its {what}'s cosine "
            f"to the base is {got:.6f}, its card says {want:.6f}): its weights are not "
            "active; refused"
        )


def pair_probe_cosine(
    model, tokenizer, question: str = PROBE_QUESTION, answer: str = PROBE_ANSWER
) -> float:
    """The cosine between ``model``'s last hidden state of the pair's first token (``[CLS]``)
    and its base's (every adapter of ``model`` off), in float64, the model in eval mode.

    ``model`` is an adapters model: a Ranker's ``AutoAdapterModel`` (its encoder, without the
    head, is read) or a plain encoder with adapters (a cascade's). The head is left out: it
    is the same with adapters on and off, so only the adapters move this cosine.

    Example:
        >>> ranker = adapter_zoo.load("beer-cross")  # doctest: +SKIP
        >>> pair_probe_cosine(ranker.model, ranker.tokenizer)  # doctest: +SKIP
        0.9412
    """
    # torch on first use: importing this module stays light
    import torch

    encoder = model.base_model
    device = next(encoder.parameters()).device
    batch = encode_pairs(tokenizer, [question], [answer], PROBE_LENGTH, padding=False)
    inputs = {k: torch.tensor(v, device=device) for k, v in batch.items()}
    training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            own = encoder(**inputs).last_hidden_state[:, 0].double()
            with adapters_off(model):
                base = encoder(**inputs).last_hidden_state[:, 0].double()
    finally:
        model.train(training)
    return float(torch.nn.functional.cosine_similarity(own, base).item())


def pair_probe_record(model, tokenizer) -> dict:
    """The card's ``probe`` field for the cross-encoder (or cascade encoder) ``model`` as saved.

    Example:
        >>> pair_probe_record(ranker.model, ranker.tokenizer)  # doctest: +SKIP
        {'question': 'How often ...?', 'answer': 'Every few ...', 'cosine_to_base': 0.9412}
    """
    cosine = recorded_cosine(pair_probe_cosine(model, tokenizer))
    return {"question": PROBE_QUESTION, "answer": PROBE_ANSWER, "cosine_to_base": cosine}


def check_pair_probe(model, tokenizer, card: dict, path) -> None:
    """Refuse the loaded cross-encoder entry ``model`` (of ``card``, at ``path``) when it does
    not move the card's probe pair off its base as it did when saved; a card without a probe
    passes.

    Raises:
        ZooError: one line (:func:`check_cosine`; the card's field itself is checked with
            the card, :func:`adapter_zoo.zoo.store.check_card`).
    """
    probe = card.get(PROBE_FIELD)
    if probe is None:
        return
    got = pair_probe_cosine(model, tokenizer, probe["question"], probe["answer"])
    check_cosine(got, card, path, "probe pair")
