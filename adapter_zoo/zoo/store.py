"""Zoo entries on disk: atomic writing, the card, and hash verification."""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

import platformdirs

from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.probe import PROBE_FIELD, probe_field_problem
from adapter_zoo.registry import kind_for_card
from adapter_zoo.zoo.cards import render_card
from adapter_zoo.zoo.snippets import entry_head_type
from adapter_zoo.zoo.untrusted import (
    check_no_code,
    check_no_symlinks,
    is_relative_inside,
    strip_model_paths,
)
from stackexchange.io import (
    atomic_directory,
    atomic_write_text,
    check_writable,
    lock_file,
    output_lock,
    sha256_file,
)
from stackexchange.jsontext import read_json_file
from stackexchange.numbers import MAX_TOKENS

CARD_FILE = "card.json"
README_FILE = "README.md"
CARD_VERSION = 1
# The entries the package ships (package data): adapter_zoo/shipped/<name>/
PACKAGE_SHIPPED = Path(__file__).resolve().parent.parent / "shipped"
_held: dict[Path, int] = {}  # the entry locks this process holds, and how deeply
# Files that are not hashed: the card itself (it holds the hashes) and the README made from it.
UNHASHED = {CARD_FILE, README_FILE}
ENCODERS = ("bi", "cross", "composite")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def zoo_home() -> Path:
    """The local zoo folder: ``$ADAPTER_ZOO_HOME``, else ``<user cache dir>/adapter-zoo``."""
    env = os.environ.get("ADAPTER_ZOO_HOME")
    if env:
        return Path(env).expanduser()

    return Path(platformdirs.user_cache_dir("adapter-zoo", appauthor=False))


def shipped_home() -> Path:
    """The shipped zoo: the entries inside the package (``adapter_zoo/shipped/<name>/``),
    trained by the ``shipped_zoo`` recipe, read-only and verified like a pulled entry;
    ``$ADAPTER_ZOO_SHIPPED`` names another folder in its place (a study that wants the
    user's zoo alone, the tests).

    It comes after the user's zoo (:func:`zoo_home`): an entry of the same name there shadows
    the shipped one. Nothing is ever written here: every writer asks :func:`entry_folder`,
    which is in the user's zoo.

    Example:
        >>> from pathlib import Path
        >>> shipped_home() == Path(os.environ.get("ADAPTER_ZOO_SHIPPED") or PACKAGE_SHIPPED)
        True
    """
    env = os.environ.get("ADAPTER_ZOO_SHIPPED")
    return Path(env).expanduser() if env else PACKAGE_SHIPPED


# The longest entry name: its folder's temporaries (``.NAME.tmp-PID-ID.owner``) must still
# fit a file system's 255-byte file names.
MAX_NAME_BYTES = 200
NAME_RULE = "use letters, digits, '-', '_' or '.'"


def is_entry_name(name) -> bool:
    """Whether ``name`` is a plain zoo entry name: a non-empty string with no path separator,
    not hidden (so neither ``.`` nor ``..``), no control character, no space at either end,
    text that UTF-8 can write (no lone surrogate, which is what a command line's bytes that
    are not UTF-8 become), at most :data:`MAX_NAME_BYTES` bytes.

    Example:
        >>> [is_entry_name(n) for n in ("beer", "../x", "/abs", "a/b", ".hidden", "", "\\udcff")]
        [True, False, False, False, False, False, False]
    """
    return (
        isinstance(name, str)
        and _utf8(name)
        and bool(name)
        and name == name.strip()
        and "/" not in name
        and "\\" not in name
        and not name.startswith(".")
        and not any(ord(c) < 32 or ord(c) == 127 for c in name)
        and len(name.encode("utf-8")) <= MAX_NAME_BYTES
    )


def _utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8: the card, the README and a Hub repository's
    name are UTF-8, so a name that is not would fail only once the work is done."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_entry_name(name) -> str:
    """``name`` when it is a plain zoo entry name (:func:`is_entry_name`), else the one-line
    ZooError every writer of an entry gives (``train``, ``adapt``, ``compose``, ...).

    Example:
        >>> check_entry_name("../../x")
        Traceback (most recent call last):
        ...
        adapter_zoo.errors.ZooError: invalid zoo entry name '../../x': use letters, digits, '-', '_' or '.'
    """
    if not is_entry_name(name):
        raise ZooError(f"invalid zoo entry name {name!r}: {NAME_RULE}")
    return name


