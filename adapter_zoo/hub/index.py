"""The zoo index: ``index.json`` in a Hub repository, mapping short names to repositories.

Format::

    {"version": 1, "entries": [{"name": "beer", "repo": "org/beer-adapter",
      "revision": "<commit sha>", "base_model": "minilm-l6", "forums": ["beer.stackexchange.com"],
      "size": 1234567, "scores": {"dev_mrr@10": 0.61}, "mode": "adapter",
      "encoder": "bi"}, ...]}

It is downloaded through the Hugging Face cache, so a machine that has read it once can still
resolve names offline.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.hub.connection import (
    guard_hub_responses,
    hub_api,
    hub_cache,
    hub_endpoint,
    hub_local_only,
    hub_offline,
)
from adapter_zoo.zoo.store import migrate_card_fields
from stackexchange.errors import closest_names
from stackexchange.jsontext import JSONTextError, loads_text

INDEX_REPO = "adapter-zoo/index"
INDEX_FILE = "index.json"
INDEX_VERSION = 1
ENTRY_FIELDS = ("name", "repo", "revision", "base_model", "forums", "size", "scores")


def index_repo() -> str:
    """The index repository: ``$ADAPTER_ZOO_INDEX`` or :data:`INDEX_REPO`."""
    return os.environ.get("ADAPTER_ZOO_INDEX") or INDEX_REPO


def _parse(text: str, source: str) -> list[dict]:
    try:
        data = loads_text(text, position=True)
    except JSONTextError as error:
        raise ZooError(f"{source}: the zoo index is not valid JSON ({error})") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ZooError(f"{source}: the zoo index has no 'entries' list")
    for number, entry in enumerate(entries):
        missing = [k for k in ("name", "repo") if not isinstance(entry, dict) or k not in entry]
        if missing:
            raise ZooError(f"{source}: zoo index entry {number} has no {missing[0]!r}")
    # an index written before the card's "kind" became "mode" keeps it: the cards' one rule
    return [
        migrate_card_fields(entry, f"{source}: zoo index entry {number}")
        for number, entry in enumerate(entries)
    ]


def list_remote() -> list[dict]:
    """Every entry of the zoo index (sorted by name), from the Hub or the cached copy.

    Example:
        >>> [entry["name"] for entry in list_remote()]  # doctest: +SKIP
        ['beer', 'travel']
    """
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

    repo = index_repo()
    guard_hub_responses()
    try:
        path = hf_hub_download(
            repo,
            INDEX_FILE,
            cache_dir=hub_cache(),
            endpoint=hub_endpoint(),
            local_files_only=hub_local_only(),
        )
    except RepositoryNotFoundError:
        raise ZooError(
            f"zoo index {repo}: no such repository on {hub_endpoint()} "
            "(set ADAPTER_ZOO_INDEX to another one)"
        ) from None
    except EntryNotFoundError as error:
        # LocalEntryNotFoundError subclasses EntryNotFoundError: nothing cached and no Hub.
        from huggingface_hub.errors import LocalEntryNotFoundError

        if isinstance(error, LocalEntryNotFoundError):
            how = "unset HF_HUB_OFFLINE" if hub_offline() else f"connect to {hub_endpoint()}"
            raise ZooError(
                f"zoo index {repo}/{INDEX_FILE}: not in the Hugging Face cache ({hub_cache()}) "
                f"and the Hub cannot be reached; {how} to read it once"
            ) from None
        raise ZooError(f"zoo index {repo}: has no {INDEX_FILE}") from None
    entries = _parse(Path(path).read_text(encoding="utf-8"), f"{repo}/{INDEX_FILE}")
    return sorted(entries, key=lambda entry: entry["name"])


def lookup(name: str) -> dict:
    """The index entry named ``name``; a ZooError listing close names when there is none."""

    entries = list_remote()
    for entry in entries:
        if entry["name"] == name:
            return entry
    names = [entry["name"] for entry in entries]
    close = closest_names(name, names)  # not every choice: an index may hold hundreds
    hint = f"did you mean {', '.join(close)}?" if close else f"it has {len(names)} entries"
    raise ZooError(f"{name!r} is not in the zoo index {index_repo()}; {hint}")


def index_entry(card: dict, repo_id: str, revision: str, size: int) -> dict:
    """The index record of a pushed zoo entry."""
    return {
        "name": card["name"],
        "repo": repo_id,
        "revision": revision,
        "base_model": card["base_model"],
        "forums": card.get("forums") or [],
        "size": size,
        "scores": card.get("scores") or {},
        # how the entry was made, so a user can pick a bi-encoder for search
        "mode": card.get("mode"),
        "encoder": card.get("encoder", "cross"),
    }


def update_index(
    entry: dict, *, index: str | None = None, commit_message: str | None = None
) -> str:
    """Add ``entry`` (see :func:`index_entry`) to the zoo index, replacing one of the same name.

    The index repository is created when missing. Returns the index commit sha.

    Example:
        >>> update_index(index_entry(card, "me/beer", sha, 1234))  # doctest: +SKIP
    """
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub import CommitOperationAdd, hf_hub_download

    missing = [k for k in ENTRY_FIELDS if k not in entry]
    if missing:
        raise ZooError(f"zoo index entry {entry.get('name')!r} has no {missing[0]!r}")
    repo = index or index_repo()
    api = hub_api()
    api.create_repo(repo, exist_ok=True)
    entries = []
    if INDEX_FILE in api.list_repo_files(repo):
        # Always the current index: a stale cached copy would drop entries pushed meanwhile.
        path = hf_hub_download(
            repo, INDEX_FILE, cache_dir=hub_cache(), endpoint=hub_endpoint(), force_download=True
        )
        entries = _parse(Path(path).read_text(encoding="utf-8"), f"{repo}/{INDEX_FILE}")
    entries = [e for e in entries if e["name"] != entry["name"]] + [entry]
    entries.sort(key=lambda e: e["name"])
    text = json.dumps({"version": INDEX_VERSION, "entries": entries}, indent=2) + "\n"
    info = api.create_commit(
        repo,
        operations=[CommitOperationAdd(INDEX_FILE, text.encode("utf-8"))],
        commit_message=commit_message or f"index: {entry['name']} -> {entry['repo']}",
    )
    return info.oid
