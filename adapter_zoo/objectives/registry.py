"""The registry of objectives: each builds (A, B, negatives) examples from a corpus, by name.

One literal table, :data:`OBJECTIVES`. The sentence-level objectives of Di Liello et al.
(EMNLP 2022: ``ssp``, ``sp``, ``psd``) pair spans and paragraphs by where they sit in a
document; the generator-free pseudo-queries (``keywords``, ``title``, ``ict``) pair a short
query-like text with the passage it came from.

Example:
    >>> objective_names()
    ['ict', 'keywords', 'psd', 'sp', 'ssp', 'title']
    >>> get_objective("ssp").target
    'adapter_zoo.objectives.ssp:build'
    >>> get_objective("spp")
    Traceback (most recent call last):
    ...
    adapter_zoo.errors.ZooError: unknown objective 'spp'; did you mean sp, ssp? choose one of ict, keywords, psd, sp, ssp, title
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from adapter_zoo.documents import Corpus
from adapter_zoo.errors import ZooError
from adapter_zoo.objectives import ict, keywords, psd, sp, ssp, title
from adapter_zoo.objectives.examples import Draw, ObjectiveExample
from stackexchange.errors import unknown_name
from stackexchange.numbers import MAX_QUESTIONS, check_number


@dataclass(frozen=True)
class ObjectiveSpec:
    """A registered objective.

    Attributes:
        name: what ``--objective`` says.
        summary: one line for ``--help``, the card and the docs.
        build: ``build(corpus, draw, limit)``, the examples in a seeded order.
        needs_titles: it gives examples only from documents with a title.
        needs: what structure it pairs (``sentences``: paragraphs of two sentences or more;
            ``paragraphs``: documents of two paragraphs or more; ``titles``; ``terms``).
        paper: where it comes from.
    """

    name: str
    summary: str
    build: Callable[[Corpus, Draw, int | None], list[ObjectiveExample]]
    needs_titles: bool = False
    needs: str = "sentences"
    paper: str = ""

    @property
    def target(self) -> str:
        """``module:function`` of its builder."""
        return f"{self.build.__module__}:{self.build.__name__}"


_DI_LIELLO = "Di Liello et al., EMNLP 2022"
OBJECTIVES: dict[str, ObjectiveSpec] = {
    "ssp": ObjectiveSpec("ssp", "spans in the same paragraph: 1-3 sentences -> 1-5 others",
                         ssp.build, paper=_DI_LIELLO),
    "sp": ObjectiveSpec("sp", "a span in its paragraph: 1-3 sentences -> the paragraph without them",
                        sp.build, paper=_DI_LIELLO),
    "psd": ObjectiveSpec("psd", "paragraphs in the same document: a paragraph -> another",
                         psd.build, needs="paragraphs", paper=_DI_LIELLO),
    "keywords": ObjectiveSpec("keywords", "3-6 terms sampled by IDF -> their passage",
                              keywords.build, needs="terms", paper="AugTriever (Meng et al.)"),
    "title": ObjectiveSpec("title", "a document's title -> one of its paragraphs", title.build,
                           needs_titles=True, needs="titles", paper="AugTriever (Meng et al.)"),
    "ict": ObjectiveSpec("ict", "a sentence -> its paragraph without it", ict.build,
                         paper="Lee et al., ACL 2019"),
}  # fmt: skip


def objective_names() -> list[str]:
    """The registered objectives' names, sorted."""
    return sorted(OBJECTIVES)


def get_objective(name: str) -> ObjectiveSpec:
    """The objective ``name``.

    Raises:
        ZooError: unknown; the message names the closest names and all the choices.
    """
    spec = OBJECTIVES.get(name)
    if spec is None:
        raise unknown_name("objective", name, objective_names(), ZooError)
    return spec


def build_examples(
    objective: str, corpus: Corpus, *, seed: int = 0, limit: int | None = None
) -> list[ObjectiveExample]:
    """The examples ``objective`` builds from ``corpus``: the same for the same seed on any
    machine, at most ``limit`` of them (drawn in a seeded order over the whole corpus, not
    its first documents).

    Raises:
        ZooError: an unknown objective, a seed or limit out of range.
    """
    spec = get_objective(objective)
    check_number("seed", seed, integer=True, low=0, high=2**32 - 1, error=ZooError)
    if limit is not None:
        check_number("limit", limit, integer=True, low=1, high=MAX_QUESTIONS, error=ZooError)
    return spec.build(corpus, Draw(spec.name, seed), limit)
