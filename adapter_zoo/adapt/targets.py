"""The unlabelled texts of a target domain: what ``adapt`` reads, and nothing more.

No labels and no pairs are used: only questions (or candidate texts).

Example:
    >>> texts = target_texts("questions.txt")  # one question per line  # doctest: +SKIP
    >>> texts, about = read_target("parsed/")  # doctest: +SKIP
    >>> about  # doctest: +SKIP
    {'source': 'parsed forums', 'forums': ['ai.stackexchange.com'], 'texts': 604}
"""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.adapt.target_files import benchmark_texts, checked_texts, text_file_texts
from adapter_zoo.errors import ZooError
from stackexchange.lists import BENCHMARK_FILE

DUMP_SUFFIX = ".7z"


def target_texts(target) -> list[str]:
    """The texts of ``target`` (see :func:`read_target`), in their order, blanks dropped.

    Example:
        >>> target_texts(["Which glass for a stout?", "  "])
        ['Which glass for a stout?']
    """
    return read_target(target)[0]


def read_target(target) -> tuple[list[str], dict]:
    """The texts of ``target`` and a description of it for a card (its source, count, no path).

    Args:
        target: a list of strings; a parsed forum folder (``DIR/<host>`` with ``questions/``:
            the titles of its questions outside the evaluation split, never its ``test``
            questions); a parse output folder (all its forums); a raw dump (``.7z`` archive,
            or an extracted folder with ``Posts.xml``: parsed into a temporary folder); a
            benchmark folder (``benchmark.json``: the queries of all its splits); a JSONL
            or TSV file of questions and answers (its questions); or a text file, one
            question or candidate text per line.

    Raises:
        ZooError: no such target, or it holds no text.
    """
    if isinstance(target, list | tuple):
        texts = [str(t).strip() for t in target if str(t).strip()]
        return checked_texts(texts, {"source": "texts"}, "the given list")
    path = Path(str(target)).expanduser()
    if not path.exists():
        raise ZooError(f"{path}: no such target (a parsed forum, a dump, a benchmark or a file)")
    if path.is_file() and path.suffix not in (DUMP_SUFFIX, ".jsonl", ".tsv"):
        return text_file_texts(path)
    if (path / BENCHMARK_FILE).is_file():
        return benchmark_texts(path)
    # a dump or parsed forums: their questions without the evaluation split
    # (looked up per call: tests monkeypatch adapt.threads.read_threads)
    from adapter_zoo.adapt.threads import read_threads

    target = read_threads(path)
    texts = [t.strip() for t in target.texts() if t.strip()]
    about = {k: v for k, v in target.about.items() if k in ("source", "forums")}
    return checked_texts(texts, about, path)
