"""Exports kept per model, keyed by its weights' hash, under the zoo's folder.

``<zoo home>/.onnx/<key>/`` is the model's sentence-transformers ONNX folder
(:mod:`adapter_zoo.onnx.layout`) with its int8 file and ``adapter_zoo_onnx.json``: the key
and the SHA-256 of every file. The key hashes what the graph computes: every tensor of the
model (names, dtypes, shapes, bytes), its active adapters, its token limit, its kind, the
int8 settings and :data:`FORMAT`. A folder is written whole or not at all (temporary folder,
then rename) and is trusted only when its manifest is JSON naming this key and every file
matches its hash; anything else (a cut-short write, a changed or foreign graph) is rebuilt.
Nothing is unpickled, and loading reads only the folder.

Example:
    >>> folder = cached_folder(load("beer", precision="fp32"))  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import torch

from adapter_zoo.errors import ZooError
from adapter_zoo.onnx.graph import OPSET, encoder_kind
from adapter_zoo.onnx.layout import write_folder
from adapter_zoo.onnx.quantize import Int8Config, config_for, int8_file, quantize_graph
from adapter_zoo.zoo.store import zoo_home
from adapter_zoo.zoo.untrusted import is_relative_inside
from stackexchange.io import atomic_directory, atomic_write_json, output_lock, sha256_file
from stackexchange.jsontext import JSONTextError, loads_text

logger = logging.getLogger(__name__)

FORMAT = 1  # bumped when the export itself changes: older folders are rebuilt, not trusted
MANIFEST = "adapter_zoo_onnx.json"
CACHE_DIR = ".onnx"
LOCK_WAIT_S = 900.0  # another process exporting the same model: wait for it


def cache_root() -> Path:
    """``<zoo home>/.onnx`` (a hidden folder: never taken for an entry)."""
    return zoo_home() / CACHE_DIR


def weights_key(scorer, config: Int8Config | None = None, arch: str | None = None) -> str:
    """The SHA-256 naming ``scorer``'s export (see the module docstring).

    Example:
        >>> len(weights_key(load("beer", precision="fp32")))  # doctest: +SKIP
        64
    """
    config = config or config_for(arch)
    digest = hashlib.sha256()
    model = scorer.model
    active = getattr(getattr(model, "active_adapters", None), "__repr__", lambda: "")()
    inner = getattr(model, "_first_module", None)
    if inner is not None:  # a SentenceTransformer: the adapters live in its transformer
        active = repr(getattr(inner().auto_model, "active_adapters", None))
    head = getattr(model, "active_head", None)
    head = head() if callable(head) else head
    meta = {"format": FORMAT, "opset": OPSET, "kind": encoder_kind(scorer),
            "max_length": scorer.max_length, "active": active, "head": repr(head),
            "int8": config.as_dict(), "arch": int8_file(arch)}  # fmt: skip
    digest.update(json.dumps(meta, sort_keys=True).encode())
    for name, tensor in sorted(model.state_dict().items()):
        data = tensor.detach().cpu().contiguous()
        digest.update(f"{name}|{data.dtype}|{tuple(data.shape)}|".encode())
        digest.update(data.view(-1).view(dtype=torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def verify_folder(folder: Path, key: str) -> str | None:
    """Why ``folder`` is not the complete export ``key``; None when every file checks."""
    manifest = folder / MANIFEST
    try:
        # loads_text: a manifest nested a million deep is unusable JSON, not a RecursionError
        record = loads_text(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, JSONTextError) as error:
        return f"its manifest does not read ({error.__class__.__name__})"
    if not isinstance(record, dict) or record.get("key") != key:
        return "its manifest names another model"
    files = record.get("files")
    if not isinstance(files, dict) or not files:
        return "its manifest lists no files"
    for name, expected in files.items():
        path = folder / name
        if not is_relative_inside(name) or not path.is_file():  # never a file outside
            return f"{name} is missing"
        if sha256_file(path) != expected:
            return f"{name} does not match its hash"
    return None


def cached_folder(scorer, config: Int8Config | None = None, arch: str | None = None) -> Path:
    """``scorer``'s export folder in the cache, built on first use and rebuilt whenever it
    does not verify (:func:`verify_folder`).

    Args:
        scorer: a BiEncoder or Ranker in fp32 on the CPU.
        config: the int8 settings (default: :func:`~adapter_zoo.onnx.quantize.config_for`).
        arch: the int8 file's CPU name (default: this CPU's).

    Returns:
        The folder, holding ``onnx/model.onnx`` and the int8 file.
    """
    config = config or config_for(arch)
    key = weights_key(scorer, config, arch)
    folder = cache_root() / key
    reason = verify_folder(folder, key) if folder.exists() else "not built yet"
    if reason is None:
        return folder
    if folder.exists():
        logger.warning("the ONNX export %s is rebuilt: %s", folder, reason)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(folder, error=ZooError, wait=LOCK_WAIT_S):
        if folder.exists() and verify_folder(folder, key) is None:
            return folder  # another process built it while this one waited
        with atomic_directory(folder, overwrite=True) as tmp:
            build_folder(scorer, tmp, config, arch, key=key)
    return folder


def build_folder(scorer, folder: Path, config: Int8Config | None = None, arch: str | None = None,
                 *, key: str | None = None) -> dict:  # fmt: skip
    """Write ``scorer``'s export (fp32 graph, int8 file, manifest) into the empty ``folder``;
    returns the manifest."""
    config = config or config_for(arch)
    write_folder(scorer, folder)
    quantize_graph(folder / "onnx/model.onnx", folder / int8_file(arch), config)
    files = {
        str(p.relative_to(folder)): sha256_file(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    record = {"key": key or weights_key(scorer, config, arch), "int8": config.as_dict(),
              "int8_file": int8_file(arch), "files": files}  # fmt: skip
    atomic_write_json(folder / MANIFEST, record)
    return record


__all__ = [
    "MANIFEST",
    "build_folder",
    "cache_root",
    "cached_folder",
    "verify_folder",
    "weights_key",
]