def entry_path(name: str) -> Path:
    """Where the zoo entry ``name`` lives (it may not exist); ``name`` is checked by
    :func:`check_entry_name`."""
    return zoo_home() / check_entry_name(name)


def entry_folder(name_or_path: str | os.PathLike) -> Path:
    """Where an entry is written: the one place every writer of a zoo entry asks
    (:func:`save_entry` and the commands that check before their work).

    A string is an entry name, checked by :func:`check_entry_name` (a name from the command
    line can never write outside the zoo home: ``../x``, ``/abs``, ``a/b`` are refused); a
    path object (``pathlib.Path``) is a folder a Python caller chose, written as it is.

    Raises:
        ZooError: a string that is not a plain entry name; the path ``.`` or ``..``.
    """
    if isinstance(name_or_path, str) or not isinstance(name_or_path, os.PathLike):
        return entry_path(name_or_path)
    text = os.fspath(name_or_path)
    if str(text).strip() in (".", "..", ""):
        raise ZooError(f"invalid zoo entry folder {text!r}: give an entry folder's path")
    return Path(text).expanduser()


def entry_location(name_or_path: str | os.PathLike) -> Path:
    """Where an entry is read from (it may not exist): a plain name in the zoo home, anything
    else (a path with a separator, ``./NAME``) that folder. Never a place to write: writers
    ask :func:`entry_folder`.

    Raises:
        ZooError: ``name_or_path`` is ``.`` or ``..``.
    """
    text = str(name_or_path)
    if text.strip() in (".", ".."):
        raise ZooError(f"invalid zoo entry name {text!r}: give a name or an entry folder's path")
    return zoo_home() / text if is_entry_name(text) else Path(text).expanduser()


def check_zoo_writable(*folders: Path) -> None:
    """Refuse, before a model loads, a zoo home (and ``folders`` inside it, such as
    ``.checkpoints``) this process cannot write into: one line saying what to do.

    Raises:
        ZooError: naming the folder and the operating system's reason.
    """

    advice = (
        "make it writable, or set ADAPTER_ZOO_HOME to a folder you can write "
        f"(the zoo home is {zoo_home()})"
    )
    for folder in (zoo_home(), *folders):
        check_writable(folder, what="zoo entries", advice=advice, error=ZooError)


@contextlib.contextmanager
def entry_lock(name_or_path: str | os.PathLike, *, wait: float | None = 0):
    """Hold the lock of the entry ``name_or_path`` (:func:`entry_folder`) while one run writes
    it: a command that writes an entry holds it from before its work (a model loading,
    training) until the entry is in place, so a second run to the same name is refused in
    one line before it trains instead of replacing the first's entry (or resuming from its
    checkpoints) when both end. :func:`save_entry` holds it too: the lock is this process's,
    taken again inside the block (``build`` training its entry) it is already held. Runs
    writing other entries of the same zoo go on beside it.

    Args:
        wait: seconds to wait for the other run to end first (None: as long as it takes);
            0 refuses at once.

    Raises:
        ZooError: another process writes the entry (naming its folder and the lock).
    """
    final = entry_folder(name_or_path)
    key = lock_file(final)
    if key in _held:  # this process writes it already (build training its entry, a run's
        _held[key] += 1  # save_entry): a second lock of its own would refuse it
        try:
            yield final
        finally:
            _held[key] -= 1
        return
    with output_lock(final, error=ZooError, advice="choose another --name", wait=wait):
        _held[key] = 1
        try:
            yield final
        finally:
            del _held[key]


def holds_request(folder: Path, request: dict) -> bool:
    """Whether the entry at ``folder`` is what ``request`` asks for: its card's ``request``
    (what its writer was asked: ``compose`` and ``adapt`` record theirs) equals it. The same
    command again, after a run killed once its entry was in place, finds it done."""
    try:
        card = read_card(folder)
    except (ZooError, OSError):
        return False
    return card.get("request") == json.loads(json.dumps(request))


