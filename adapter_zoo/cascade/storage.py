"""Saving and loading a cascade ranker as a zoo entry of kind ``cascade``.

Layout (CONTRIBUTING's zoo entry plus the cascade's own files)::

    card.json            kind "cascade", base_model, cascade (the CascadeConfig), files, ...
    README.md
    exits.safetensors    the exit classifiers
    encoder/             full fine-tuning: the encoder (save_pretrained) and tokenizer
    adapter/             adapter variant: the adapters library's adapter folder
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

from adapter_zoo.errors import ZooError

CARD_VERSION = 1


def _zoo_home() -> Path:
    from adapter_zoo.zoo import zoo_home

    return zoo_home()


def entry_path(name_or_path) -> Path:
    """A short name lives in the zoo folder; anything with a separator is a path.

    Raises:
        ZooError: ``.`` or ``..``, which are neither a name in the zoo nor meant as a path.
    """
    from adapter_zoo.zoo.store import local_entry

    text = str(name_or_path)
    local_entry(text)  # refuses "." and "..": names resolve inside the zoo home only
    if os.sep in text or "/" in text or text.startswith("."):
        return Path(text)
    return _zoo_home() / text


def _write_files(ranker, folder: Path) -> None:
    from safetensors.torch import save_file

    state = {k: v.detach().cpu().contiguous() for k, v in ranker.heads.state_dict().items()}
    save_file(state, str(folder / "exits.safetensors"))
    if ranker.config.adapter:
        from adapter_zoo.cascade.model import ADAPTER_NAME

        # safetensors: the layer count load_cascade checks against the base is in its keys
        ranker.encoder.save_adapter(str(folder / "adapter"), ADAPTER_NAME, use_safetensors=True)
    else:
        ranker.encoder.save_pretrained(folder / "encoder", safe_serialization=True)
        ranker.tokenizer.save_pretrained(folder / "encoder")


def _readme(card: dict) -> str:
    from adapter_zoo.zoo.cards import attribution, front_matter, licence_metadata

    cascade = card["cascade"]
    licence = licence_metadata(card)
    header = "\n".join(front_matter(**licence, tags=["adapter-zoo"]) + [""]) if licence else ""
    credit = attribution(card)
    return (
        f"{header}# {card['name']} (cascade ranker)\n\n"
        f"Base model: `{card['base_model']}`; exits at layers {cascade['exits']}; "
        f"default drop ratio alpha = {cascade['alpha']}; "
        f"{'adapter ' + cascade['adapter'] if cascade['adapter'] else 'full fine-tuning'}.\n\n"
        + (f"{credit}\n\n" if credit else "")
        + f"Load with `adapter_zoo.cascade.CascadeRanker.load({card['name']!r})`.\n"
    )


def save_cascade(
    ranker, name_or_path, *, card: dict | None = None, overwrite: bool = False
) -> Path:
    """Write ``ranker`` atomically as a zoo entry and return the entry folder."""
    from adapter_zoo.zoo.layouts import base_config
    from stackexchange.io import atomic_directory, atomic_write_json, atomic_write_text, sha256_file

    final = entry_path(name_or_path)
    full = {
        "name": final.name,
        "kind": "cascade",
        "base_model": ranker.base_model,
        "forums": [],
        "pairs": {},
        "training": {},
        "seed": None,
        "scores": {},
        **(ranker.card or {}),
        **(card or {}),
    }
    full.update(
        name=final.name,
        kind="cascade",
        base_config=base_config(ranker.encoder.config),  # checked at load with the adapter
        cascade=ranker.config.to_dict(),
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        version=CARD_VERSION,
    )
    # Not adapter_zoo.zoo.save_entry: that takes short names only, and a cascade is also
    # written to plain folders (tests, benchmarks); the layout and hashing are the same.
    with atomic_directory(final, overwrite=overwrite) as tmp:
        _write_files(ranker, tmp)
        atomic_write_text(tmp / "README.md", _readme(full))
        full["files"] = {
            str(p.relative_to(tmp)): sha256_file(p)
            for p in sorted(tmp.rglob("*"))
            if p.is_file() and p.name != "card.json"
        }
        atomic_write_json(tmp / "card.json", full)
    ranker.card = full
    return final


def verify_cascade(folder: Path) -> dict:
    """The card of a cascade entry after checking its files as every zoo entry's (plain
    relative paths inside the entry, each file's sha256, no file the card does not list)."""
    from adapter_zoo.zoo.store import verify_entry

    card = verify_entry(folder)
    if card.get("kind") != "cascade":
        raise ZooError(f"{folder / 'card.json'}: kind is {card.get('kind')!r}, not 'cascade'")
    return card


def load_cascade(name_or_path, *, device=None):
    """Load a cascade zoo entry written by ``save_cascade``."""
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    from adapter_zoo.cascade.config import CascadeConfig
    from adapter_zoo.cascade.model import ADAPTER_NAME, CascadeRanker, _resolve_base_model
    from adapter_zoo.zoo.layouts import check_base

    folder = entry_path(name_or_path)
    if not folder.is_dir():
        raise ZooError(f"{folder}: no such cascade entry")
    card = verify_cascade(folder)
    config = CascadeConfig.from_dict(card["cascade"])
    if config.adapter:
        import adapters

        base = _resolve_base_model(card["base_model"])
        encoder = AutoModel.from_pretrained(base, add_pooling_layer=False, trust_remote_code=False)
        tokenizer = AutoTokenizer.from_pretrained(base, trust_remote_code=False)
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
    ranker = CascadeRanker(encoder, tokenizer, config, base_model=card["base_model"], device=device)
    ranker.heads.load_state_dict(load_file(str(folder / "exits.safetensors")))
    ranker.card = card
    return ranker.to(ranker.device).eval()
