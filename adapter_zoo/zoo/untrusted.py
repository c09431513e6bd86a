"""A zoo entry is untrusted input: what it may make a loader read or run is checked here.

The card's hashes come with the entry, so they prove nothing about intent. Three ways an
entry could reach beyond its weights are closed before any loader sees it:

- code: sentence-transformers imports the module file a ``modules.json`` names from a local
  folder even with ``trust_remote_code=False``, and transformers builds the classes an
  ``auto_map`` names; so only the sentence-transformers module classes listed in
  :data:`KNOWN_MODULES` are accepted, and no config may carry an ``auto_map``;
- symlinks: a link in an entry would make verification and ``push`` read a file outside it;
- paths in the card: every folder a card names must be a plain relative path inside the entry.

Example:
    >>> check_relative_name("beer", "adapters", "card.json")
    'beer'
    >>> check_relative_name("../../etc", "adapters", "card.json")
    Traceback (most recent call last):
    ...
    adapter_zoo.zoo.untrusted.UnsafeEntryError: card.json: adapters names '../../etc', not a relative path inside the entry; refused
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from adapter_zoo.errors import ZooError
from stackexchange.errors import AdapterZooError
from stackexchange.io import atomic_write_json
from stackexchange.jsontext import read_json_file

# sentence-transformers' own module classes an entry may name in modules.json (by class name;
# Router/Asym are left out: their configs name further classes).
KNOWN_MODULES = (
    "Transformer",
    "Pooling",
    "Normalize",
    "Dense",
    "Dropout",
    "LayerNorm",
    "WeightedLayerPooling",
)
# Files transformers reads an ``auto_map`` (classes to import from the folder) from.
CODE_MAPPING_FILES = {
    "config.json",
    "tokenizer_config.json",
    "processor_config.json",
    "preprocessor_config.json",
    "feature_extractor_config.json",
    "image_processor_config.json",
}
MODULES_FILE = "modules.json"


class UnsafeEntryError(ZooError):
    """An entry asks to run code, holds a symlink or names a path outside itself: refused as
    it is (a fresh download would be the same), unlike a corrupted file."""


def is_relative_inside(relative) -> bool:
    """Whether ``relative`` is a plain relative POSIX path (no ``..``, not absolute).

    Example:
        >>> is_relative_inside("fusion/adapter.safetensors"), is_relative_inside("../x")
        (True, False)
    """
    if not isinstance(relative, str) or not relative or "\\" in relative or "\0" in relative:
        return False
    path = PurePosixPath(relative)
    return (
        not path.is_absolute()
        and path.as_posix() == relative
        and not any(part in ("", ".", "..") for part in path.parts)
        and not PureWindowsPath(relative).drive
    )


def check_relative_name(relative, field: str, where) -> str:
    """``relative`` when it is a relative path inside the entry, else a one-line ZooError."""
    if not is_relative_inside(relative):
        raise UnsafeEntryError(
            f"{where}: {field} names {relative!r}, not a relative path inside the entry; refused"
        )
    return relative


def _known_module_class(ref) -> bool:
    if not isinstance(ref, str) or not ref.startswith("sentence_transformers."):
        return False
    name = ref.rsplit(".", 1)[-1]
    if name not in KNOWN_MODULES:
        return False
    # sentence-transformers on first use: the CLI starts without it
    from sentence_transformers import models
    from sentence_transformers.util import import_from_string

    try:  # inside the installed package only: the entry's folder is never on the path
        return import_from_string(ref) is getattr(models, name)
    except ImportError:
        return False


def check_sentence_modules(model_dir: Path) -> None:
    """Refuse a sentence-transformers folder whose ``modules.json`` names any class but the
    library's own known modules, or a module folder outside ``model_dir``.

    Raises:
        ZooError: naming the file and the module.
    """
    file = Path(model_dir) / MODULES_FILE
    try:
        modules = read_json_file(file, ZooError)
    except FileNotFoundError:
        raise ZooError(f"{file}: missing; a full bi-encoder entry needs it") from None
    if not isinstance(modules, list):
        raise ZooError(f"{file}: expected a list of modules, got {type(modules).__name__}")
    for index, module in enumerate(modules):
        if not isinstance(module, dict):
            raise ZooError(f"{file}: module {index} is {module!r}, not an object")
        ref = module.get("type")
        if not _known_module_class(ref):
            raise UnsafeEntryError(
                f"{file}: module {index} ({module.get('name')!r}) is {ref!r}, not a "
                f"sentence-transformers module the zoo knows ({', '.join(KNOWN_MODULES)}); "
                "refused, nothing of it was run"
            )
        sub = module.get("path", "")
        if sub != "":
            check_relative_name(sub, f"module {index} path", file)


def check_no_code(folder: Path, relatives) -> None:
    """Refuse an entry whose files ask a loader to run code: an ``auto_map`` in a config,
    or a ``modules.json`` naming anything but sentence-transformers' known modules.

    Args:
        folder: the entry folder.
        relatives: the entry's files (relative POSIX paths, as in the card).

    Raises:
        ZooError: naming the file.
    """
    for relative in relatives:
        name = PurePosixPath(relative).name
        file = folder / relative
        if name == MODULES_FILE:
            check_sentence_modules(file.parent)
        elif name in CODE_MAPPING_FILES:
            config = read_json_file(file, ZooError)
            if isinstance(config, dict) and "auto_map" in config:
                raise UnsafeEntryError(
                    f"{file}: its 'auto_map' names code to import; a zoo entry runs no code "
                    "of its own, refused"
                )


def _hub_blob(link: Path, entry: Path) -> bool:
    """Whether ``link`` is huggingface_hub's own cache link: an entry that is a snapshot
    (``models--ORG--NAME/snapshots/COMMIT``) links its files to that repository's blobs."""
    repo = entry.parent.parent
    if (
        entry.parent.name != "snapshots"
        or not repo.name.startswith("models--")
        or (repo / "blobs").is_symlink()
    ):
        return False
    target = Path(os.path.realpath(link))
    blobs = Path(os.path.realpath(repo / "blobs"))
    return target.parent == blobs and target.is_file()


