"""``adapter-zoo export``: a ``full`` cross-encoder entry as a sentence-transformers CrossEncoder.

A full entry on a BERT base with the CLS classification head (two layers with tanh: BERT's
pooler and a linear classifier) maps one-to-one onto ``BertForSequenceClassification``:
the head's first linear layer becomes the pooler, its last the classifier. The folder is
written by sentence-transformers itself (``CrossEncoder.save_pretrained``) with the identity
activation and the entry's ``max_length``, so ``CrossEncoder(folder).predict(pairs)`` gives
the Ranker's logits. Everything else is refused with the reason: adapters (an adapter,
fusion or multitask entry), bi-encoders (the reason says how to open one in
sentence-transformers), composites, cascades, and heads a CrossEncoder has no equivalent for
(the pair-cosine head of sentence-encoder bases).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from adapter_zoo.biencoder.encoder import build_sentence_model, transformer_of
from adapter_zoo.errors import ZooError
from adapter_zoo.hub.model_card import hub_base_model
from adapter_zoo.loading import resolve_entry
from adapter_zoo.ranker.model import add_ranking_head, build_model
from adapter_zoo.registry import kind_for_card, kind_for_name
from adapter_zoo.zoo.cards import attribution, dev_scores_section, front_matter
from adapter_zoo.zoo.cards import licence_metadata as licence
from adapter_zoo.zoo.layouts import ADAPTER_CONFIG_FILE, adapter_method
from adapter_zoo.zoo.store import README_FILE, verify_entry
from stackexchange.io import atomic_directory, atomic_write_json, output_lock
from stackexchange.paths import check_output_folder, refuse_output_inside_input

EXPORT_FILE = "adapter_zoo_export.json"  # what was exported; marks the folder as ours
EXPORTABLE_TYPES = ("bert",)
# Checked after writing: the folder must reproduce the Ranker on these before it is kept.
PROBE_PAIRS = [
    ("which glass for a stout", "a nonic pint, or a tulip for an imperial stout"),
    ("why is my beer flat", "the yeast was dead, so nothing carbonated it in the bottle"),
    ("what are hops", "flowers"),
]
PROBE_TOLERANCE = 1e-5


def card_refusal(card: dict, path: Path | None = None) -> str | None:
    """Why the entry of ``card`` (at ``path``) cannot be a CrossEncoder, as its kind says
    (:mod:`adapter_zoo.kinds`); None if it may. A bi-encoder's reason says how to open it in
    sentence-transformers."""

    return kind_for_card(card).export_refusal(card, path)


def model_refusal(model, head: str) -> str | None:
    """Why ``model`` with head ``head`` cannot be a CrossEncoder; None when it can."""
    model_type = model.config.model_type
    if model_type not in EXPORTABLE_TYPES:
        return f"its base is a {model_type!r} model; only BERT's pooler + classifier maps over"
    if model.adapters_config.adapters:
        return f"it holds adapters ({', '.join(model.adapters_config.adapters)})"
    if head not in model.heads:
        return f"it has no head {head!r}"
    config = dict(model.heads[head].config)
    head_type = config.get("head_type")
    if head_type == "pair_cosine":
        return (
            "its pair_cosine head (a scaled cosine of the two texts' mean token states) has "
            "no CrossEncoder equivalent"
        )
    if head_type != "classification":
        return f"its {head_type} head has no CrossEncoder equivalent"
    shape = (config.get("num_labels"), config.get("layers"), config.get("activation_function"))
    if shape != (1, 2, "tanh") or config.get("use_pooler") or not config.get("bias", True):
        return (
            f"its classification head ({shape[0]} labels, {shape[1]} layers, {shape[2]}) is "
            "not BERT's pooler + one-logit classifier"
        )
    return None


def write_cross_encoder(model, tokenizer, head: str, folder: Path, *, max_length: int) -> None:
    """Write ``model`` (an adapters BERT model) with its head ``head`` into ``folder`` as a
    sentence-transformers CrossEncoder (one logit, identity activation, ``max_length``).

    Raises:
        ZooError: the model or head does not map onto a CrossEncoder (see :func:`model_refusal`).
    """
    # sentence-transformers, torch, transformers on first use: the CLI starts without them
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder
    from transformers import BertConfig, BertForSequenceClassification

    reason = model_refusal(model, head)
    if reason:
        raise ZooError(f"cannot export as a CrossEncoder: {reason}")
    target = BertForSequenceClassification(
        BertConfig(**{**model.config.to_dict(), "num_labels": 1})
    )
    ours = model.state_dict()
    wanted = set(target.state_dict())  # adapters adds e.g. prompt_tuning's embedding alias
    state = {key: value for key, value in ours.items() if key in wanted}
    for source, destination in (("1", "bert.pooler.dense"), ("4", "classifier")):
        for part in ("weight", "bias"):
            state[f"{destination}.{part}"] = ours[f"heads.{head}.{source}.{part}"]
    missing, unexpected = target.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ZooError(f"cannot export as a CrossEncoder: weights {(missing + unexpected)[:3]}")
    with tempfile.TemporaryDirectory(prefix="adapter-zoo-export-") as scratch:
        target.save_pretrained(scratch, safe_serialization=True)
        tokenizer.save_pretrained(scratch)
        cross_encoder = CrossEncoder(
            scratch,
            num_labels=1,
            max_length=max_length,
            activation_fn=torch.nn.Identity(),
            device="cpu",
            trust_remote_code=False,
            local_files_only=True,
        )
        cross_encoder.save_pretrained(str(folder), create_model_card=False)


def export_cross_encoder(
    name_or_path: str | os.PathLike, out: str | os.PathLike, *, overwrite: bool = False
) -> Path:
    """Write the ``full`` cross-encoder entry ``name_or_path`` as a CrossEncoder folder ``out``.

    The folder appears complete or not at all (written through ``atomic_directory``) and only
    after it reproduced the entry's scores on a few probe pairs. It holds a model card
    (licence and attribution as the entry's) and ``adapter_zoo_export.json`` (the entry).

    Args:
        name_or_path: a zoo name, an entry folder or a Hub name (as :func:`adapter_zoo.load`).
        out: the folder to write; an existing one is replaced only when it is an earlier
            export or empty, or with ``overwrite``.
        overwrite: replace whatever ``out`` holds.

    Returns:
        ``out``.

    Raises:
        ZooError: the entry cannot be a CrossEncoder; the message names it and says why.

    Example:
        >>> export_cross_encoder("beer-full", "beer-ce")  # doctest: +SKIP
        >>> from sentence_transformers import CrossEncoder
        >>> CrossEncoder("beer-ce").predict([("a question", "an answer")])  # doctest: +SKIP
    """

    name = str(name_or_path)
    card, path = _exportable_entry(name)
    out = _writable_output(path, out, overwrite, "a CrossEncoder export")
    # looked up per call: tests monkeypatch loading.load
    from adapter_zoo.loading import load

    ranker = load(str(path), device="cpu", precision="fp32")
    head = ranker.model.active_head
    reason = model_refusal(ranker.model, head)
    if reason:
        raise ZooError(f"cannot export {name!r} as a CrossEncoder: {reason}")
    with output_lock(out, error=ZooError), atomic_directory(out, overwrite=True) as tmp:
        write_cross_encoder(ranker.model, ranker.tokenizer, head, tmp, max_length=ranker.max_length)
        _check_reproduces(ranker.score(PROBE_PAIRS), tmp, f"{name!r} as a CrossEncoder")
        (tmp / README_FILE).write_text(_readme(card, name), encoding="utf-8")
        atomic_write_json(tmp / EXPORT_FILE, {"entry": card["name"], "source": str(path)})
    return out


def _writable_output(entry: Path, out, overwrite: bool, what: str) -> Path:
    """``out`` as a Path, checked before the entry loads (``check_output_folder``: its name,
    the entry inside it, what an export did not write, its parent's writability) and refused
    inside the entry, which writing would change."""

    out = check_output_folder(
        out, what=what, ours=lambda f: (f / EXPORT_FILE).is_file(), overwrite=overwrite,
        inputs=[entry], error=ZooError,
    )  # fmt: skip
    refuse_output_inside_input([entry], out, ZooError)
    return out


def _exportable_entry(name: str) -> tuple[dict, Path]:
    """The verified card and folder of ``name``, refused before anything is written."""

    named = kind_for_name(name)
    if named is not None:
        reason = named.export_refusal({}, None)
        raise ZooError(f"cannot export {name!r} as a CrossEncoder: {reason}")
    path = resolve_entry(name)
    card = verify_entry(path)
    reason = card_refusal(card, path)
    if reason:
        raise ZooError(f"cannot export {name!r} as a CrossEncoder: {reason}")
    return card, path


def _check_reproduces(reference, folder: Path, what: str, *, bi: bool = False) -> None:
    """Refuse the export in ``folder`` unless it scores PROBE_PAIRS as ``reference`` (the
    entry's scores) within PROBE_TOLERANCE: cosines of a SentenceTransformer with ``bi``,
    else a CrossEncoder's logits."""

    if bi:
        # sentence-transformers on first use: the CLI starts without it
        from sentence_transformers import SentenceTransformer

        exported = SentenceTransformer(str(folder), device="cpu", trust_remote_code=False)
        queries = exported.encode([q for q, _ in PROBE_PAIRS], normalize_embeddings=True)
        answers = exported.encode([c for _, c in PROBE_PAIRS], normalize_embeddings=True)
        theirs = np.einsum("ij,ij->i", queries, answers)
    else:
        # sentence-transformers on first use: the CLI starts without it
        from sentence_transformers.cross_encoder import CrossEncoder

        exported = CrossEncoder(str(folder), device="cpu", trust_remote_code=False)
        theirs = exported.predict(PROBE_PAIRS, show_progress_bar=False)
    difference = float(np.max(np.abs(np.asarray(reference) - theirs)))
    if not difference <= PROBE_TOLERANCE:
        raise ZooError(
            f"cannot export {what}: the export scores differ from the entry's by {difference:.2e}"
        )


def _readme(card: dict, name: str, *, lora: bool = False, bi: bool = False) -> str:
    """The export's model card: a CrossEncoder, or with ``bi`` a SentenceTransformer; ``lora``
    says the entry's LoRA adapter was merged into its base."""

    kind = ["sentence-similarity", "lora"] if bi else ["cross-encoder", "text-ranking"]
    lines = front_matter(
        library_name="sentence-transformers",
        base_model=hub_base_model(card["base_model"]),
        tags=["sentence-transformers", *kind, "adapter-zoo"],
        pipeline_tag=kind[0] if bi else "text-ranking",
        **licence(card),
    )
    credit = attribution(card)
    what = f"LoRA entry `{name}`, merged into its base," if lora else f"entry `{name}`"
    cls = "SentenceTransformer" if bi else "CrossEncoder"
    lines += [f"# {card['name']}", "", f"The adapter-zoo {what} as a {cls}.", ""]
    lines += [credit, ""] if credit else []
    lines += ["```python", f"from sentence_transformers import {cls}", "",
              f'model = {cls}("path/to/this/folder")']  # fmt: skip
    if bi:
        lines += [
            'query = model.encode("your question")',
            'model.similarity(query, model.encode(["answer 1", "answer 2"]))',
            "```", "", "The cosines are the entry's scores (`BiEncoder.score`).", "",
        ]  # fmt: skip
    else:
        lines += [
            'model.predict([("your question", "candidate 1"), ("your question", "candidate 2")])',
            "```", "", "The scores are the entry's logits (identity activation), as "
            "`Ranker.score` gives.", "",
        ]  # fmt: skip
    return "\n".join(lines + dev_scores_section(card))


# --- LoRA entries, merged into their base (export_merged_lora) ---------------------------
# Merging adds scale * B @ A into each LoRA'd weight once, so the export computes W' x where
# the entry computes W x + scale * B (A x): the same function, summed in another float order.
# PROBE_TOLERANCE bounds that rounding on cosines and logits, float32's rounding over a
# layer's sums sitting far below it; more is a wrong export.
MERGED_TOLERANCE = PROBE_TOLERANCE


def merged_refusal(card: dict, path: Path) -> str | None:
    """Why the entry of ``card`` at ``path`` cannot be exported merged; None if it can."""

    kind = kind_for_card(card)
    if kind.layout != "adapter":
        return f"it is a {card.get('mode')} entry; only LoRA adapter entries merge into their base"
    if adapter_method(path) != "lora":
        return (
            "its adapter is a bottleneck (SeqBn) adapter, which adds modules to the base; "
            "only LoRA adapters merge into its weights"
        )
    return None


def lora_entry(name: str) -> str | None:
    """``bi`` or ``cross`` when ``name`` is a LoRA adapter entry (exported merged), else None."""

    if kind_for_name(name) is not None:
        return None
    path = resolve_entry(name)
    card = verify_entry(path)
    if not (path / ADAPTER_CONFIG_FILE).is_file():
        return None  # no adapter to merge: export_cross_encoder says what it is instead
    if merged_refusal(card, path):
        return None
    return kind_for_card(card).encoder


def export_merged_lora(
    name_or_path: str | os.PathLike, out: str | os.PathLike, *, overwrite: bool = False
) -> Path:
    """Write the LoRA adapter entry ``name_or_path`` merged into its base (the adapters
    library's ``merge_adapter``) as a folder that plain sentence-transformers opens: a
    ``SentenceTransformer`` for a bi-encoder entry, a ``CrossEncoder`` for a cross-encoder
    entry on a BERT base with the CLS head (through :func:`write_cross_encoder`).

    A cross-encoder on a sentence-encoder base (MiniLM) has the pair-cosine head: it reads
    the pair jointly and compares the two texts' mean token states, which neither a
    CrossEncoder (no such head) nor a SentenceTransformer (texts embedded apart) computes,
    so it is refused. Arguments, the folder's atomicity and its files are as
    :func:`export_cross_encoder`'s; it is kept only after it reproduced the entry's scores
    within ``MERGED_TOLERANCE`` on a few probe pairs.

    Raises:
        ZooError: the entry is not a LoRA adapter entry, or has the pair-cosine head.

    Example:
        >>> export_merged_lora("beer-lora", "beer-st")  # doctest: +SKIP
        >>> from sentence_transformers import SentenceTransformer
        >>> SentenceTransformer("beer-st").encode(["Is a porter a stout?"])  # doctest: +SKIP
    """

    name = str(name_or_path)
    path = resolve_entry(name)
    card = verify_entry(path)
    reason = merged_refusal(card, path)
    if reason:
        raise ZooError(f"cannot export {name!r} merged: {reason}")
    out = _writable_output(path, out, overwrite, "an adapter-zoo export")
    # looked up per call: tests monkeypatch loading.load
    from adapter_zoo.loading import load

    model = load(str(path), device="cpu", precision="fp32")
    bi = kind_for_card(card).encoder == "bi"
    reference = model.score(PROBE_PAIRS)  # the entry as it runs, before merging
    with output_lock(out, error=ZooError), atomic_directory(out, overwrite=True) as tmp:
        if bi:
            _write_merged_sentence_transformer(model, card, tmp)
        else:
            _write_merged_cross_encoder(model, card, tmp, name)
        _check_reproduces(reference, tmp, f"{name!r} merged", bi=bi)
        (tmp / README_FILE).write_text(_readme(card, name, lora=True, bi=bi), encoding="utf-8")
        atomic_write_json(tmp / EXPORT_FILE, {"entry": card["name"], "source": str(path),
                                              "merged": "lora"})  # fmt: skip
    return out


def _merge_into(source, target, adapter: str) -> None:
    """Merge LoRA ``adapter`` of ``source`` and copy every weight ``target`` has into it.

    The adapters library cannot delete a merged LoRA module, so the merged weights move
    into a model built without adapters."""
    source.merge_adapter(adapter)
    ours = source.state_dict()
    wanted = target.state_dict()
    missing = [key for key in wanted if key not in ours or ours[key].shape != wanted[key].shape]
    if missing:
        raise ZooError(f"cannot export merged: the base lacks weights {missing[:3]}")
    target.load_state_dict({key: ours[key] for key in wanted}, strict=True)


def _single_adapter(model) -> str:
    names = list(model.adapters_config.adapters)
    if len(names) != 1:
        raise ZooError(f"cannot export merged: expected one LoRA adapter, found {names}")
    return names[0]


def _write_merged_sentence_transformer(encoder, card: dict, folder: Path) -> None:
    transformer = transformer_of(encoder.model)
    plain = build_sentence_model(card["base_model"], with_adapters=False, device="cpu")
    _merge_into(transformer, transformer_of(plain), _single_adapter(transformer))
    plain.max_seq_length = encoder.max_length  # the length the entry chose on dev
    plain.save(str(folder), safe_serialization=True, create_model_card=False)


def _write_merged_cross_encoder(ranker, card: dict, folder: Path, name: str) -> None:
    head = ranker.model.active_head
    head_type = dict(ranker.model.heads[head].config).get("head_type")
    if head_type != "classification":
        raise ZooError(
            f"cannot export {name!r} merged: its {head_type} head reads the pair jointly and "
            "compares the two texts' mean token states; a CrossEncoder has no such head and "
            "a SentenceTransformer embeds the texts apart, so load it with adapter_zoo.load"
        )
    plain, tokenizer = build_model(card["base_model"])
    add_ranking_head(plain, head)
    _merge_into(ranker.model, plain, _single_adapter(ranker.model))
    write_cross_encoder(plain, tokenizer, head, folder, max_length=ranker.max_length)


# --- any bi- or cross-encoder entry as an ONNX folder (export_onnx) ----------------------
ONNX_TOLERANCE = 1e-4  # the fp32 graph against PyTorch: another kernel order, same function
FP32_FILE = "onnx/model.onnx"  # adapter_zoo.onnx.layout's (not imported here: it loads torch)


def export_onnx(
    name_or_path: str | os.PathLike, out: str | os.PathLike, *, overwrite: bool = False
) -> Path:
    """Write the bi- or cross-encoder entry ``name_or_path`` (adapter, LoRA, full; its head
    too) as a folder in sentence-transformers' ONNX layout: ``onnx/model.onnx`` (fp32) and
    ``onnx/model_qint8_<arch>.onnx`` (int8 for this CPU, :mod:`adapter_zoo.onnx.quantize`),
    opened without adapter-zoo by ``SentenceTransformer(out, backend="onnx", model_kwargs=
    {"file_name": ...})`` or ``CrossEncoder(...)`` the same way.

    The folder appears complete or not at all, and only after the fp32 graph, opened by
    plain sentence-transformers, reproduced the entry's scores within ``ONNX_TOLERANCE`` on
    a few probe pairs. Its model card says which file is which.

    Raises:
        ZooError: not a bi- or cross-encoder entry; the message names it and says why.

    Example:
        >>> export_onnx("beer", "beer-onnx")  # doctest: +SKIP
        >>> from sentence_transformers import SentenceTransformer
        >>> SentenceTransformer("beer-onnx", backend="onnx",
        ...     model_kwargs={"file_name": "onnx/model_qint8_avx2.onnx"})  # doctest: +SKIP
    """
    # heavy: adapter_zoo.onnx loads torch, onnx, onnxruntime when imported
    from adapter_zoo.onnx.cache import build_folder
    from adapter_zoo.onnx.graph import BI, encoder_kind
    from adapter_zoo.onnx.scorer import onnx_refusal

    name = str(name_or_path)
    named = kind_for_name(name)
    if named is not None:
        raise ZooError(f"cannot export {name!r} as ONNX: it is a {named.summary}, not an entry")
    path = resolve_entry(name)
    card = verify_entry(path)
    out = _writable_output(path, out, overwrite, "an ONNX export")
    # looked up per call: tests monkeypatch loading.load
    from adapter_zoo.loading import load

    model = load(str(path), device="cpu", precision="fp32")
    reason = onnx_refusal(model)
    if reason:
        raise ZooError(f"cannot export {name!r} as ONNX: it {reason}")
    bi = encoder_kind(model) == BI
    with output_lock(out, error=ZooError), atomic_directory(out, overwrite=True) as tmp:
        record = build_folder(model, tmp)
        _check_onnx_reproduces(model.score(PROBE_PAIRS), tmp, name, bi=bi)
        (tmp / README_FILE).write_text(_onnx_readme(card, name, record, bi), encoding="utf-8")
        atomic_write_json(tmp / EXPORT_FILE, {"entry": card["name"], "source": str(path),
                                              "format": "onnx"})  # fmt: skip
    return out


def _check_onnx_reproduces(reference, folder: Path, name: str, *, bi: bool) -> None:
    # sentence-transformers on first use: the CLI starts without it
    from sentence_transformers import CrossEncoder, SentenceTransformer

    kwargs = {"backend": "onnx", "device": "cpu", "local_files_only": True,
              "model_kwargs": {"file_name": FP32_FILE}}  # fmt: skip
    if bi:
        exported = SentenceTransformer(str(folder), **kwargs)
        queries = exported.encode([q for q, _ in PROBE_PAIRS], normalize_embeddings=True)
        answers = exported.encode([c for _, c in PROBE_PAIRS], normalize_embeddings=True)
        theirs = np.einsum("ij,ij->i", queries, answers)
    else:
        theirs = CrossEncoder(str(folder), **kwargs).predict(PROBE_PAIRS, show_progress_bar=False)
    difference = float(np.max(np.abs(np.asarray(reference) - theirs)))
    if not difference <= ONNX_TOLERANCE:
        raise ZooError(
            f"cannot export {name!r} as ONNX: its scores differ from the entry's by "
            f"{difference:.2e}"
        )


def _onnx_readme(card: dict, name: str, record: dict, bi: bool) -> str:
    cls = "SentenceTransformer" if bi else "CrossEncoder"
    tags = ["sentence-similarity"] if bi else ["cross-encoder", "text-ranking"]
    lines = front_matter(
        library_name="sentence-transformers",
        base_model=hub_base_model(card["base_model"]),
        tags=["sentence-transformers", *tags, "onnx", "adapter-zoo"],
        pipeline_tag="sentence-similarity" if bi else "text-ranking",
        **licence(card),
    )
    credit = attribution(card)
    int8 = record["int8_file"]
    settings = record["int8"]
    lines += [f"# {card['name']} (ONNX)", "",
              f"The adapter-zoo entry `{name}` (its base with its adapter"
              + ("" if bi else " and head") + f") as a {cls} for sentence-transformers' ONNX "
              "backend.", ""]  # fmt: skip
    lines += [credit, ""] if credit else []
    lines += [
        "| file | what it is |", "|---|---|",
        f"| `{FP32_FILE}` | fp32: the entry's scores to 1e-4 |",
        f"| `{int8}` | int8 weights (dynamic quantization, per-channel "
        f"{settings['per_channel']}, reduce_range {settings['reduce_range']}; the "
        "feed-forward down-projections" * settings["ffn_output_fp32"] + f" and the last "
        f"{settings['keep_last_fp32']} layer(s) in fp32): faster on CPUs, not bit-faithful |",
        "",
        "```python",
        f"from sentence_transformers import {cls}",
        "",
        f'model = {cls}("path/to/this/folder", backend="onnx",',
        f'    model_kwargs={{"file_name": "{int8}"}})',
    ]  # fmt: skip
    if bi:
        lines += ['model.similarity(model.encode("your question"), model.encode(["an answer"]))']
    else:
        lines += ['model.predict([("your question", "candidate 1")])']
    lines += ["```", "", "The scores are the entry's "
              + ("cosines." if bi else "logits (identity activation)."), ""]  # fmt: skip
    return "\n".join(lines + dev_scores_section(card))


__all__ = [
    "card_refusal",
    "export_cross_encoder",
    "export_merged_lora",
    "export_onnx",
    "lora_entry",
    "merged_refusal",
    "model_refusal",
    "write_cross_encoder",
]
