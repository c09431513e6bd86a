"""A whole dump (or one forum) → parsed forums, in parallel processes, skipping finished ones."""

from __future__ import annotations

import os
from concurrent.futures import as_completed
from pathlib import Path

from stackexchange.catalog import short_name, unknown_forum
from stackexchange.errors import DumpError
from stackexchange.io import remove_stale_temporaries
from stackexchange.parse import (
    DEFAULT_MAX_POSITIVES,
    check_numbers,
    check_output,
    forum_locks,
    is_complete,
    parse_forum_unlocked,
    refuse_output_in_dump,
)
from stackexchange.pool import process_pool
from stackexchange.source import POSTS, forum_host


def find_forums(source: str | os.PathLike) -> dict[str, Path]:
    """Host → source of every forum in ``source`` (one archive/folder/Posts.xml, or a dump folder).

    Example:
        >>> find_forums("dump/")  # doctest: +SKIP
        {'beer.stackexchange.com': PosixPath('dump/beer.stackexchange.com.7z'), ...}
    """
    path = Path(source)
    if not path.exists():
        raise DumpError(f"{path}: no such archive, folder or file")
    if path.is_file() or (path / POSTS).is_file():
        return {forum_host(path): path}
    found = {}
    for entry in sorted(path.iterdir()):
        # per-table archives of a split dump (HOST-Comments.7z, ...) other than HOST-Posts.7z
        # are read alongside it, not as forums
        is_archive = entry.suffix == ".7z" and (
            "-" not in entry.stem or entry.stem.endswith("-Posts")
        )
        if (is_archive and entry.is_file()) or (entry / POSTS).is_file():
            found.setdefault(forum_host(entry), entry)
    if not found:
        raise DumpError(f"{path}: no forum archives (.7z) or forum folders with {POSTS} here")
    return found


def select_forums(found: dict[str, Path], names: list[str] | None) -> dict[str, Path]:
    """The forums of ``found`` named by host or short name; an unknown name is an error."""
    if not names:
        return found
    chosen = {}
    for name in names:
        host = next((h for h in found if name in (h, short_name(h))), None)
        if host is None:
            raise unknown_forum(name, list(found) + [short_name(h) for h in found])
        chosen[host] = found[host]
    return chosen


def parse_dump(
    source: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    forums: list[str] | None = None,
    max_positives: int = DEFAULT_MAX_POSITIVES,
    workers: int | None = None,
    overwrite: bool = False,
    seed: int = 0,
) -> list[Path]:
    """Parse every (chosen) forum of ``source`` into ``out_dir``; return the forum folders.

    Complete forums are skipped (unless ``overwrite``). A source inside ``out_dir``, or
    something other than a parsed forum at ``out_dir/<host>`` (without ``overwrite``), is
    refused before any work. One run at a time writes each forum's folder (a second run of
    one of its forums is refused, see ``stackexchange.parse.forum_locks``); runs of other
    forums may write into ``out_dir`` beside it. ``workers`` processes (default: one
    per core) parse several forums at once, or, when one forum is left, chunks of its
    Posts.xml; ``workers=1`` does everything in this process. A forum that fails does not
    stop the others; the run then raises one DumpError naming how many failed and the first.
    """

    check_numbers(max_positives, seed, workers)
    chosen = select_forums(find_forums(source), forums)
    out = Path(out_dir)
    refuse_output_in_dump(source, out)  # the whole dump: each forum's own is checked below
    for host, path in chosen.items():  # before any work: nothing may be lost
        check_output(path, out, host, overwrite=overwrite)
    with forum_locks(out, chosen):  # the forums' own folders: others may parse beside it
        return _parse_locked(chosen, out, max_positives, workers, overwrite, seed)


def _parse_locked(chosen, out: Path, max_positives, workers, overwrite, seed) -> list[Path]:
    from tqdm.auto import tqdm

    remove_stale_temporaries(out)  # leftovers of a crashed run
    todo = {h: p for h, p in chosen.items() if overwrite or not is_complete(out / h)}
    kwargs = dict(max_positives=max_positives, overwrite=overwrite, seed=seed)
    errors: list[str] = []
    workers = workers or os.cpu_count() or 1
    if len(todo) == 1 or workers <= 1:
        chunk_workers = workers if len(todo) == 1 else 1
        for host, path in tqdm(todo.items(), desc="forums", unit="forum", disable=len(todo) < 2):
            try:
                parse_forum_unlocked(
                    path, out, forum=host, progress=len(todo) == 1, workers=chunk_workers, **kwargs
                )
            except DumpError as error:
                errors.append(str(error))
    elif todo:
        with process_pool(min(workers, len(todo))) as pool:
            futures = {
                # forums already use every worker: no chunk workers inside them
                pool.submit(parse_forum_unlocked, path, out, forum=host, workers=1, **kwargs): host
                for host, path in todo.items()
            }
            for future in tqdm(as_completed(futures), total=len(futures), desc="forums"):
                try:
                    future.result()
                except DumpError as error:
                    errors.append(str(error))
    if errors:
        first = (
            errors[0]
            if len(chosen) == 1
            else f"{len(errors)} of {len(todo)} forums failed; first: {errors[0]}"
        )
        raise DumpError(first)
    return [out / host for host in chosen]
