"""The objectives (:mod:`adapter_zoo.objectives`) in ``adapt``'s own run: which a target's
structure allows, and their examples from the documents of one held-out part only.

A document's part is its thread's (:func:`adapter_zoo.adapt.heldout.assign`), so a decision
document never trains, and negatives are drawn from the same part's documents: no decision
text is ever a training negative either. Where a target has questions, they stay the
anchors and the objectives add up to :data:`PER_QUESTION_PAIR` pairs per question pair, in
equal shares;
where it has only texts, the objectives are the whole signal, up to
:data:`OBJECTIVE_PAIRS` examples each.

Example:
    >>> from adapter_zoo.adapt.threads import read_threads
    >>> target = read_threads(["Stouts are dark beers. They taste of roasted barley.",
    ...                        "Lagers ferment cold and slowly. Pilsner is one of them."])
    >>> usable_objectives(target.documents()[0])
    ['ict', 'keywords', 'sp', 'ssp']
"""

from __future__ import annotations

from adapter_zoo.documents import Corpus
from adapter_zoo.objectives import OBJECTIVES, ObjectiveExample, build_examples, objective_names

# A texts-only target's training examples per objective, at most: adapt's longest run
# (candidate_training.MAX_STEPS steps of candidate_training.BATCH) reads 12,800 pairs, so
# four objectives at this cap are more than it can see, and building them takes seconds.
OBJECTIVE_PAIRS = 4000
# A target with questions: the objectives' pairs in all, at most this many per training pair
# of its threads (unmeasured: an equal share, so the questions stay half the signal).
PER_QUESTION_PAIR = 1.0


def usable_objectives(corpus: Corpus) -> list[str]:
    """The objectives ``corpus``'s structure gives examples for: ``title`` where documents
    have titles, ``psd`` where one has two paragraphs, the sentence-level ones where a
    paragraph has two sentences, ``keywords`` always."""
    documents = corpus.documents
    found = {
        "titles": any(d.title for d in documents),
        "paragraphs": any(len(d.paragraphs) > 1 for d in documents),
        "sentences": any(len(p) > 1 for d in documents for p in d.paragraphs),
        "terms": bool(documents),
    }
    return [name for name in objective_names() if found[OBJECTIVES[name].needs]]


def part_corpus(target, parts: list[str], part: str) -> Corpus:
    """The target's documents whose thread is in ``part``."""
    corpus, threads = target.documents()
    part_of = {t.id: p for t, p in zip(target.threads, parts)}
    documents = tuple(d for d, i in zip(corpus.documents, threads) if part_of.get(i) == part)
    return Corpus(documents, {"source": corpus.about.get("source"), "part": part})


def objective_examples(
    target, parts: list[str], part: str, *, seed: int, limit: int, names=None
) -> dict[str, list[ObjectiveExample]]:
    """Each usable objective's examples (at most ``limit``) from ``part``'s documents; with
    ``names``, those objectives' only."""
    if names is None:
        names = usable_objectives(target.documents()[0])
    corpus = part_corpus(target, parts, part)
    if not corpus.documents:
        return {}
    return {name: build_examples(name, corpus, seed=seed, limit=limit) for name in names}


def structure(target) -> dict:
    """What the card says of the target as documents: documents, paragraphs, sentences,
    titles, and the objectives they allow."""
    corpus = target.documents()[0]
    counts = {k: corpus.about[k] for k in ("documents", "paragraphs", "sentences", "titles")}
    return {**counts, "objectives": usable_objectives(corpus)}
