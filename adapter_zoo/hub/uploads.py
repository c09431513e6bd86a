"""``push``: a zoo entry to a Hub repository in one commit."""

from __future__ import annotations

import json
import os
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.hub.connection import hub_api, hub_endpoint, require_hub
from adapter_zoo.hub.downloads import check_repo_id
from adapter_zoo.hub.index import index_entry, update_index
from adapter_zoo.hub.model_card import entry_head_type, render_model_card
from adapter_zoo.zoo.store import CARD_FILE, README_FILE, verify_entry, zoo_home
from adapter_zoo.zoo.store import local_entry as find_local_entry
from adapter_zoo.zoo.untrusted import without_local_paths
from stackexchange.errors import first_line

GITATTRIBUTES = ".gitattributes"  # the Hub's own file in every repository: left alone


def local_entry(name_or_path: str | os.PathLike) -> Path:
    """The folder of a local zoo entry given by name or path."""

    folder = find_local_entry(name_or_path)
    if folder is None:
        raise ZooError(
            f"{name_or_path}: no zoo entry of that name in {zoo_home()} and no {CARD_FILE} there"
        )
    return folder


def push(
    name_or_path: str | os.PathLike,
    repo_id: str,
    *,
    private: bool = False,
    commit_message: str | None = None,
    revision: str | None = None,
    tag: str | None = None,
    index: bool = False,
) -> str:
    """Upload a verified zoo entry to ``repo_id`` as a single commit; return its sha.

    All files go in one ``create_commit``, so a push that fails midway leaves the repository
    at its previous revision. Files of an earlier push that the entry no longer has are
    deleted in the same commit. The README becomes a Hub model card with YAML metadata.

    Args:
        name_or_path: a local zoo name or an entry folder.
        repo_id: ``org/name``; created (``private`` or public) when missing.
        commit_message: defaults to ``"adapter-zoo: push <name>"``.
        revision: branch to commit to (created from the default branch when missing).
        tag: tag to put on the new commit.
        index: also add the entry to the zoo index (``ADAPTER_ZOO_INDEX``).

    Example:
        >>> sha = push("beer", "me/beer-adapter", tag="v1")  # doctest: +SKIP
    """
    # huggingface_hub, requests on first use: the CLI starts without them
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete
    from requests import RequestException

    check_repo_id(repo_id)
    folder = local_entry(name_or_path)
    # Never publish a corrupted entry, nor this machine's paths (the training data's folder):
    # the local card keeps them for the tools that read the data again. The base model is
    # kept as named: loading needs it, and a base given as a folder is the user's choice.
    local = verify_entry(folder)
    card = without_local_paths(local, keep=("base_model",))
    readme = render_model_card(card, repo_id, head_type=entry_head_type(folder)).encode("utf-8")
    card_bytes = (folder / CARD_FILE).read_bytes()
    if json.loads(card_bytes) != card:  # local paths dropped, or an old card's "kind" renamed
        card_bytes = (json.dumps(card, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    operations = [CommitOperationAdd(path, str(folder / path)) for path in sorted(card["files"])]
    operations.append(CommitOperationAdd(CARD_FILE, card_bytes))
    operations.append(CommitOperationAdd(README_FILE, readme))

    require_hub(f"push {folder} to {repo_id}")
    api = hub_api()
    try:
        api.create_repo(repo_id, private=private, exist_ok=True)
        if revision is not None:
            api.create_branch(repo_id, branch=revision, exist_ok=True)
        keep = {op.path_in_repo for op in operations} | {GITATTRIBUTES}
        stale = [p for p in api.list_repo_files(repo_id, revision=revision) if p not in keep]
        operations += [CommitOperationDelete(path) for path in stale]
        info = api.create_commit(
            repo_id,
            operations=operations,
            commit_message=commit_message or f"adapter-zoo: push {card['name']}",
            revision=revision,
        )
        if tag is not None:
            api.create_tag(repo_id, tag=tag, revision=info.oid)
        if index:
            size = sum((folder / path).stat().st_size for path in card["files"])
            size += len(card_bytes) + len(readme)
            update_index(index_entry(card, repo_id, info.oid, size))
    except RequestException as error:  # the connection dropped after the probe
        reason = first_line(error)
        raise ZooError(
            f"push {folder} to {repo_id}: the Hub at {hub_endpoint()} failed ({reason})"
        ) from None
    return info.oid
