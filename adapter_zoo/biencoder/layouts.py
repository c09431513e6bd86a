"""How a bi-encoder entry is stored (card ``encoder: "bi"``), and read back.

- ``adapter``: the adapters library's ``save_adapter`` files (no head: the score is a cosine)
  at the top of the entry, so plain ``adapters`` loads it into the base's transformer.
- ``full``: ``model/`` is a complete sentence-transformers model folder.
- ``fusion``: one sub-folder per fused adapter and ``fusion/`` (``save_adapter_fusion``).
"""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.biencoder.encoder import BiEncoder, build_sentence_model, transformer_of
from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.layouts import check_base
from adapter_zoo.zoo.untrusted import check_sentence_modules


def write_bi_adapter(model, adapter_name: str, folder: Path) -> None:
    transformer_of(model).save_adapter(
        str(folder), adapter_name, with_head=False, use_safetensors=True
    )


def write_bi_full(model, folder: Path) -> None:
    model.save(str(folder / "model"), safe_serialization=True)


def write_bi_fusion(model, adapter_names: list[str], folder: Path) -> None:
    # adapters on first use: the CLI starts without it
    from adapters.composition import Fuse

    transformer = transformer_of(model)
    for name in adapter_names:
        transformer.save_adapter(str(folder / name), name, with_head=False, use_safetensors=True)
    transformer.save_adapter_fusion(
        str(folder / "fusion"), Fuse(*adapter_names), use_safetensors=True
    )


def read_bi_encoder(
    path: Path, card: dict, layout: str, *, max_length: int, device=None
) -> BiEncoder:
    """The BiEncoder of a verified bi-encoder entry stored in ``layout``, its adapters
    active, scoring at ``max_length`` (its kind, :mod:`adapter_zoo.kinds.bi`, reads both)."""
    if layout == "full":
        # sentence-transformers on first use: the CLI starts without it
        from sentence_transformers import SentenceTransformer

        check_sentence_modules(path / "model")  # it would import a module file of the entry
        model = SentenceTransformer(str(path / "model"), device="cpu", trust_remote_code=False)
        return BiEncoder(
            model, base_model=card["base_model"], card=card, max_length=max_length, device=device
        )

    model = build_sentence_model(card["base_model"], device="cpu")
    transformer = transformer_of(model)
    adapter_folders = [path] if layout == "adapter" else [path / n for n in card["adapters"]]
    for folder in adapter_folders:
        check_base(transformer, folder, card, card["base_model"])
    try:
        if layout == "adapter":
            name = transformer.load_adapter(str(path), use_safetensors=True)
            transformer.set_active_adapters(name)
        elif layout == "fusion":
            # adapters on first use: the CLI starts without it
            from adapters.composition import Fuse

            names = list(card["adapters"])
            for name in names:
                transformer.load_adapter(str(path / name), use_safetensors=True)
            transformer.load_adapter_fusion(str(path / "fusion"), use_safetensors=True)
            transformer.set_active_adapters(Fuse(*names))
        else:
            raise ZooError(f"{path}: unknown bi-encoder layout {layout!r} in the card")
    except RuntimeError as error:  # size mismatches: weights made for another encoder
        raise ZooError(
            f"{path}: zoo entry {card['name']!r} does not fit base model "
            f"{card['base_model']!r} ({str(error).splitlines()[0][:200]})"
        ) from None
    return BiEncoder(
        model, base_model=card["base_model"], card=card, max_length=max_length, device=device
    )
