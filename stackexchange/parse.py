"""``parse_forum``: one forum's dump → pair datasets, questions and stats (CONTRIBUTING.md layout)."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from stackexchange.errors import DumpError
from stackexchange.io import (
    atomic_directory,
    atomic_write_json,
    output_lock,
    refuse_input_inside_output,
)
from stackexchange.jsontext import read_json_object
from stackexchange.numbers import MAX_PROCESSES, MAX_QUESTIONS, check_number
from stackexchange.paths import (
    check_folder_path,
    check_output_folder,
    refuse_output_inside_input,
)
from stackexchange.source import POST_LINKS, POSTS, forum_host, open_forum

DEFAULT_MAX_POSITIVES = 100_000  # MultiCQA's cap on positives per forum
FORMAT_VERSION = 1
STATS_FILE = "stats.json"  # written last: its presence marks a finished parse
MAX_WORKERS = 8


def is_complete(forum_dir: str | os.PathLike) -> bool:
    """Whether ``forum_dir`` is a finished parse (folders only appear whole, stats.json last)."""
    path = Path(forum_dir)
    return (path / STATS_FILE).is_file() and (path / "questions").is_dir()


def check_numbers(max_positives, seed, workers) -> None:
    """The numeric keywords of a parse, checked as ``parse --max-positives/--seed/--workers``
    are (:mod:`stackexchange.numbers`), before any work.

    Raises:
        DumpError: one line naming the keyword and its allowed range.
    """
    whole = dict(integer=True, error=DumpError)
    check_number("max_positives", max_positives, low=1, high=MAX_QUESTIONS, **whole)
    check_number("seed", seed, low=0, high=2**32 - 1, **whole)
    if workers is not None:
        check_number("workers", workers, low=1, high=MAX_PROCESSES, **whole)


def check_output(source, out_dir, host: str, *, overwrite: bool = False) -> None:
    """Refuse, before any work, a parse that could lose data.

    ``source`` inside (or equal to) ``out_dir`` is refused even with ``overwrite``: writing
    the output could replace the raw dump; so is ``out_dir`` inside a ``source`` folder
    (see :func:`refuse_output_in_dump`). ``out_dir`` and the folders above it must be
    folders where they exist, and ``out_dir/<host>`` must be writable there
    (:func:`stackexchange.paths.check_output_folder`); without ``overwrite`` it must be
    free, empty or a forum the project parsed (``stats.json`` and ``questions/``).

    Raises:
        DumpError: one line naming the source or the folder in the way.
    """
    # out_dir is written into, never replaced: a file there is no --overwrite's business
    check_folder_path(out_dir, error=DumpError)
    refuse_input_inside_output([source], out_dir, DumpError)
    refuse_output_in_dump(source, out_dir)
    check_output_folder(
        Path(out_dir) / host, ours=is_complete, overwrite=overwrite, what="a parsed forum",
        error=DumpError,
    )  # fmt: skip


def refuse_output_in_dump(source, out_dir) -> None:
    """Refuse an ``out_dir`` inside the dump folder or forum folder ``source`` it is parsed
    from: the project never writes into its input, and the parsed forums would go with the
    dump when it is replaced by a newer one or removed.

    Raises:
        DumpError: ``OUT: output inside the input SOURCE; choose another output``.
    """
    refuse_output_inside_input([source], out_dir, DumpError)


@contextlib.contextmanager
def forum_locks(out_dir: str | os.PathLike, hosts):
    """Hold the lock (``stackexchange.io.output_lock``) of each forum folder
    ``out_dir/<host>`` a run writes: runs parsing different forums into one output go on
    side by side (a Ray recipe parsing forums in parallel), a second run of the same forum
    is refused in one line naming its folder."""
    with contextlib.ExitStack() as stack:
        for host in sorted(set(hosts)):  # one order: two runs never wait on each other
            stack.enter_context(output_lock(Path(out_dir) / host, error=DumpError))
        yield


def parse_forum(
    source: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    forum: str | None = None,
    max_positives: int = DEFAULT_MAX_POSITIVES,
    overwrite: bool = False,
    seed: int = 0,
    progress: bool = False,
    workers: int | None = None,
) -> Path:
    """Parse one forum's dump into ``out_dir/<host>`` and return that folder.

    Args:
        source: the site's ``.7z`` archive, a folder of its extracted XML, or a bare Posts.xml.
        out_dir: parent folder of the forum folder.
        forum: host name; by default taken from the archive or folder name.
        max_positives: at most this many pairs per pair kind (a seeded uniform sample).
        overwrite: re-parse a forum already complete in ``out_dir`` (else it is returned as
            is), and replace whatever else is at ``out_dir/<host>`` (else that is refused).
        seed: seed of the sample taken when a kind has more than ``max_positives`` pairs.
        progress: show a tqdm bar over the bytes of Posts.xml.
        workers: processes parsing chunks of Posts.xml in parallel; None picks one per
            core (at most 8) for a Posts.xml over 128 MB, else 1 (this process).

    Raises:
        DumpError: a missing, corrupt or truncated source, malformed XML, an empty forum; a
            source inside ``out_dir``; something other than a parsed forum at
            ``out_dir/<host>`` (without ``overwrite``).

    Example:
        >>> forum_dir = parse_forum("beer.stackexchange.com.7z", "parsed")  # doctest: +SKIP
        >>> forum_dir.name  # doctest: +SKIP
        'beer.stackexchange.com'
    """
    check_numbers(max_positives, seed, workers)
    host = forum_host(source, forum)
    check_output(source, out_dir, host, overwrite=overwrite)
    with forum_locks(out_dir, [host]):  # one run at a time writes this forum's folder
        return parse_forum_unlocked(
            source,
            out_dir,
            forum=forum,
            max_positives=max_positives,
            overwrite=overwrite,
            seed=seed,
            progress=progress,
            workers=workers,
        )


def parse_forum_unlocked(
    source: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    forum: str | None = None,
    max_positives: int = DEFAULT_MAX_POSITIVES,
    overwrite: bool = False,
    seed: int = 0,
    progress: bool = False,
    workers: int | None = None,
) -> Path:
    """:func:`parse_forum` for a caller that holds the forum folder's lock (``parse_dump``,
    whose worker processes parse the forums it locked, see :func:`forum_locks`)."""
    if max_positives < 1:
        raise DumpError(f"max_positives must be at least 1, not {max_positives}")
    host = forum_host(source, forum)
    final = Path(out_dir) / host
    check_output(source, out_dir, host, overwrite=overwrite)
    if is_complete(final) and not overwrite:
        return final
    with atomic_directory(final, overwrite=True) as tmp:
        work = tmp / ".work"
        work.mkdir()
        with open_forum(source, work, forum) as files:
            stats = _parse_files(files, tmp, work, max_positives, seed, progress, workers)
        shutil.rmtree(work)
        atomic_write_json(tmp / STATS_FILE, stats)
    return final


def _parse_files(files, tmp: Path, work: Path, max_positives, seed, progress, workers):
    from stackexchange import assemble, chunks, posts

    label = files.source_file if files.source_file.endswith(".xml") else files.source_file + ":"
    posts_name = label + POSTS if label.endswith(":") else label
    links, repeated = posts.read_duplicate_links(files.post_links, label + POST_LINKS)
    if workers is None:  # worker processes pay off only on large files
        big = files.posts.stat().st_size > 2 * chunks.CHUNK_BYTES
        workers = min(MAX_WORKERS, os.cpu_count() or 1) if big else 1
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=files.posts.stat().st_size, unit="B", unit_scale=True, desc=files.host)
    try:
        counts, question_files, answer_files = posts.stream_posts(
            files.posts, posts_name, links, work, bar, workers
        )
    finally:
        if bar is not None:
            bar.close()
    dropped = counts.dropped
    if repeated:
        dropped["duplicate_link_repeated"] += repeated
    pair_files, pair_counts, question_splits = assemble.build_pairs(
        question_files, answer_files, links, files.host, work, tmp, dropped
    )
    split_counts = {
        kind: assemble.split_and_cap(path, max_positives, seed, tmp / kind)
        for kind, path in pair_files.items()
    }
    split_counts["questions"] = question_splits
    return {
        "forum": files.host,
        "questions": counts.questions,
        "answers": counts.answers,
        "pairs": pair_counts,
        "dropped": dict(sorted(dropped.items())),
        "source": {"file": files.source_file, "dump_date": files.dump_date},
        "splits": split_counts,
        "max_positives": max_positives,
        "seed": seed,
        "min_chars": {"query": assemble.MIN_QUERY_CHARS, "positive": assemble.MIN_POSITIVE_CHARS},
        "duplicate_links": len(links) + repeated,
        "format_version": FORMAT_VERSION,
    }


def read_stats(forum_dir: str | os.PathLike) -> dict:
    """The ``stats.json`` of a parsed forum folder.

    Raises:
        DumpError: no stats.json (not a parsed forum), or one that is not a JSON object
            (one line naming the file, :func:`stackexchange.jsontext.read_json_object`).
    """
    path = Path(forum_dir) / STATS_FILE
    try:
        return read_json_object(path, DumpError, "a parsed forum's stats")
    except FileNotFoundError:
        raise DumpError(f"{forum_dir}: not a parsed forum (no stats.json)") from None
