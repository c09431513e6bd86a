"""Titles as pseudo-queries (AugTriever's ``title`` kind): a document's title against one
of its paragraphs.

Only documents with a title give examples (a BEIR record's ``title``, an HTML ``<title>``,
a Markdown heading, a thread's question); negatives are paragraphs of other documents (easy,
4; none is hard: every paragraph of a titled document is about its title).

Example:
    >>> from adapter_zoo.documents import Corpus, Document
    >>> corpus = Corpus((Document("a", "Dark beers", (("Stouts taste of roasted barley.",),)),
    ...                  Document("b", None, (("Lagers ferment cold and slowly.",),))), {})
    >>> [(e.anchor, e.positive, e.negatives) for e in build(corpus, Draw("title", 0), None)]
    [('Dark beers', 'Stouts taste of roasted barley.', ('Lagers ferment cold and slowly.',))]
"""

from __future__ import annotations

from adapter_zoo.documents import Corpus
from adapter_zoo.objectives.examples import (
    Draw,
    ObjectiveExample,
    collect,
    example,
    negatives,
    paragraph_text,
)


def build(corpus: Corpus, draw: Draw, limit: int | None) -> list[ObjectiveExample]:
    """Title examples, one per titled document (a paragraph of it drawn), in a seeded order."""
    units = [d for d, document in enumerate(corpus.documents) if document.title]

    def make(d: int):
        document = corpus.documents[d]
        positive = paragraph_text(document.paragraphs[draw.below(len(document.paragraphs))])
        found = negatives(corpus, d, set(range(len(document.paragraphs))), draw,
                          paragraph_text, hard=0, avoid=(document.title, positive))  # fmt: skip
        return example(document.title, positive, found, document.id)

    return collect(draw.shuffled(units), make, limit)
