"""The zoo entries ``adapt`` chooses among, and the alias entry it saves for a single choice:
what both :func:`~adapter_zoo.adapt.adapt.adapt` and :mod:`adapter_zoo.adapt.learn` use."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from adapter_zoo.adapt.domain import entry_centroid
from adapter_zoo.compose.spec import ALIAS, load_member
from adapter_zoo.errors import ZooError
from adapter_zoo.loading import resolve_entry
from adapter_zoo.ranker.probe import NOISE, PROBE_FIELD
from adapter_zoo.registry import kind_for_card
from adapter_zoo.zoo.store import entry_folder, is_entry_name, local_cards, read_card, save_entry

logger = logging.getLogger(__name__)

# Entries adapt chooses from: one forum's adapter, or a multi-task adapter over several.
# the kinds (adapter_zoo.kinds) adapt chooses among: adapters with a domain centroid
ADAPTER_KINDS = ("cross-adapter", "cross-multitask", "bi-adapter", "bi-multitask")
MULTITASK_KINDS = ("cross-multitask", "bi-multitask")
# adapt's auto strategy trains its candidates as entries <name>--<candidate> and removes them
# when it has decided; one left by an interrupted run is never taken as a zoo member.
CANDIDATE_MARK = "--"


def zoo_centroids(zoo: Sequence[str] | None = None) -> tuple[dict, dict]:
    """``(centroids, cards)`` of the zoo entries adapt may use, by name.

    ``zoo=None``: every ``adapter``/``multitask`` entry with a domain centroid, the user's
    and the shipped (the others are skipped and logged); named entries must each have one.
    """

    centroids, cards = {}, {}
    if zoo is None:
        for card in local_cards():
            name = card["name"]
            if CANDIDATE_MARK in name:  # a candidate of an adapt run, not a zoo member
                continue
            if "broken" in card or kind_for_card(card).name not in ADAPTER_KINDS:
                logger.info("adapt: skipping %s (a %s entry)", name, card.get("mode"))
                continue
            if ranks_as_base(card):  # scoring it would score the base again
                logger.info("adapt: skipping %s (its adapter ranks as the base)", name)
                continue
            try:
                centroids[name] = entry_centroid(card["path"])
            except ZooError as error:
                logger.warning("adapt: skipping %s: %s", name, error)
                continue
            cards[name] = card
        return centroids, cards

    for name in map(str, zoo):
        path = resolve_entry(name) if is_entry_name(name) else Path(name).expanduser()
        card = read_card(path)
        if kind_for_card(card).name not in ADAPTER_KINDS:
            raise ZooError(f"adapt: {name!r} is a {card.get('mode')!r} entry, not an adapter")
        centroids[name] = entry_centroid(path)
        cards[name] = card
    return centroids, cards


def alias_entry(
    name: str,
    member: str,
    *,
    card: dict | None = None,
    overwrite=False,
    max_length: int | None = None,
) -> Path:
    """Save the composite entry ``name`` that loads as ``member`` (a zoo name, a Hub name or
    ``sbert:<base>``), with its own card; ``max_length``: the member ranks at that token
    limit (``adapt`` keeps the zero-shot base at 512 tokens where that decided).

    Example:
        >>> alias_entry("my-domain", "sbert:minilm-l6")  # doctest: +SKIP
    """

    if entry_folder(name).name == str(member):
        raise ZooError(f"alias {name!r} cannot name itself")
    load_member(str(member))  # the member must load before the entry names it
    full = {
        "mode": "composite",
        "encoder": "composite",
        "composition": ALIAS,
        "base_model": "composite",
        "members": [str(member)],
        "forums": [],
        "spec": str(member),
        **(card or {}),
    }
    if max_length is not None:
        full["max_length"] = int(max_length)
    return save_entry(lambda folder: None, name, full, overwrite=overwrite)


def ranks_as_base(card: dict) -> bool:
    """Whether the entry of ``card`` leaves its base's outputs as they are: an adapter still
    at its identity start (a new adapter's up-projection starts at zero), as a run that never
    beat its base keeps. Its probe's cosine to the base is within the probe's noise of 1, or
    a card without a probe records a new adapter kept at step 0.

    Example:
        >>> ranks_as_base({"probe": {"text": "t", "cosine_to_base": 1.0}})
        True
        >>> ranks_as_base({"layout": "adapter", "training": {"best_step": 0}})
        True
        >>> ranks_as_base({"layout": "adapter", "training": {"best_step": 20}})
        False
    """
    probe = card.get(PROBE_FIELD)
    if isinstance(probe, dict) and isinstance(probe.get("cosine_to_base"), int | float):
        return 1.0 - float(probe["cosine_to_base"]) <= NOISE
    training = card.get("training") if isinstance(card.get("training"), dict) else {}
    new = card.get("layout") == "adapter" and not card.get("init_from")
    return new and training.get("best_step") == 0