def local_entry(name_or_path: str | os.PathLike) -> Path | None:
    """The entry folder on this machine a name or path means, or None when there is none.

    A plain name (see :func:`is_entry_name`) is looked up in the zoo home, then in the
    shipped zoo (:func:`shipped_home`: the user's entry of a name shadows the shipped one);
    anything else is a path to an entry folder. ``.`` and ``..`` are neither: they are
    refused, so no name resolves outside those two zoos.

    Raises:
        ZooError: ``name_or_path`` is ``.`` or ``..``.
    """
    name = str(name_or_path)
    if name.strip() in (".", ".."):
        raise ZooError(
            f"invalid zoo entry name {name!r}: a name is a plain folder name in the zoo "
            f"({zoo_home()}); give an entry folder by its path (./NAME or an absolute path)"
        )
    if is_entry_name(name):
        for home in (zoo_home(), shipped_home()):
            if _has_card(home / name):
                return home / name
    path = Path(name).expanduser()
    return path if _has_card(path) else None


def _has_card(folder: Path) -> bool:
    """Whether ``folder`` holds a card file. A name the operating system cannot look up (too
    long a file name, a NUL byte) names no entry: the caller says it is unknown instead of
    showing the system's error."""
    try:
        return (folder / CARD_FILE).is_file()
    except (OSError, ValueError):
        return False


def _hash_files(folder: Path) -> dict[str, str]:
    files = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and relative not in UNHASHED:
            files[relative] = sha256_file(path)
    return files


