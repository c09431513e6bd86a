"""``pull``: a Hub repository revision into the Hugging Face cache, verified before use."""

from __future__ import annotations

import re
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.hub.connection import (
    COMMIT,
    check_revision,
    guard_hub_responses,
    hub_api,
    hub_cache,
    hub_endpoint,
    hub_local_only,
    hub_offline,
)
from adapter_zoo.zoo import multicqa
from adapter_zoo.zoo.store import CARD_FILE, entry_path, read_card, verify_entry
from adapter_zoo.zoo.untrusted import UnsafeEntryError
from stackexchange.io import atomic_write_json

# The encoder MultiCQA's published adapters were trained on (they fit nothing else).
MULTICQA_BASE = "bert-base"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def check_repo_id(repo_id: str) -> str:
    """``repo_id`` if it looks like ``org/name``, else a ZooError."""
    if not isinstance(repo_id, str) or not _REPO_ID.match(repo_id) or ".." in repo_id:
        raise ZooError(f"invalid Hub repository id {repo_id!r}: expected 'org/name'")
    return repo_id


def describe(repo_id: str, revision: str | None) -> str:
    """``org/name@revision`` for messages."""
    return f"{repo_id}@{revision or 'main'}"


def download(repo_id: str, revision: str | None = None) -> Path:
    """The snapshot folder of ``repo_id`` at ``revision``: downloaded, or the cached copy.

    Offline (``HF_HUB_OFFLINE=1``) or with the Hub unreachable (one quick probe, no
    retries), the snapshot already in the cache is served; a revision never downloaded is a
    ZooError saying so.
    """
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    check_repo_id(repo_id)
    check_revision(revision)
    guard_hub_responses()
    where = describe(repo_id, revision)
    endpoint = hub_endpoint()
    try:
        folder = snapshot_download(
            repo_id,
            revision=revision,
            cache_dir=hub_cache(),
            endpoint=endpoint,
            local_files_only=hub_local_only(),
            # Every Hub repository has one; it is not part of the zoo entry (verify_entry
            # refuses files the card does not list).
            ignore_patterns=[".gitattributes"],
        )
    except (RevisionNotFoundError, RepositoryNotFoundError) as error:
        refs = _refs(repo_id) if revision is not None else None
        if isinstance(error, RevisionNotFoundError) or refs is not None:
            # Some servers (olah) answer "repository not found" for an unknown revision.
            known = "; ".join(f"{kind}: {', '.join(names) or '-'}" for kind, names in refs or [])
            raise ZooError(
                f"{where}: no such revision on {endpoint}" + (f" ({known})" if known else "")
            ) from None
        raise ZooError(
            f"{repo_id}: no such repository on {endpoint} (a private one needs `hf auth login`)"
        ) from None
    except LocalEntryNotFoundError:
        how = "unset HF_HUB_OFFLINE" if hub_offline() else f"connect to {endpoint}"
        raise ZooError(
            f"{where}: not in the Hugging Face cache ({hub_cache()}) and the Hub cannot be "
            f"reached; {how} and run `adapter-zoo pull {repo_id}"
            f"{f' --revision {revision}' if revision else ''}` once to download it"
        ) from None
    folder = Path(folder)
    cache = hub_cache().resolve()
    if not COMMIT.match(folder.name) or cache not in folder.resolve().parents:
        raise ZooError(f"{where}: the Hub named snapshot {str(folder)!r}, not a commit in {cache}")
    return folder


def _refs(repo_id: str) -> list[tuple[str, list[str]]] | None:
    """``[("branches", names), ("tags", names)]`` of ``repo_id``; None when it has none."""
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub.errors import HfHubHTTPError

    try:
        refs = hub_api().list_repo_refs(repo_id)
    except (HfHubHTTPError, OSError):
        return None
    return [
        ("branches", sorted(ref.name for ref in refs.branches)),
        ("tags", sorted(ref.name for ref in refs.tags)),
    ]


