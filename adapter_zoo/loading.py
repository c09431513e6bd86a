"""``adapter_zoo.load``: a name or folder to a ready Ranker, verified first.

Names are resolved by :func:`adapter_zoo.resolve.resolve_entry` (a plain name is an entry of
the local zoo, else of the Hub; anything with a separator is a folder); :func:`resolve_entry`
here adds building: a name that is neither but is a forum of the site catalog (``travel``,
``travel.stackexchange.com``) is built from the forum's dump (:mod:`adapter_zoo.build`) when
asked to (``load``'s default), and the entry is cached under the forum's short name.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from adapter_zoo.build import build_entry
from adapter_zoo.errors import ZooError
from adapter_zoo.hub import list_remote
from adapter_zoo.names import parse_model_name
from adapter_zoo.precision import INT8, PrecisionError, apply_precision, resolve_precision
from adapter_zoo.registry import kind_for_card, kind_for_name
from adapter_zoo.resolve import resolve_entry as find_entry
from adapter_zoo.zoo.store import (
    CARD_FILE,
    local_cards,
    local_entry,
    shipped_home,
    verify_entry,
)

logger = logging.getLogger(__name__)


def resolve_entry(
    name_or_path: str,
    *,
    revision: str | None = None,
    build: bool = False,
    base_model: str | None = None,
    build_steps: int | None = None,
) -> Path:
    """The entry folder for a local zoo name, a local path, else the Hub; else, for a forum of
    the site catalog, the entry built from its dump (with ``build``; else a ZooError saying
    how to build it).

    Args:
        name_or_path: a zoo name, entry folder, Hub name, or catalog forum (short name or host).
        revision: Hub revision (a name with a revision is never built).
        build: build a catalog forum's entry when nothing else has the name.
        base_model: the base a built entry is trained on (default ``minilm-l6``).
        build_steps: training steps of a built entry (default
            :data:`adapter_zoo.build.BUILD_STEPS`).

    Example:
        >>> resolve_entry("travel", build=True)  # doctest: +SKIP
        PosixPath('.../adapter-zoo/travel')
    """
    if not build:
        return find_entry(name_or_path, revision=revision)
    options = {"base_model": base_model, "steps": build_steps}
    options = {k: v for k, v in options.items() if v is not None}
    return find_entry(
        name_or_path, revision=revision, build=lambda forum: build_entry(forum, **options)
    )


def load(
    name_or_path: str,
    *,
    revision: str | None = None,
    device: str | None = None,
    base_model: str | None = None,
    build: bool = True,
    build_steps: int | None = None,
    max_length: int | None = None,
    precision: str = "auto",
) -> Any:  # the model its kind opens: Ranker, BiEncoder, a composite, a cascade, BM25...
    """Load any model the zoo knows as a ranker, a zoo entry after checking its files.

    The model's kind (:mod:`adapter_zoo.kinds`) opens it: the name's spelling says it for
    ``sbert:``, ``base:``, specs, ``bm25``/``tfidf`` and MultiCQA files, the entry's card for
    the rest. Cross-encoder entries give a :class:`~adapter_zoo.ranker.Ranker`, bi-encoder
    entries (card ``encoder: "bi"``) a :class:`~adapter_zoo.biencoder.BiEncoder`, cascades a
    :class:`~adapter_zoo.CascadeRanker`; all have ``score(pairs)`` and
    ``rank(query, candidates)``.

    A forum of the site catalog that neither the local zoo nor the Hub has (``travel``,
    ``travel.stackexchange.com``, ``bicycles.meta``) is built on first use: its dump is
    downloaded (archive.org's ``stackexchange`` collection, or the mirror in
    ``$ADAPTER_ZOO_DUMP_MIRROR``) and checked, parsed, and the zoo's default bi-encoder adapter
    trained on it (minutes on a CPU; one INFO log line says what and how long) and cached in
    the local zoo under the forum's short name (see :mod:`adapter_zoo.build`).

    Compositions load as rankers with the same ``score``/``rank`` (see
    :mod:`adapter_zoo.compose`): a ``fusion:``/``rerank:`` spec, ``bm25``, or a composite zoo
    entry (its members loaded by name).

    Args:
        name_or_path: a short name in the local zoo, an entry folder, ``sbert:<base>`` (the
            base as a zero-shot bi-encoder), a published MultiCQA
            adapter (``pytorch_adapter.bin`` or its folder, see ``adapter_zoo.zoo.multicqa``),
            a Hub name, a spec (``fusion:A+B*0.2+bm25*0.1``, ``rerank:A>B@20``), ``bm25``,
            ``tfidf`` or ``base:<base>`` (the untrained base with a fresh head).
        revision: Hub revision (only for names fetched from the Hub).
        device: torch device; CUDA when available by default.
        base_model: when given, the entry must have been made for this base model (and a
            built entry is trained on it).
        build: build a catalog forum's entry when nothing else has the name; False refuses,
            saying how to build it.
        build_steps: training steps of a built entry (default 40, the zoo's recipe).
        max_length: score at this token limit instead of the entry's own (the one it was
            trained and selected at); kinds without one (bm25, compositions) refuse it.
        precision: ``auto`` (bf16 on a CUDA GPU with bf16, fp32 on every CPU), ``fp32``,
            ``int8`` (the model's ONNX export quantized to int8, run by ONNX Runtime on the
            CPU, cached per weights: :mod:`adapter_zoo.onnx`; bi- and cross-encoder models
            only) or ``bf16`` (refused where the device lacks it): the dtype the model's
            weights score in (:mod:`adapter_zoo.precision`; compositions pass it to their
            members; BM25, TF-IDF and cascades stay fp32). The model's ``precision`` says
            which it runs at; scores are float32 either way.

    Example:
        >>> ranker = load("beer")  # doctest: +SKIP
        >>> encoder = load("travel")  # on a fresh machine: downloads, parses, trains, caches
        ... # doctest: +SKIP
        >>> ranker.rank("Which glass for a stout?", ["A nonic pint.", "Any bicycle."])  # doctest: +SKIP
    """

    name = parse_model_name(name_or_path)
    local_entry(name_or_path)  # refuses "." and ".." before anything is read
    dtype = resolve_precision(precision, device)  # a refused bf16 before any loading
    if precision == INT8:
        device = "cpu"  # ONNX Runtime's int8 kernels: the export is made from the CPU model
    named = kind_for_name(name)
    if named is not None:
        if (revision is not None or base_model is not None) and not named.takes_base_model:
            raise ZooError(f"{name_or_path}: a {named.summary} takes no revision or base_model")
        model = named.load_name(name, device=device, base_model=base_model)
        model = _at_length(model, named, max_length, name.text)
        return _at_int8(model, name.text) if precision == INT8 else (
            _at_precision(model, dtype, name.text)
        )  # fmt: skip
    path = resolve_entry(
        name_or_path,
        revision=revision,
        build=build,
        base_model=base_model,
        build_steps=build_steps,
    )
    card = _verified(path)
    if base_model is not None and str(base_model) != str(card["base_model"]):
        raise ZooError(
            f"{path}: zoo entry {card['name']!r} was made for base model "
            f"{card['base_model']!r}, not {base_model!r}"
        )
    kind = kind_for_card(card, path / CARD_FILE)
    model = _at_length(kind.load_entry(path, card, device=device), kind, max_length, str(path))
    if precision == INT8:
        return _at_int8(model, card["name"])
    return _at_precision(model, dtype, str(path))


def _verified(path: Path) -> dict:
    """:func:`~adapter_zoo.zoo.store.verify_entry` of ``path``; a shipped entry that fails
    says where the fix is (the package's files are damaged: nothing the user wrote)."""
    try:
        return verify_entry(path)
    except ZooError as error:
        if shipped_home().resolve() not in path.resolve().parents:
            raise
        raise type(error)(
            f"{error}; the entry ships with adapter-zoo and was changed since: reinstall "
            "adapter-zoo, or put an entry of that name in your zoo (it shadows the shipped one)"
        ) from None


def _at_int8(model, name: str):
    """``model`` scoring through its int8 ONNX export (:mod:`adapter_zoo.onnx`; a
    composition's members each through theirs); kinds without one refused in one line."""
    # heavy: adapter_zoo.onnx loads torch, sentence-transformers, onnxruntime when imported
    from adapter_zoo.onnx.scorer import onnx_refusal, to_int8

    scorer = to_int8(model)
    if scorer is None:
        raise PrecisionError(
            f"precision int8: {name} {onnx_refusal(model)}; int8 scores bi-encoder and "
            "cross-encoder models and compositions of them; use --precision auto or fp32"
        )
    return scorer


def _at_precision(model, dtype, name: str):
    # torch on first use: the CLI starts without it
    import torch

    if dtype != torch.float32:
        logger.debug("%s: %s", name, apply_precision(model, dtype))
    return model


def _at_length(model, kind, max_length: int | None, name: str):
    if max_length is not None:
        kind.set_max_length(model, max_length, name)
    return model


def list_entries(remote: bool = False) -> list[dict]:
    """Cards of the zoo entries on this machine (sorted by name): the user's (``source``
    ``local``) and the package's shipped ones a user's entry does not shadow (``shipped``);
    with ``remote``, also the Hub index's entries of names neither has (``hub``). An entry
    whose card cannot be read is listed with ``broken``, the reason (see
    ``adapter_zoo.zoo.local_cards``).

    Example:
        >>> sorted({card["source"] for card in list_entries()}) <= ["local", "shipped"]
        True
    """
    cards = local_cards()
    if remote:
        local = {card["name"] for card in cards}
        for card in list_remote():
            if card.get("name") not in local:
                cards.append({**card, "source": "hub"})
    return cards
