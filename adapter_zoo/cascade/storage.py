"""Saving and loading a cascade ranker as a zoo entry of kind ``cascade``, written and
verified as every other entry (``adapter_zoo.zoo.store``: the README is the card's, unhashed,
so a push may replace it with the Hub card).

Layout (CONTRIBUTING's zoo entry plus the cascade's own files)::

    card.json            mode "cascade", base_model, cascade (the CascadeConfig), files, ...
    README.md
    exits.safetensors    the exit classifiers
    encoder/             full fine-tuning: the encoder (save_pretrained) and tokenizer
    adapter/             adapter variant: the adapters library's adapter folder
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from adapter_zoo.cascade.config import ADAPTER_NAME, CascadeConfig
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.model import quiet_adapter_activation, resolve_base_model
from adapter_zoo.ranker.probe import PROBE_FIELD, check_pair_probe, pair_probe_record
from adapter_zoo.registry import kind_for_card
from adapter_zoo.zoo.layouts import base_config, check_base
from adapter_zoo.zoo.store import (
    CARD_FILE,
    entry_folder,
    entry_location,
    read_card,
    save_entry,
    verify_entry,
)

if TYPE_CHECKING:
    from adapter_zoo.cascade.model import CascadeRanker


class CascadeParts(NamedTuple):
    """What a cascade entry holds, read and checked, for ``CascadeRanker`` to be built from."""

    encoder: Any
    tokenizer: Any
    config: CascadeConfig
    card: dict
    exits: dict  # the exit classifiers' state dict


def _write_files(ranker: CascadeRanker, folder: Path) -> None:
    # safetensors.torch on first use: importing this module stays light
    from safetensors.torch import save_file

    state = {k: v.detach().cpu().contiguous() for k, v in ranker.heads.state_dict().items()}
    save_file(state, str(folder / "exits.safetensors"))
    if ranker.config.adapter:
        # safetensors: the layer count load_cascade checks against the base is in its keys
        ranker.encoder.save_adapter(str(folder / "adapter"), ADAPTER_NAME, use_safetensors=True)
    else:
        ranker.encoder.save_pretrained(folder / "encoder", safe_serialization=True)
        ranker.tokenizer.save_pretrained(folder / "encoder")


def save_cascade(
    ranker: CascadeRanker,
    name_or_path: str | Path,
    *,
    card: dict | None = None,
    overwrite: bool = False,
) -> Path:
    """Write ``ranker`` atomically as a zoo entry (through the zoo's one entry writer,
    ``adapter_zoo.zoo.save_entry``) and return the entry folder."""

    entry_folder(name_or_path)  # the name is checked before anything is read of the ranker
    fields = {
        "base_model": ranker.base_model,
        "forums": [],
        "pairs": {},
        "training": {},
        "seed": None,
        "scores": {},
        **(ranker.card or {}),
        **(card or {}),
        "mode": "cascade",
        "cascade": ranker.config.to_dict(),
        "base_config": base_config(ranker.encoder.config),  # checked at load with the adapter
    }
    for stale in ("name", "files", "created", "version", PROBE_FIELD):  # save_entry's, and below
        fields.pop(stale, None)
    if ranker.config.adapter:  # what loading checks the cascade's adapter by
        fields[PROBE_FIELD] = pair_probe_record(ranker.encoder, ranker.tokenizer)
    final = save_entry(
        lambda folder: _write_files(ranker, folder), name_or_path, fields, overwrite=overwrite
    )
    ranker.card = read_card(final)
    return final


def verify_cascade(folder: Path) -> dict:
    """The card of a cascade entry after checking every listed file (``verify_entry``)."""

    card = verify_entry(folder)
    if kind_for_card(card).name != "cascade":
        raise ZooError(f"{folder / CARD_FILE}: mode is {card.get('mode')!r}, not 'cascade'")
    return card


def read_cascade(name_or_path: str | Path) -> CascadeParts:
    """The encoder, tokenizer, config, card and exit weights of a cascade zoo entry written
    by ``save_cascade``, every file checked first (``adapter_zoo.cascade.load_cascade`` builds
    the ranker from them)."""
    # transformers, safetensors.torch on first use: importing this module stays light
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    folder = entry_location(name_or_path)
    if not folder.is_dir():
        raise ZooError(f"{folder}: no such cascade entry")
    card = verify_cascade(folder)
    config = CascadeConfig.from_dict(card["cascade"])
    if config.adapter:
        # adapters on first use: importing this module stays light
        import adapters

        base = resolve_base_model(card["base_model"])
        encoder = AutoModel.from_pretrained(base, add_pooling_layer=False, trust_remote_code=False)
        tokenizer = AutoTokenizer.from_pretrained(base, trust_remote_code=False)
        quiet_adapter_activation()
        adapters.init(encoder)
        check_base(encoder, folder / "adapter", card, card["base_model"])
        # use_safetensors reads entries saved before it too (pytorch_adapter.bin, weights_only)
        encoder.load_adapter(
            str(folder / "adapter"), load_as=ADAPTER_NAME, set_active=True, use_safetensors=True
        )
    else:
        encoder = AutoModel.from_pretrained(
            folder / "encoder", add_pooling_layer=False, trust_remote_code=False
        )
        tokenizer = AutoTokenizer.from_pretrained(folder / "encoder", trust_remote_code=False)
    if config.adapter:  # its adapter acts as when saved, or it is refused
        check_pair_probe(encoder.eval(), tokenizer, card, folder)
    return CascadeParts(
        encoder, tokenizer, config, card, load_file(str(folder / "exits.safetensors"))
    )