def render_readme(card: dict, folder: Path | None = None, *, head_type: str | None = None) -> str:
    """The entry's local README.md: :func:`adapter_zoo.zoo.cards.render_card` with the lines
    that open it without adapter-zoo reading ``folder``."""

    return render_card(card, folder=folder, head_type=head_type)


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
        name: the entry's name, checked by :func:`check_entry_name` (a path object is the
            folder a Python caller chose, see :func:`entry_folder`); the card's ``name`` is
            the folder's name.
        card: card fields (``mode``, ``base_model``, ``forums``, ...); ``name``, ``files``,
            ``created`` and ``version`` are filled in here.
        overwrite: replace an existing entry of that name.

    Example:
        >>> save_entry(lambda d: model.save_adapter(d, "beer", with_head=True),
        ...            "beer", {"mode": "adapter", "base_model": "minilm-l6"})  # doctest: +SKIP
    """
    final = entry_folder(name)
    with entry_lock(final):
        if final.exists() and not overwrite:
            raise ZooError(
                f"zoo entry {str(name)!r} already exists at {final}; pass overwrite=True"
            )
        _write_entry(folder_writer, final, card, overwrite)
    return final


def _write_entry(folder_writer, final: Path, card: dict, overwrite: bool) -> None:
    with atomic_directory(final, overwrite=overwrite) as tmp:
        folder_writer(tmp)
        strip_model_paths(tmp, str(card.get("base_model", "")))  # no path of this machine
        full = {"name": final.name, **{k: v for k, v in card.items() if k != "name"}}
        full["files"] = _hash_files(tmp)
        full["created"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        full["version"] = CARD_VERSION
        atomic_write_text(tmp / CARD_FILE, json.dumps(full, indent=2, ensure_ascii=False) + "\n")
        readme = render_readme(full, final.resolve(), head_type=entry_head_type(tmp))
        atomic_write_text(tmp / README_FILE, readme)


def read_card(path: str | os.PathLike) -> dict:
    """The card of the entry folder ``path``, checked by :func:`check_card` (its files are
    not verified: :func:`verify_entry` does that)."""
    card_file = Path(path) / CARD_FILE
    if os.path.lexists(card_file) and not card_file.is_file():
        # a folder, a pipe (reading it would wait for ever), a device, a dangling link
        raise ZooError(f"{card_file}: not a regular file; {path} is not a zoo entry")
    try:
        card = read_json_file(card_file, ZooError)
    except FileNotFoundError:
        raise ZooError(f"{card_file}: missing; {path} is not a zoo entry") from None
    return check_card(card, card_file)


def find_card(name_or_path: str | os.PathLike) -> dict | None:
    """The checked card (:func:`read_card`) of the local entry a name or path means, or None
    when there is none (a spec, ``bm25``, a Hub name, a folder with no card): how a reader
    that may be given any model name (the leaderboard, the sweep) asks for a card.

    Raises:
        ZooError: the entry's card is broken (one line naming its file).
    """
    text = str(name_or_path)
    if text.strip() in (".", ".."):
        return None
    folder = local_entry(name_or_path)
    return None if folder is None else read_card(folder)


def field_error(card_file, key: str, value, wanted: str) -> ZooError:
    """The one-line error of a card field: the file, the field, what it must be, its value."""
    return ZooError(f"{card_file}: field {key!r} must be {wanted}, not {json.dumps(value)}")


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def migrate_card_fields(card, source) -> dict:
    """``card`` (an entry's card or a Hub index record) with its fields under their current
    names: the one rule for the renamed fields, used by :func:`check_card` and the Hub index.

    ``kind`` became ``mode`` (how the entry was made; "kind" is the registry's ModelKind).
    A record with both is refused in one line naming ``source``: which one is meant cannot
    be told, and no writer ever wrote both.

    Example:
        >>> migrate_card_fields({"name": "x", "kind": "adapter"}, "c.json")
        {'name': 'x', 'mode': 'adapter'}
    """
    # cards written before the rename (on disk and on the Hub) say "kind"
    if isinstance(card, dict) and "kind" in card:
        if "mode" in card:
            raise ZooError(
                f"{source}: the card has both 'mode' and the old 'kind' field; keep only 'mode'"
            )
        card = {("mode" if key == "kind" else key): value for key, value in card.items()}
    return card


def check_card(card, card_file) -> dict:
    """``card`` if every field an entry's readers use has the right type and value; else one
    line naming ``card_file`` and the field. The one card validator: every reader of a card
    (``load``, ``list``, the sweep, the Hub) goes through :func:`read_card`.

    Example:
        >>> check_card({"name": "x", "mode": "adapter", "base_model": 5, "files": {}}, "c.json")
        Traceback (most recent call last):
        ...
        adapter_zoo.errors.ZooError: c.json: field 'base_model' must be a non-empty string, not 5
    """
    if not isinstance(card, dict):
        raise ZooError(f"{card_file}: the card must be a JSON object, not {json.dumps(card)}")
    card = migrate_card_fields(card, card_file)
    for key in ("name", "mode", "base_model", "files"):
        if key not in card:
            raise ZooError(f"{card_file}: the card has no {key!r} field")
    for key in ("name", "base_model"):
        if not isinstance(card[key], str) or not card[key].strip():
            raise field_error(card_file, key, card[key], "a non-empty string")
    if not isinstance(card["mode"], str) or not card["mode"].strip():
        raise field_error(card_file, "mode", card["mode"], "a non-empty string")
    if not isinstance(card["files"], dict):
        raise ZooError(f"{card_file}: 'files' must map relative paths to sha256 hashes")
    for relative, digest in card["files"].items():
        if not is_relative_inside(relative):
            raise ZooError(
                f"{card_file}: file {relative!r} is not a relative path inside the entry"
            )
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise field_error(card_file, f"files.{relative}", digest, "a sha256 hex digest")
    _check_optional_fields(card, card_file)
    return card


def _check_optional_fields(card: dict, card_file) -> None:
    length = card.get("max_length")  # absent: the encoder's default (adapter_zoo.lengths)
    bad = isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= MAX_TOKENS
    if "max_length" in card and bad:
        raise field_error(card_file, "max_length", length, f"a whole number in [1, {MAX_TOKENS}]")
    if card.get("encoder", "cross") not in ENCODERS:
        raise field_error(card_file, "encoder", card["encoder"], f"one of {', '.join(ENCODERS)}")
    for key in ("layout", "head"):
        if key in card and card[key] is not None and not isinstance(card[key], str):
            raise field_error(card_file, key, card[key], "a string")
    for key in ("forums", "adapters", "members"):
        if key in card and not _strings(card[key]):
            raise field_error(card_file, key, card[key], "a list of non-empty strings")
    for key in ("training", "scores", "base_config"):
        if card.get(key) is not None and not isinstance(card[key], dict):
            raise field_error(card_file, key, card[key], "an object")
    _check_fusion_weights(card, card_file)
    _check_probe_field(card, card_file)

    # some registered kind opens it (adapter_zoo.kinds), and checks the fields only it reads
    kind_for_card(card, card_file).check_card(card, card_file)


def _check_probe_field(card: dict, card_file) -> None:
    """The probe loading checks an adapter entry's adapters by
    (:mod:`adapter_zoo.ranker.probe`): its texts and the cosine they had to the base."""
    wanted = probe_field_problem(card)  # None: no probe (written before it, no adapters)
    if wanted is not None:
        raise field_error(card_file, PROBE_FIELD, card[PROBE_FIELD], wanted)


def _check_fusion_weights(card: dict, card_file) -> None:
    """``fusion_weights`` (the leaderboard's Figure 4): layer -> adapter -> a number."""
    weights = card.get("fusion_weights")
    if weights is None:
        return
    wanted = "an object of layers, each an object of adapter weights (numbers)"
    if not isinstance(weights, dict):
        raise field_error(card_file, "fusion_weights", weights, wanted)
    for layer, row in weights.items():
        numbers = isinstance(row, dict) and all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in row.values()
        )
        if not numbers:
            raise field_error(card_file, f"fusion_weights.{layer}", row, wanted)


def verify_entry(path: str | os.PathLike) -> dict:
    """Check every file of the entry at ``path`` against its card's sha256; return the card.

    An entry is untrusted input (see :mod:`adapter_zoo.zoo.untrusted`): it may hold no
    symbolic link, name no folder outside itself and ask no loader to run code.

    Raises:
        ZooError: one line naming the file and what is wrong with it.
    """
    path = Path(path)
    card = read_card(path)
    check_no_symlinks(path, card["name"])
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
    check_no_code(path, card["files"])
    return card


def local_cards() -> list[dict]:
    """Cards of the entries on this machine (sorted by name), each with its ``path`` and its
    ``source``: ``local`` for the user's zoo (:func:`zoo_home`), ``shipped`` for the package's
    (:func:`shipped_home`), which a user's entry of the same name shadows (only the user's is
    listed, as :func:`local_entry` finds it).

    An entry whose card cannot be read (see :func:`check_card`: ``null``, not an object, a
    field of the wrong type, not a regular file) or that lacks a file its card lists is
    listed too, as ``{"name": <folder name>, "path", "source", "broken": <the one-line
    reason>}``, so one broken entry neither hides nor stops the others. The files are not
    hashed here (``load`` and ``verify_entry`` do): a listing stays quick.
    """
    cards = _cards_in(zoo_home(), "local")
    users = {Path(card["path"]).name for card in cards}
    cards += [c for c in _cards_in(shipped_home(), "shipped") if Path(c["path"]).name not in users]
    return sorted(cards, key=lambda card: Path(card["path"]).name)


def _cards_in(home: Path, source: str) -> list[dict]:
    """The cards of the entries in the zoo folder ``home`` (see :func:`local_cards`)."""
    cards = []
    if home.is_dir():
        for folder in sorted(home.iterdir()):
            if (
                folder.is_dir()
                and not folder.name.startswith(".")
                and os.path.lexists(folder / CARD_FILE)
            ):
                place = {"path": str(folder), "source": source}
                try:
                    cards.append({**_listed_card(folder), **place})
                except (ZooError, OSError) as error:
                    cards.append({"name": folder.name, **place, "broken": str(error)})
    return cards


def _listed_card(folder: Path) -> dict:
    """The card of the entry ``folder`` when every file it lists is there."""
    card = read_card(folder)
    for relative in card["files"]:
        if not (folder / relative).is_file():
            raise ZooError(f"{folder / relative}: missing from zoo entry {card['name']!r}")
    return card
