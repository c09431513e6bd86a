"""Documents from what teams hold: a folder of files, a JSONL corpus, a text file of
passages, a parsed forum, or a list of strings.

* a folder: every ``.txt``, ``.md`` and ``.html`` (``.htm``) file under it, in path order,
  each a document named by its path relative to the folder. Paragraphs are split at blank
  lines (text and Markdown, whose leading ``# heading`` is the title) or at block elements
  (HTML, rendered as :func:`stackexchange.text.html_document` renders a page, its
  ``<title>`` the title);
* a ``.jsonl`` file: one ``{"title", "text"}`` object a line (BEIR's ``corpus.jsonl``: its
  ``_id`` is the document's id, else the line number), paragraphs at blank lines of ``text``;
* a parsed forum or a parse output folder: each thread outside the evaluation split is a
  document, its question title the title, the question's and accepted answer's paragraphs
  (the posts' block elements) its paragraphs; a dump (``.7z`` or a folder with
  ``Posts.xml``) is parsed into a temporary folder first;
* any other file: one passage a line, each a document of one paragraph named by its line
  number;
* a list of strings: each a document, paragraphs at blank lines, named by its position
  (from 1).

Example:
    >>> corpus = read_documents(["Stouts are dark. They taste roasted.\\n\\nPorters came first."])
    >>> corpus.documents[0].paragraphs
    (('Stouts are dark.', 'They taste roasted.'), ('Porters came first.',))
    >>> corpus.about
    {'source': 'texts', 'documents': 1, 'paragraphs': 2, 'sentences': 3, 'titles': 0}
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from adapter_zoo.documents.corpus import Corpus, Document, make_corpus, paragraphs_of
from adapter_zoo.documents.forums import forum_dirs, forum_questions
from adapter_zoo.errors import ZooError
from stackexchange import parse_forum
from stackexchange.jsontext import JSONTextError, loads_text
from stackexchange.parse import STATS_FILE
from stackexchange.text import html_document

FOLDER_SUFFIXES = (".txt", ".md", ".html", ".htm")
_HTML_SUFFIXES = (".html", ".htm")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_HEADING = re.compile(r"#{1,6}[ \t]+(.+?)[ \t#]*")


def read_documents(source) -> Corpus:
    """The :class:`~adapter_zoo.documents.corpus.Corpus` of ``source`` (see the module's
    list of sources).

    Raises:
        ZooError: no such source, an empty one, a binary or non-UTF-8 file, a malformed
            record (one line naming the file and the line).
    """
    if isinstance(source, list | tuple):
        documents = [text_document(str(n), str(t)) for n, t in enumerate(source, start=1)]
        return _checked(make_corpus(documents, {"source": "texts"}), "the given list")
    path = Path(str(source)).expanduser()
    if not path.exists():
        raise ZooError(f"{path}: no such documents (a folder, a .jsonl, a text file or a forum)")
    if path.suffix == ".7z" or (path / "Posts.xml").is_file():
        return _dump(path)
    if path.is_file() and path.suffix == ".jsonl":
        return _checked(_jsonl(path), path)
    if path.is_file():
        documents = [Document(str(n), None, paragraphs_of([line]))
                     for n, line in enumerate(_text(path).splitlines(), start=1)]  # fmt: skip
        return _checked(make_corpus(documents, {"source": "text file", "file": path.name}), path)
    if (path / STATS_FILE).is_file() or any(path.glob(f"*/{STATS_FILE}")):
        return _checked(_forums(forum_dirs(path)), path)
    return _checked(_folder(path), path)


def text_document(identifier: str, text: str) -> Document:
    """A text as a document: paragraphs at its blank lines, no title.

    Example:
        >>> text_document("7", "Dark. Roasted.\\n\\nHoppy.").paragraphs
        (('Dark.', 'Roasted.'), ('Hoppy.',))
    """
    return Document(identifier, None, paragraphs_of(_blocks(text)))


def thread_document(identifier: str, title: str | None, body: str | None,
                    answer: str | None) -> Document:  # fmt: skip
    """A forum thread as a document: its question title the title, the paragraphs of its
    question body and accepted answer (their lines: one block element of the post each).

    Example:
        >>> thread_document("3", "Stout?", "Is it dark?\\nHow dark?", "Very. Black.").paragraphs
        (('Is it dark?',), ('How dark?',), ('Very.', 'Black.'))
    """
    blocks = [*(body or "").splitlines(), *(answer or "").splitlines()]
    return Document(identifier, " ".join((title or "").split()) or None, paragraphs_of(blocks))


def _checked(corpus: Corpus, where) -> Corpus:
    if not corpus.documents:
        raise ZooError(f"{where}: no text to read documents from (empty)")
    return corpus


def _blocks(text: str) -> list[str]:
    return _BLANK_LINE.split(text.replace("\r\n", "\n"))


def _text(path: Path) -> str:
    """The UTF-8 text of ``path``; a binary file (a NUL byte) or other bytes refused."""
    data = path.read_bytes()
    if b"\x00" in data:
        raise ZooError(f"{path}: a binary file, not text (a NUL byte at byte {data.index(0)})")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ZooError(
            f"{path}: not a UTF-8 text file ({error.reason} at byte {error.start})"
        ) from None


def _folder(folder: Path) -> Corpus:
    files = sorted(p for p in folder.rglob("*")
                   if p.is_file() and p.suffix.lower() in FOLDER_SUFFIXES)  # fmt: skip
    if not files:
        raise ZooError(
            f"{folder}: no {', '.join(FOLDER_SUFFIXES)} file to read documents from (empty folder)"
        )
    documents = []
    for file in files:
        text = _text(file)
        if file.suffix.lower() in _HTML_SUFFIXES:
            title, rendered = html_document(text)
            blocks = rendered.splitlines()
        else:
            title, blocks = _markdown_title(_blocks(text)) if file.suffix.lower() == ".md" else (
                None, _blocks(text))  # fmt: skip
        documents.append(
            Document(file.relative_to(folder).as_posix(), title, paragraphs_of(blocks))
        )
    return make_corpus(documents, {"source": "folder", "files": len(files)})


def _markdown_title(blocks: list[str]) -> tuple[str | None, list[str]]:
    """A Markdown file's leading ``# heading`` as its title, the rest as its blocks."""
    first = blocks[0].lstrip("\n").split("\n", 1) if blocks else [""]
    match = _HEADING.fullmatch(first[0].strip())
    if not match:
        return None, blocks
    return match.group(1).strip(), [first[1] if len(first) > 1 else "", *blocks[1:]]


