"""Zoo entries on disk: atomic writing, the card, and hash verification."""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath, PureWindowsPath

from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.snippets import entry_head_type
from stackexchange.io import atomic_directory, atomic_write_text, sha256_file

CARD_FILE = "card.json"
README_FILE = "README.md"
CARD_VERSION = 1
# Files that are not hashed: the card itself (it holds the hashes) and the README made from it.
UNHASHED = {CARD_FILE, README_FILE}


def zoo_home() -> Path:
    """The local zoo folder: ``$ADAPTER_ZOO_HOME``, else ``<user cache dir>/adapter-zoo``."""
    env = os.environ.get("ADAPTER_ZOO_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("adapter-zoo", appauthor=False))


def is_entry_name(name: str) -> bool:
    """Whether ``name`` is a plain zoo entry name: no path separator, not hidden, not ``..``."""
    return bool(name) and "/" not in name and "\\" not in name and not name.startswith(".")


def entry_path(name: str) -> Path:
    """Where the zoo entry ``name`` lives (it may not exist)."""
    if not is_entry_name(name):
        raise ZooError(f"invalid zoo entry name {name!r}: use letters, digits, '-', '_' or '.'")
    return zoo_home() / name


def entry_folder(name_or_path: str | os.PathLike) -> Path:
    """Where an entry is written: a plain name (:func:`is_entry_name`) in the zoo home,
    anything else (a path with a separator, ``./NAME``) is that folder.

    Raises:
        ZooError: ``name_or_path`` is ``.`` or ``..`` (neither a name nor an entry folder).
    """
    text = str(name_or_path)
    if text.strip() in (".", ".."):
        raise ZooError(f"invalid zoo entry name {text!r}: give a name or an entry folder's path")
    return zoo_home() / text if is_entry_name(text) else Path(text).expanduser()


def local_entry(name_or_path: str | os.PathLike) -> Path | None:
    """The local entry folder a name or path means, or None when there is none.

    A plain name (see :func:`is_entry_name`) is looked up in the zoo home only; anything else
    is a path to an entry folder. ``.`` and ``..`` are neither: they are refused, so no name
    resolves outside the zoo home.

    Raises:
        ZooError: ``name_or_path`` is ``.`` or ``..``.
    """
    name = str(name_or_path)
    if name.strip() in (".", ".."):
        raise ZooError(
            f"invalid zoo entry name {name!r}: a name is a plain folder name in the zoo "
            f"({zoo_home()}); give an entry folder by its path (./NAME or an absolute path)"
        )
    if is_entry_name(name) and (zoo_home() / name / CARD_FILE).is_file():
        return zoo_home() / name
    path = Path(name).expanduser()
    return path if (path / CARD_FILE).is_file() else None


def _hash_files(folder: Path) -> dict[str, str]:
    files = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and relative not in UNHASHED:
            files[relative] = sha256_file(path)
    return files


def render_readme(card: dict, folder: Path | None = None, *, head_type: str | None = None) -> str:
    """The human-readable card (README.md) for a zoo entry.

    A YAML header with the licence (``cc-by-sa-4.0`` and ``language: en`` for weights
    trained on Stack Exchange forums, see :mod:`adapter_zoo.zoo.cards`), the card's main
    fields, the attribution line, how to load it (with adapter-zoo, and, given the entry's
    ``folder``, without it: the Hub card's lines, :func:`adapter_zoo.zoo.snippets.library_lines`,
    reading that folder), and its dev scores labelled as such.
    """
    from adapter_zoo.zoo.cards import (
        attribution,
        dev_scores_section,
        front_matter,
        licence_metadata,
    )
    from adapter_zoo.zoo.snippets import library_lines, local_folder

    licence = licence_metadata(card)
    lines = front_matter(**licence, tags=["adapter-zoo"]) if licence else []
    lines += [f"# {card['name']}", "", f"A `{card.get('kind')}` ranker of the adapter zoo.", ""]
    for key in ("base_model", "forums", "pairs", "seed", "cascade"):
        if card.get(key) is not None:
            lines.append(f"- **{key}**: `{json.dumps(card[key], ensure_ascii=False)}`")
    credit = attribution(card)
    lines += ["", *([credit, ""] if credit else [])]
    if card.get("kind") == "cascade":  # early exits need the cascade's own ranker
        load = [
            "from adapter_zoo.cascade import CascadeRanker",
            "",
            f"ranker = CascadeRanker.load({card['name']!r})",
        ]
    else:
        load = ["import adapter_zoo", "", f"ranker = adapter_zoo.load({card['name']!r})"]
    lines += [
        "Load it with:",
        "",
        "```python",
        *load,
        'ranker.rank("your question", ["candidate 1", "candidate 2"])',
        "```",
        "",
    ]
    if folder is not None:
        lines += library_lines(card, local_folder(folder), head_type)
    lines += dev_scores_section(card)
    if card.get("training"):
        lines += ["## Training", "", "```json", json.dumps(card["training"], indent=2), "```", ""]
    return "\n".join(lines)


def save_entry(
    folder_writer: Callable[[Path], None],
    name: str | os.PathLike,
    card: dict,
    *,
    overwrite: bool = False,
) -> Path:
    """Write the zoo entry ``name`` atomically and return its folder: the one entry writer
    of every kind (cascades included).

    Args:
        folder_writer: writes the weights into the (temporary) folder it is given.
        name: the entry's short name, or a folder path (see :func:`entry_folder`); the
            card's ``name`` is the folder's name.
        card: card fields (``kind``, ``base_model``, ``forums``, ...); ``name``, ``files``,
            ``created`` and ``version`` are filled in here.
        overwrite: replace an existing entry of that name.

    Example:
        >>> save_entry(lambda d: model.save_adapter(d, "beer", with_head=True),
        ...            "beer", {"kind": "adapter", "base_model": "minilm-l6"})  # doctest: +SKIP
    """
    final = entry_folder(name)
    if final.exists() and not overwrite:
        raise ZooError(f"zoo entry {str(name)!r} already exists at {final}; pass overwrite=True")
    with atomic_directory(final, overwrite=overwrite) as tmp:
        folder_writer(tmp)
        full = {"name": final.name, **{k: v for k, v in card.items() if k != "name"}}
        full["files"] = _hash_files(tmp)
        full["created"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        full["version"] = CARD_VERSION
        atomic_write_text(tmp / CARD_FILE, json.dumps(full, indent=2, ensure_ascii=False) + "\n")
        readme = render_readme(full, final.resolve(), head_type=entry_head_type(tmp))
        atomic_write_text(tmp / README_FILE, readme)
    return final


def card_max_length(card: dict) -> int:
    """The token limit of an entry's (query, candidate) pairs: what it was trained with, and
    what every scorer of it uses (``load``'s Ranker, the sweep, the recommender's probe).
    Cards written before ``max_length`` was recorded were trained at 300."""
    return int(card.get("max_length", 300))


def read_card(path: str | os.PathLike) -> dict:
    """The card of the entry folder ``path`` (not verified)."""
    card_file = Path(path) / CARD_FILE
    try:
        card = json.loads(card_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ZooError(f"{card_file}: missing; {path} is not a zoo entry") from None
    except json.JSONDecodeError as error:
        raise ZooError(f"{card_file}: not valid JSON ({error})") from None
    for key in ("name", "kind", "base_model", "files"):
        if key not in card:
            raise ZooError(f"{card_file}: the card has no {key!r} field")
    if not isinstance(card["files"], dict):
        raise ZooError(f"{card_file}: 'files' must map relative paths to sha256 hashes")
    for relative in card["files"]:
        if not _inside_entry(relative):
            raise ZooError(
                f"{card_file}: file {relative!r} is not a relative path inside the entry"
            )
    return card


def _inside_entry(relative) -> bool:
    """Whether a card's file name is a plain relative POSIX path (no ``..``, not absolute)."""
    if not isinstance(relative, str) or not relative or "\\" in relative or "\0" in relative:
        return False
    path = PurePosixPath(relative)
    return (
        not path.is_absolute()
        and path.as_posix() == relative
        and not any(part in ("", ".", "..") for part in path.parts)
        and not PureWindowsPath(relative).drive
    )


def verify_entry(path: str | os.PathLike) -> dict:
    """Check every file of the entry at ``path`` against its card's sha256; return the card."""
    path = Path(path)
    card = read_card(path)
    for relative, expected in card["files"].items():
        file = path / relative
        if not file.is_file():
            raise ZooError(f"{file}: missing from zoo entry {card['name']!r}")
        if sha256_file(file) != expected:
            raise ZooError(
                f"{file}: corrupted (sha256 differs from the card of zoo entry {card['name']!r})"
            )
    extra = set(_hash_files(path)) - set(card["files"])
    if extra:
        raise ZooError(f"{path / sorted(extra)[0]}: not listed in the card of {card['name']!r}")
    return card


def local_cards() -> list[dict]:
    """Cards of the local zoo entries (sorted by name), each with its ``path``."""
    home = zoo_home()
    cards = []
    if home.is_dir():
        for folder in sorted(home.iterdir()):
            if (
                folder.is_dir()
                and not folder.name.startswith(".")
                and (folder / CARD_FILE).exists()
            ):
                try:
                    card = read_card(folder)
                except ZooError:
                    continue  # a broken folder is not an entry; load() reports why
                cards.append({**card, "path": str(folder), "source": "local"})
    return cards