def symlinks_in(entry: Path) -> list[Path]:
    """Symbolic links inside ``entry`` (never followed), except the Hub cache's own links
    from a snapshot's files to its blobs.

    Example:
        >>> symlinks_in(Path("."))  # doctest: +SKIP
        []
    """
    found = []
    for root, dirs, files in os.walk(entry, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(root) / name
            if path.is_symlink() and not (name in files and _hub_blob(path, entry)):
                found.append(path)
    return sorted(found)


def check_no_symlinks(entry: Path, name: str) -> None:
    """Raise a one-line ZooError when ``entry`` holds a symlink (see :func:`symlinks_in`)."""
    links = symlinks_in(entry)
    if links:
        raise UnsafeEntryError(
            f"{links[0]}: a symbolic link inside zoo entry {name!r} (to "
            f"{os.readlink(links[0])!r}); an entry must hold its own files, refused"
        )


# Keys under which transformers, sentence-transformers and adapters record where a model was
# loaded from: on the machine that saved it, a path in its virtual environment or home.
MODEL_NAME_KEYS = ("model_name", "_name_or_path", "name_or_path")


def is_local_path(value) -> bool:
    """Whether ``value`` is a path of this machine (absolute, or in a home folder).

    Example:
        >>> is_local_path("/home/me/data/parsed"), is_local_path("minilm-l6")
        (True, False)
    """
    if not isinstance(value, str) or not value:
        return False
    return (
        value.startswith("~")
        or (PurePosixPath(value).is_absolute() and len(PurePosixPath(value).parts) > 1)
        or bool(PureWindowsPath(value).drive)
    )


def public_name(value: str) -> str:
    """A local path as the last part of it (``/home/me/parsed`` -> ``parsed``)."""
    return PureWindowsPath(value).name if PureWindowsPath(value).drive else Path(value).name


def without_local_paths(value, *, keep: tuple[str, ...] = ()):
    """``value`` (a card, or any JSON value) with every local path replaced by its last part;
    the top-level keys in ``keep`` are left as they are.

    Example:
        >>> without_local_paths({"training": {"data": "/home/me/parsed", "lr": 0.001}})
        {'training': {'data': 'parsed', 'lr': 0.001}}
    """
    if isinstance(value, dict):
        return {
            key: item if key in keep else without_local_paths(item) for key, item in value.items()
        }
    if isinstance(value, list):
        return [without_local_paths(item) for item in value]
    return public_name(value) if is_local_path(value) else value


def strip_model_paths(folder: Path, base_model: str) -> None:
    """Replace the local path each saved config records as its model's name (an adapter's
    ``model_name``, a model's ``_name_or_path``) by ``base_model`` when that is a short name,
    else by the path's last part; no loader reads them back.

    Args:
        folder: the entry folder being written (before its files are hashed).
        base_model: the card's base model.
    """

    short = public_name(base_model) if is_local_path(base_model) else str(base_model)
    for file in sorted(Path(folder).rglob("*.json")):
        if file.name == "tokenizer.json" or file.is_symlink():
            continue
        try:
            config = read_json_file(file)
        except AdapterZooError:  # not JSON (deep nesting too): no model names to rewrite
            continue
        if not isinstance(config, dict):
            continue
        local = [k for k in MODEL_NAME_KEYS if is_local_path(config.get(k))]
        if local:
            atomic_write_json(file, {**config, **dict.fromkeys(local, short)})