def json_objects(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of each non-blank line of a JSONL file ``path``.

    Raises:
        ZooError: a line that is not valid JSON or not an object (naming the file and line).

    Example:
        >>> list(json_objects(Path("a.jsonl"), ['{"text": "x"}', "", '{"text": "y"}']))
        [(1, {'text': 'x'}), (3, {'text': 'y'})]
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = loads_text(line)  # deep nesting and lone surrogates too, not only syntax
        except JSONTextError as error:
            raise ZooError(f"{path}, line {number}: not valid JSON ({error})") from None
        if not isinstance(record, dict):
            raise ZooError(f"{path}, line {number}: expected an object, got {record!r:.40}")
        yield number, record


def _jsonl(path: Path) -> Corpus:
    documents = []
    for number, record in json_objects(path, _text(path).splitlines()):
        if "text" not in record:
            raise ZooError(f"{path}, line {number}: no 'text' field")
        for key in ("text", "title", "_id"):
            if record.get(key) is not None and not isinstance(record[key], str):
                raise ZooError(f"{path}, line {number}: {key!r} must be a string")
        title = " ".join((record.get("title") or "").split()) or None
        identifier = record.get("_id") or str(number)
        documents.append(Document(identifier, title, paragraphs_of(_blocks(record["text"] or ""))))
    return make_corpus(documents, {"source": "jsonl", "file": path.name})


def _forums(forums: list[Path], source: str = "parsed forums") -> Corpus:
    """Each thread outside the evaluation split a document (question and accepted answer)."""
    documents = []
    for forum in forums:
        prefix = f"{forum.name}/" if len(forums) > 1 else ""
        for rows in forum_questions(forum, ["id", "title", "body", "accepted_answer"]):
            for i, title, body, answer in zip(*rows.values()):
                documents.append(thread_document(f"{prefix}{i}", title, body, answer))
    return make_corpus(documents, {"source": source, "forums": [f.name for f in forums]})


def _dump(path: Path) -> Corpus:
    with tempfile.TemporaryDirectory(prefix="adapter-zoo-documents-") as tmp:
        forum = parse_forum(path, tmp)
        return _checked(_forums([forum], "dump"), path)
