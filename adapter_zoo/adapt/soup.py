"""AdapterSoup (Chronopoulou et al., 2023): a weight average of zoo adapters.

The members' bottleneck adapters are loaded into one base and averaged parameter by
parameter with the adapters library's ``average_adapter`` (``combine_strategy="linear"``:
each tensor is ``sum_i w_i * tensor_i``, weights normalised to sum 1). The result is saved
as an ordinary bi-encoder adapter entry (``encoder: bi``, ``layout: adapter``), so
``adapter_zoo.load`` opens it like any trained adapter; its card says ``mode: soup`` with the
members, weights and (when planned) similarities.

Only bi-encoder adapter entries (``adapter`` or ``multitask``, and other soups) of one base
and one adapter configuration are averaged: a cross-encoder's classification head is not
part of the soup, so cross-encoder entries are refused.

Example:
    >>> path = soup_entry("beer-bikes", ["beer", "bicycles.meta"], [0.7, 0.3])  # doctest: +SKIP
    >>> adapter_zoo.load("beer-bikes").card["weights"]  # doctest: +SKIP
    [0.7, 0.3]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from adapter_zoo.biencoder.encoder import build_sentence_model, transformer_of
from adapter_zoo.biencoder.layouts import write_bi_adapter
from adapter_zoo.biencoder.probe import PROBE_FIELD, probe_record
from adapter_zoo.errors import ZooError
from adapter_zoo.loading import resolve_entry
from adapter_zoo.registry import card_max_length, kind_for_card
from adapter_zoo.zoo.layouts import ADAPTER_CONFIG_FILE, check_base
from adapter_zoo.zoo.store import entry_folder, is_entry_name, save_entry, verify_entry
from stackexchange.jsontext import read_json_object

SOUP = "soup"
# Kinds whose entry is one bottleneck adapter in a sentence encoder.
# the kinds (adapter_zoo.kinds) a soup averages: bi-encoder adapters, soups included
SOUP_KINDS = ("bi-adapter", "bi-multitask", "bi-soup")
# Configuration keys that do not change what the adapter computes at inference.
_IGNORED_CONFIG_KEYS = ("dropout", "init_weights")


def _adapter_config(path: Path) -> dict:
    file = path / ADAPTER_CONFIG_FILE

    try:
        config = read_json_object(file, ZooError, "the adapter config").get("config") or {}
    except OSError as error:
        raise ZooError(f"{file}: unreadable adapter configuration ({error})") from None
    if not isinstance(config, dict):
        raise ZooError(f"{file}: its 'config' must be a JSON object")
    return {k: v for k, v in config.items() if k not in _IGNORED_CONFIG_KEYS}


def _member(name: str) -> tuple[Path, dict]:
    path = resolve_entry(name) if is_entry_name(name) else Path(name).expanduser()
    card = verify_entry(path)
    kind = kind_for_card(card)
    if kind.name not in SOUP_KINDS:
        raise ZooError(
            f"soup: {name!r} is a {kind.name} entry; a soup averages bi-encoder adapter "
            f"entries ({', '.join(SOUP_KINDS)})"
        )
    return path, card


def soup_entry(
    name: str,
    members: Sequence[str],
    weights: Sequence[float] | None = None,
    *,
    card: dict | None = None,
    overwrite: bool = False,
) -> Path:
    """Average the adapters of ``members`` with ``weights`` into the bi-encoder entry ``name``.

    Args:
        name: the entry's name (or folder).
        members: zoo names or folders of bi-encoder adapter entries, same base and config.
        weights: one per member, >= 0 (normalised to sum 1); default equal.
        card: more card fields (``adapt`` records its plan here).
        overwrite: replace an existing entry of that name.

    Returns:
        The entry's folder. Its ``max_length`` is the members' (the most common one when
        they differ, and ``max_length_note`` says so).

    Raises:
        ZooError: a member that is not a bi-encoder adapter entry, members of different
            bases or adapter configurations, bad weights.
    """

    entry_folder(name)  # a name that is no plain entry name is refused before any work
    members = [str(m) for m in members]
    if not members:
        raise ZooError(f"soup {name!r}: no member to average")
    if len(set(members)) != len(members):
        raise ZooError(f"soup {name!r}: a member appears twice ({', '.join(members)})")
    weights = [1.0] * len(members) if weights is None else [float(w) for w in weights]
    if len(weights) != len(members) or any(not w >= 0 for w in weights) or not sum(weights):
        raise ZooError(
            f"soup {name!r}: need one weight >= 0 per member ({len(members)}), not all 0; "
            f"got {weights}"
        )
    entries = [_member(m) for m in members]
    first_path, first = entries[0]
    config = _adapter_config(first_path)
    for member, (path, member_card) in zip(members[1:], entries[1:]):
        if member_card["base_model"] != first["base_model"]:
            raise ZooError(
                f"soup: {member!r} was made for base {member_card['base_model']!r}, "
                f"{members[0]!r} for {first['base_model']!r}; a soup needs one base"
            )
        if _adapter_config(path) != config:
            raise ZooError(
                f"soup: {member!r} and {members[0]!r} have different adapter configurations "
                "(adapter_config.json); only adapters of one configuration average"
            )

    model = build_sentence_model(first["base_model"], device="cpu")
    transformer = transformer_of(model)
    loaded = []
    for index, (path, member_card) in enumerate(entries):
        check_base(transformer, path, member_card, first["base_model"])
        loaded.append(transformer.load_adapter(str(path), load_as=f"member{index}",
                                               use_safetensors=True))  # fmt: skip
    total = sum(weights)
    transformer.average_adapter(
        SOUP, loaded, weights=weights, combine_strategy="linear", normalize_weights=True
    )
    for adapter in loaded:
        transformer.delete_adapter(adapter)

    lengths = Counter(card_max_length(c) for _, c in entries)
    max_length = lengths.most_common(1)[0][0]
    forums = list(dict.fromkeys(f for _, c in entries for f in c.get("forums") or []))
    full = {
        "mode": SOUP,
        "encoder": "bi",
        "layout": "adapter",
        "base_model": first["base_model"],
        "base_config": first.get("base_config"),
        "forums": forums,
        "members": members,
        "weights": [w / total for w in weights],
        "max_length": max_length,
        **(card or {}),
    }
    transformer.set_active_adapters(SOUP)
    full[PROBE_FIELD] = probe_record(model)  # what loading checks the soup's adapter by
    if len(lengths) > 1:
        full["max_length_note"] = (
            f"members differ in max_length ({dict(lengths)}); the most common is used"
        )
    return save_entry(lambda folder: write_bi_adapter(model, SOUP, folder), name, full,
                      overwrite=overwrite)  # fmt: skip
