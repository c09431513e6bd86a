"""A corpus of documents with the structure people give them: documents, paragraphs,
sentences.

Example:
    >>> doc = Document("1", "Stouts", (("Stouts are dark.", "They taste roasted."),))
    >>> corpus = make_corpus([doc], {"source": "texts"})
    >>> corpus.about
    {'source': 'texts', 'documents': 1, 'paragraphs': 1, 'sentences': 2, 'titles': 1}
    >>> doc.text
    'Stouts are dark. They taste roasted.'
"""

from __future__ import annotations

from dataclasses import dataclass

from adapter_zoo.documents.sentences import split_sentences


@dataclass(frozen=True)
class Document:
    """One document of a corpus.

    Attributes:
        id: what names it in its source: a BEIR record's ``_id``, a file's path relative to
            the folder read, a text file's line number, a forum thread's question id.
        title: its title (a record's ``title``, an HTML ``<title>``, a Markdown heading, a
            thread's question title), or None.
        paragraphs: each paragraph as its sentences, in order; none is empty.
    """

    id: str
    title: str | None
    paragraphs: tuple[tuple[str, ...], ...]

    @property
    def text(self) -> str:
        """The document's paragraphs, each its sentences joined by a space, a line apart."""
        return "\n".join(" ".join(paragraph) for paragraph in self.paragraphs)


@dataclass(frozen=True)
class Corpus:
    """The documents read from one source, and what the card says about them.

    Attributes:
        documents: the documents, in the source's order; none without a sentence.
        about: ``source`` (``folder``, ``jsonl``, ``text file``, ``parsed forums``, ``dump``,
            ``texts``), ``file`` for a file read (its name, never its path), and the counts
            found: ``documents``, ``paragraphs``, ``sentences``, ``titles``.
    """

    documents: tuple[Document, ...]
    about: dict


def paragraphs_of(blocks) -> tuple[tuple[str, ...], ...]:
    """Each non-blank block of text as one paragraph of its sentences.

    Example:
        >>> paragraphs_of(["Dark. Roasted.", "  ", "Hoppy."])
        (('Dark.', 'Roasted.'), ('Hoppy.',))
    """
    paragraphs = []
    for block in blocks:
        sentences = tuple(split_sentences(block))
        if sentences:
            paragraphs.append(sentences)
    return tuple(paragraphs)


def make_corpus(documents, about: dict) -> Corpus:
    """A :class:`Corpus` of ``documents`` (those without a paragraph left out), with the
    structure found counted into ``about``."""
    kept = tuple(d for d in documents if d.paragraphs)
    counts = {
        "documents": len(kept),
        "paragraphs": sum(len(d.paragraphs) for d in kept),
        "sentences": sum(len(p) for d in kept for p in d.paragraphs),
        "titles": sum(1 for d in kept if d.title),
    }
    return Corpus(kept, {**about, **counts})