def pull(repo_id: str, *, revision: str | None = None) -> Path:
    """Download a zoo entry from the Hub (or take it from the cache) and verify it.

    Every file the entry's ``card.json`` lists must be present with its sha256, so a partial
    or corrupted download never loads. A published MultiCQA adapter (``pytorch_adapter.bin``,
    no card) is converted into a zoo entry with a new head (see :func:`pull_multicqa`).

    Args:
        repo_id: ``org/name`` on the Hub.
        revision: branch, tag or commit; the default branch when None.

    Returns:
        The verified entry folder (a snapshot in the Hugging Face cache).

    Example:
        >>> folder = pull("someone/beer-adapter", revision="v1")  # doctest: +SKIP
        >>> adapter_zoo.load(str(folder))  # doctest: +SKIP
    """

    folder = download(repo_id, revision)
    if not (folder / CARD_FILE).is_file():
        if multicqa.find_legacy_weights(folder) is not None:
            return pull_multicqa(
                repo_id, revision=revision, base_model=MULTICQA_BASE, snapshot=folder
            )
        raise ZooError(
            f"{describe(repo_id, revision)}: not a zoo entry (no {CARD_FILE}) "
            "and not a MultiCQA adapter (no pytorch_adapter.bin)"
        )
    try:
        verify_entry(folder)
    except UnsafeEntryError as error:  # as published: pulling again gives the same
        raise UnsafeEntryError(f"{describe(repo_id, revision)}: {error}") from None
    except ZooError as error:
        raise ZooError(
            f"{describe(repo_id, revision)}: {error}; the download is incomplete or corrupted, "
            f"delete it (`hf cache delete`) and pull again"
        ) from None
    return folder


def pull_multicqa(
    repo_id: str,
    *,
    revision: str | None = None,
    base_model: str = MULTICQA_BASE,
    snapshot: Path | None = None,
) -> Path:
    """A published MultiCQA adapter as a zoo entry in today's layout, with a new head.

    MultiCQA's adapters (``AdapterHub/bert-base-uncased_sts_stackexchange_pfeiffer``, one
    branch per forum such as ``travel_stackexchange_com``) are pickled, headless and made for
    bert-base: ``adapter_zoo.zoo.multicqa`` renames their keys to adapters 1.x names and adds
    a seeded, untrained one-logit head. The result is stored in the local zoo as
    ``multicqa-<revision>`` and re-made only when the branch moves to another commit.

    Example:
        >>> pull_multicqa("AdapterHub/bert-base-uncased_sts_stackexchange_pfeiffer",
        ...               revision="travel_stackexchange_com")  # doctest: +SKIP
    """

    snapshot = snapshot if snapshot is not None else download(repo_id, revision)
    commit = snapshot.name  # huggingface_hub names snapshot folders by commit sha
    name = "multicqa-" + re.sub(r"[^\w.-]", "_", revision or "main")
    existing = entry_path(name)
    if existing.exists() or existing.is_symlink():
        card = read_card(existing)  # a folder that is no zoo entry is refused, not replaced
        if card.get("hub") == {"repo": repo_id, "commit": commit} and card["base_model"] == str(
            base_model
        ):
            verify_entry(existing)
            return existing
        if card.get("source") != "multicqa":
            # only an earlier conversion is replaced (the branch moved): never a user's entry
            raise ZooError(
                f"zoo entry {name!r} at {existing} is not a MultiCQA adapter pulled from the "
                f"Hub; move it away to pull {describe(repo_id, revision)}"
            )
    folder = multicqa.import_legacy(snapshot, name, base_model=base_model, overwrite=True)
    # Record where the entry came from, so the next pull knows whether it is current.
    _set_card_field(folder, "hub", {"repo": repo_id, "commit": commit})
    return folder


def _set_card_field(folder: Path, key: str, value) -> None:
    card = read_card(folder)
    card[key] = value
    atomic_write_json(folder / CARD_FILE, card)
