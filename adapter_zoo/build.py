"""Building a forum's zoo entry from its dump: what ``adapter_zoo.load("travel")`` does when
neither the local zoo nor the Hub has the name.

The forum's dump is downloaded (:func:`stackexchange.download.download_dump`: archive.org's
``stackexchange`` collection, or ``$ADAPTER_ZOO_DUMP_MIRROR``) or read from a file you give,
parsed, and the zoo's default bi-encoder adapter is trained on it (MiniLM-L6, the quickstart's
and quality benchmark's recipe: :data:`BUILD_STEPS` steps, dev MAP every
:data:`BUILD_EVAL_STEPS`, the best state kept). The entry is saved in the local zoo under the
forum's short name, so the next ``load`` reads it from there.

Example:
    >>> from adapter_zoo.build import build_entry
    >>> build_entry("travel")  # doctest: +SKIP
    PosixPath('.../adapter-zoo/travel')
    >>> build_entry("beer", dump="beer.stackexchange.com.7z")  # a dump you already have
    ... # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import uuid
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.precision import training_precision
from adapter_zoo.ranker.model import resolve_base_model
from adapter_zoo.training import TrainingConfig, train
from adapter_zoo.training.checkpoint import checkpoint_dir, remove_run_folder
from adapter_zoo.zoo.store import (
    CARD_FILE,
    README_FILE,
    check_zoo_writable,
    entry_lock,
    entry_path,
    read_card,
    render_readme,
    zoo_home,
)
from stackexchange.catalog import Forum, find_forum
from stackexchange.download import (
    MIRROR_ENV,
    OFFLINE_ENV,
    NoNetwork,
    archive_name,
    download_dump,
    dump_mirror,
)
from stackexchange.errors import DumpError, first_line
from stackexchange.io import atomic_write_text, sha256_file
from stackexchange.numbers import MAX_STEPS, check_number
from stackexchange.parse import parse_forum
from stackexchange.paths import check_path_text

logger = logging.getLogger(__name__)

BUILD_BASE = DEFAULT_BASE
# recipes/quickstart.py's BI_STEPS and benchmarks/studies/quality.py's ZOO_STEPS: dev MAP stops
# rising by step 30-40 at every learning rate of the quality benchmark's lr table.
BUILD_STEPS = 40
BUILD_EVAL_STEPS = 10
BUILD_TRAIN_LENGTH = 128  # training truncates (twice as fast); the entry picks its own on dev
DUMPS_FOLDER = ".dumps"  # in the zoo home: a cut-short download waits there to be resumed
# The work folder (the parse) is ".<name>.tmp-build-<pid>-<hex>" in the zoo home: hidden, never
# an entry, and a later build of the name removes it when its process died.
BUILD_MARK = ".tmp-build-"
BUILT_BY = "adapter_zoo.build.build_entry"  # the card's source.built_by
# Rough costs on 2 CPU cores, for the estimate a build prints before it starts: rounded up
# from the recorded runs (benchmarks/results/quality.json, beer's adapter with its dev
# evaluations; parse_throughput.json, the parser), with the archive's unpacking on top.
STEP_SECONDS = 2.5
DEV_LIST_SECONDS = 0.4  # per dev list and evaluation
DEV_LISTS_MAX = 200  # TrainingConfig.dev_queries
PARSE_QUESTIONS_PER_SECOND = 2_000


def estimate_seconds(forum: Forum, steps: int = BUILD_STEPS) -> float:
    """Rough seconds to parse ``forum`` and train its adapter on 2 CPU cores (no download).

    Example:
        >>> round(estimate_seconds(find_forum("beer")))
        190
    """
    # dev lists: the dev split is a tenth of the questions; about half have an accepted answer
    dev_lists = min(DEV_LISTS_MAX, forum.questions // 20)
    evaluations = 1 + math.ceil(steps / BUILD_EVAL_STEPS)
    training = steps * STEP_SECONDS + evaluations * dev_lists * DEV_LIST_SECONDS
    return forum.questions / PARSE_QUESTIONS_PER_SECOND + training


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(10, round(seconds, -1)):.0f} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60):.0f} min"
    return f"{seconds / 3600:.1f} h"


def build_entry(
    forum: str | Forum,
    *,
    dump: str | os.PathLike | None = None,
    name: str | None = None,
    base_model: str = BUILD_BASE,
    steps: int = BUILD_STEPS,
    overwrite: bool = False,
    progress: bool = True,
    precision: str = "auto",
) -> Path:
    """Build ``forum``'s default bi-encoder adapter from its dump into the local zoo.

    Logs one line (INFO) on what it does and roughly how long it takes, and shows progress
    bars while downloading, parsing and training.

    Args:
        forum: a forum of the site catalog, by short name or host.
        dump: the forum's ``.7z`` archive (or extracted folder) you already have; None
            downloads it from the mirror (``$ADAPTER_ZOO_DUMP_MIRROR``, default archive.org)
            into ``<zoo home>/.dumps`` and removes it once the entry is built.
        name: the entry's name (default: the forum's short name).
        base_model: the base the adapter is trained on.
        steps: training steps (the zoo's default, :data:`BUILD_STEPS`; fewer is quicker).
        overwrite: replace an existing entry of that name.
        progress: show progress bars.
        precision: ``auto``, ``fp32`` or ``bf16``: what the frozen base trains in
            (:func:`adapter_zoo.precision.training_precision`).

    Returns:
        The entry folder.

    Raises:
        ZooError: not a catalog forum, the entry exists (without ``overwrite``), no network
            (saying what to do instead), or the dump is refused (its size or checksum).

    Example:
        >>> build_entry("travel")  # doctest: +SKIP
        PosixPath('.../adapter-zoo/travel')
    """

    check_number("build steps", steps, integer=True, low=1, high=MAX_STEPS, error=ZooError)
    training_precision(precision, trains_base=False)  # a refused bf16 before the download
    forum = forum if isinstance(forum, Forum) else _forum(forum)
    name = forum.short_name if name is None else name
    final = entry_path(name)
    # held until the entry is written: a second build (or train) of the name is refused
    with entry_lock(final):
        if final.exists() and not overwrite:
            earlier = _earlier_build(final, forum, dump, base_model, steps, precision)
            if earlier is None:
                raise ZooError(f"zoo entry {name!r} already exists at {final}; pass overwrite=True")
            return _finish_earlier(final, earlier, forum, dump, progress)
        return _build(forum, dump, name, base_model, steps, overwrite, progress, precision)


def _build(forum, dump, name, base_model, steps, overwrite, progress, precision) -> Path:
    _check_before_work(name, dump, base_model)
    logger.info(_plan(forum, name, base_model, steps, dump))
    home = zoo_home()
    home.mkdir(parents=True, exist_ok=True)
    _remove_dead_builds(home, name)
    work = home / f".{name}{BUILD_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    work.mkdir()
    try:
        if dump is None:
            source = _download(forum, home / DUMPS_FOLDER, progress)
            archive, record = source.path, _source_record(source)
        else:
            archive, record = Path(dump).expanduser(), _local_record(Path(dump).expanduser())
        path = _parse_and_train(
            forum, archive, work, name, base_model, steps, overwrite, progress, precision
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _record_source(path, record)
    if dump is None:
        archive.unlink(missing_ok=True)  # the entry is what is kept; the dump can be large
    return path


def _check_before_work(name: str, dump, base_model: str) -> None:
    """What can fail after the download, the parse or the training is checked before them:
    the zoo home and its checkpoints can be written, the dump given exists, the base's
    config.json can be read (not its weights).

    Raises:
        ZooError: one line naming the folder, file or base and what to do.
    """

    check_zoo_writable(checkpoint_dir(name).parent)
    if dump is not None:
        path = check_path_text(dump, ZooError).expanduser()
        if not os.path.exists(path):
            raise ZooError(f"{path}: no such archive, folder or file; give the forum's .7z dump")
    _check_base(base_model)


def _check_base(base_model: str) -> None:
    """Refuse a base whose config.json cannot be read (a missing folder, a name neither
    cached nor reachable), before anything is downloaded or parsed."""
    # transformers on first use: the CLI starts without it
    from transformers import AutoConfig

    try:
        AutoConfig.from_pretrained(resolve_base_model(base_model), trust_remote_code=False)
    except (OSError, ValueError) as error:
        reason = first_line(error)
        raise ZooError(
            f"base model {base_model!r}: cannot read its config.json ({reason}); give a model "
            "folder or a Hugging Face name that is cached or reachable"
        ) from None


def _remove_dead_builds(home: Path, name: str) -> None:
    """Remove the work folders of builds of ``name`` whose process is gone (killed before
    its clean-up ran); a live build's folder is left alone."""
    for folder in home.glob(f".{name}{BUILD_MARK}*"):
        pid = folder.name[len(f".{name}{BUILD_MARK}") :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _forum(name: str) -> Forum:
    try:
        return find_forum(name)
    except DumpError as error:
        raise ZooError(f"cannot build {name!r}: {error}") from None


def _plan(forum: Forum, name: str, base_model: str, steps: int, dump) -> str:
    if dump is None:
        size = f"{forum.archive_bytes / 1e6:,.0f} MB" if forum.archive_bytes else "its dump"
        fetch = f"downloading {size} from {dump_mirror()}"
    else:
        fetch = f"reading {dump}"
    return (
        f"building zoo entry {name!r} from {forum.host}'s dump: {fetch}, parsing "
        f"{forum.questions:,} questions, training a bi-encoder adapter on {base_model} "
        f"({steps} steps); roughly {_duration(estimate_seconds(forum, steps))} on 2 CPU cores "
        "besides the download"
    )


def _download(forum: Forum, folder: Path, progress: bool):
    try:
        return download_dump(forum, folder, progress=progress)
    except NoNetwork as error:
        other = f"set {MIRROR_ENV} to a mirror you can reach"
        if error.switch == OFFLINE_ENV:  # it stops every download, a mirror's too
            other = f"unset {OFFLINE_ENV}"
        raise ZooError(
            f"{error}; build from a dump you have (`adapter-zoo build {forum.short_name} "
            f"--dump {archive_name(forum)}`, or adapter-zoo parse + train) or {other}"
        ) from None
    except DumpError as error:
        raise ZooError(f"cannot build {forum.short_name!r}: {error}") from None


def _earlier_build(final: Path, forum: Forum, dump, base_model, steps, precision) -> dict | None:
    """The card of the entry at ``final`` when an earlier build of the same forum, dump
    and settings wrote it (one killed before it ended: its card may lack its ``source``
    yet), else None."""
    try:
        card = read_card(final)
    except (ZooError, OSError):
        return None
    training = card.get("training") or {}
    asked = {"base_model": base_model, "max_steps": steps,
             "precision": training_precision(precision, trains_base=False)}  # fmt: skip
    if card.get("forums") != [forum.host] or any(training.get(k) != v for k, v in asked.items()):
        return None
    source = card.get("source")
    if source is None:  # trained by a build (its work folder), killed before the record
        return card if BUILD_MARK in Path(str(training.get("data"))).parent.name else None
    if not isinstance(source, dict) or source.get("built_by") != BUILT_BY:
        return None
    if dump is None:
        return card if str(source.get("dump", "")).endswith("/" + archive_name(forum)) else None
    return card if source.get("dump") == str(Path(dump).expanduser().resolve()) else None


def _finish_earlier(final: Path, card: dict, forum: Forum, dump, progress: bool) -> Path:
    """The entry an earlier build wrote, its source recorded if that build was killed
    before it could record it; nothing is trained again."""
    logger.info("zoo entry %r at %s is this build's, written by an earlier run; nothing to "
                "train (--overwrite builds it again)", final.name, final)  # fmt: skip
    _remove_dead_builds(zoo_home(), final.name)  # what that run had left to remove
    remove_run_folder(checkpoint_dir(final.name))
    if "source" not in card:
        if dump is None:
            source = _download(forum, zoo_home() / DUMPS_FOLDER, progress)
            _record_source(final, _source_record(source))
            source.path.unlink(missing_ok=True)
        else:
            _record_source(final, _local_record(Path(dump).expanduser()))
    return final


def _source_record(dump) -> dict:
    return {"dump": dump.url, "size": dump.size, "sha256": dump.sha256, "checked": dump.checked}


def _local_record(dump: Path) -> dict:
    record = {"dump": str(dump.resolve())}
    if dump.is_file():
        record.update(size=dump.stat().st_size, sha256=sha256_file(dump))
    return record


def _parse_and_train(
    forum, archive, work, name, base_model, steps, overwrite, progress, precision
) -> Path:
    try:
        parse_forum(archive, work / "parsed", forum=forum.host, progress=progress)
    except DumpError as error:
        raise ZooError(f"cannot build {forum.short_name!r}: {error}") from None
    config = TrainingConfig(
        mode="adapter",
        data=str(work / "parsed"),
        forums=(forum.host,),
        name=name,
        base_model=base_model,
        encoder="bi",
        max_steps=steps,
        eval_steps=min(BUILD_EVAL_STEPS, steps),
        max_length=BUILD_TRAIN_LENGTH,
        precision=precision,
        overwrite=overwrite,
        restart=True,  # a checkpoint of an earlier, crashed build read another parse folder
    )
    return train(config)


def _record_source(path: Path, record: dict) -> None:
    """Add where the entry's data came from to its card (``card.json`` and ``README.md``
    are not hashed, so the entry stays verifiable)."""

    card = read_card(path)
    card["source"] = {**record, "built_by": BUILT_BY}
    atomic_write_text(path / CARD_FILE, json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(path / README_FILE, render_readme(card))
