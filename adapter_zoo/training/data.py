"""Training data from a parse output folder: forums, pairs, negatives and minibatches."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adapter_zoo.errors import ZooError
from adapter_zoo.losses import get_loss
from stackexchange.catalog import forum_set
from stackexchange.lists import BM25Neighbours
from stackexchange.parse import STATS_FILE
from stackexchange.text import question_text

CATALOG_SETS = ("all", "balanced", "largest")


def available_forums(data: Path) -> list[str]:
    """Forum folders (complete ones hold ``stats.json``) in a parse output folder."""
    if not data.is_dir():
        raise ZooError(f"{data}: training data folder not found (run adapter-zoo parse first)")
    return sorted(p.name for p in data.iterdir() if (p / STATS_FILE).is_file())


def _catalog_set(name: str, data: Path, present: list[str]) -> list[str]:
    if name == "all":
        return present
    members = list(forum_set(name))
    chosen = [host for host in members if host in present]
    if not chosen:
        raise ZooError(f"{data}: none of the {len(members)} forums of set {name!r} is parsed here")
    return chosen


def resolve_forums(data: str | Path, names: tuple[str, ...]) -> list[str]:
    """Forum folder names in ``data`` for forum names or catalog sets, in the given order.

    Example:
        >>> resolve_forums("parsed", ("beer",))  # doctest: +SKIP
        ['beer.stackexchange.com']
    """
    data = Path(data)
    present = available_forums(data)
    hosts: list[str] = []
    for name in names:
        if name in CATALOG_SETS:
            hosts += _catalog_set(name, data, present)
            continue
        candidates = [name, f"{name}.stackexchange.com", f"{name}.com"]
        match = next((c for c in candidates if c in present), None)
        if match is None:
            known = ", ".join(present) or "none"
            raise ZooError(f"{data}: no parsed forum {name!r} (parsed forums: {known})")
        hosts.append(match)
    return list(dict.fromkeys(hosts))


# Negatives drawn from the HARD_NEGATIVE_POOL most BM25-similar other queries' positives.
HARD_NEGATIVE_POOL = 20
# Not a parsed folder: the title_answer pairs with the question's title and body as the query,
# which is how LAS-style answer-selection sets pose their queries.
QUESTION_ANSWER = "question_answer"


@dataclass
class PairTable:
    """Positive (query, candidate) pairs of one forum and one pair kind, one split.

    ``neighbours`` (rows, up to ``HARD_NEGATIVE_POOL``) holds, per row, the other rows whose
    queries are most BM25-similar, best first; hard negatives are drawn from their positives.
    ``negatives``: a hard negative of each row's own (a pair table with a ``negative``
    column: the objectives' pairs), ``""`` where the row has none; a bi-encoder trains on it
    instead of a mined one.
    """

    forum: str
    pair_kind: str
    queries: list[str]
    positives: list[str]
    neighbours: np.ndarray | None = None
    negatives: list[str] | None = None

    def __len__(self) -> int:
        return len(self.queries)


def read_split(folder: Path, split: str):
    """One split of a saved DatasetDict; None when the split has no rows.

    Read split by split because datasets 5 saves an empty split without any shard and
    then cannot load the whole DatasetDict back.
    """
    # stackexchange.store loads pyarrow: importing this module stays light
    from stackexchange.store import read_dataset, read_split_names

    names = read_split_names(folder, ZooError)
    if split not in names:
        raise ZooError(f"{folder}: no split {split!r} (has {', '.join(names)})")
    if not any((folder / split).glob("*.arrow")):
        return None
    return read_dataset(folder / split, ZooError)


def question_texts(forum: Path, ids: list[int]) -> list[str]:
    """Title and body (``stackexchange.question_text``) of the questions ``ids`` of a forum.

    The questions table is read in batches and only the asked-for rows are kept, so memory
    follows the pairs trained on, not the forum's size.
    """
    # stackexchange.store loads pyarrow: importing this module stays light
    from stackexchange.store import read_dataset

    questions = read_dataset(forum / "questions", ZooError)
    wanted, found = set(ids), {}
    for batch in questions.select_columns(["id", "title", "body"]).iter(batch_size=10_000):
        for i, title, body in zip(batch["id"], batch["title"], batch["body"]):
            if i in wanted:
                found[i] = question_text(title, body)
    missing = wanted - found.keys()
    if missing:
        raise ZooError(f"{forum / 'questions'}: no question with id {min(missing)}")
    return [found[i] for i in ids]


def load_pairs(data: str | Path, host: str, kinds: tuple[str, ...], split: str) -> list[PairTable]:
    """The ``split`` pairs of each kind of forum ``host`` (kinds without pairs are skipped)."""
    tables = []
    for kind in kinds:
        folder = "title_answer" if kind == QUESTION_ANSWER else kind
        rows = read_split(Path(data) / host / folder, split)
        if rows is None or not len(rows):
            continue
        queries = list(rows["query"])
        if kind == QUESTION_ANSWER:
            queries = question_texts(Path(data) / host, list(rows["query_id"]))
        negatives = list(rows["negative"]) if "negative" in rows.column_names else None
        tables.append(PairTable(host, kind, queries, list(rows["positive"]), negatives=negatives))
    return tables


def bm25_neighbours(queries: list[str], pool: int = HARD_NEGATIVE_POOL) -> np.ndarray:
    """Per query, the indices of the ``pool`` most BM25-similar other queries, best first.

    Example:
        >>> queries = ["stout or porter", "porter history", "hop varieties", "new hop varieties"]
        >>> bm25_neighbours(queries, 1)
        array([[1],
               [0],
               [3],
               [2]])
    """
    # bm25s on first use: importing this module stays light
    import bm25s

    n = len(queries)
    width = min(pool, n - 1)
    if width < 1:
        return np.zeros((n, 0), dtype=np.int64)
    tokens = bm25s.tokenize(list(queries), stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    found, _ = retriever.retrieve(tokens, k=width + 1, show_progress=False, n_threads=1)
    rows = [[j for j in row if j != i][:width] for i, row in enumerate(found.tolist())]
    return np.asarray(rows, dtype=np.int64)


# A positive the base ranks nearly as close to a query as its own answer is often another
# answer to it (a false negative): mined negatives are kept only below this share of the
# query's similarity to its own positive, NV-Retriever's TopK-PercPos filter, the best of those
# it compared (Moreira et al., 2024: 95%).
FALSE_NEGATIVE_MARGIN = 0.95
_MINING_ROWS = 1024  # queries scored against every positive at once (a 1024 x n float block)


def embedding_neighbours(
    queries: list[str], positives: list[str], embed, pool: int = HARD_NEGATIVE_POOL
) -> np.ndarray:
    """Per query, the indices of the ``pool`` positives the embeddings rank nearest to it,
    best first: never its own positive or a copy of its text, and only those below
    :data:`FALSE_NEGATIVE_MARGIN` of the query's similarity to its own positive (a query
    with none below takes its least similar other positive; a row short of ``pool`` repeats
    its own).

    Args:
        embed: texts -> unit-length float32 rows (the base model's encoder).

    Example:
        >>> import numpy as np
        >>> def embed(texts):  # a toy embedding: a text's first letter
        ...     rows = np.array([[t[0] == c for c in "abc"] for t in texts], np.float32)
        ...     return rows / np.linalg.norm(rows, axis=1, keepdims=True)
        >>> embedding_neighbours(["a?", "b?", "c?"], ["a.", "b.", "a,"], embed, pool=1)
        array([[1],
               [0],
               [0]])
    """
    n = len(queries)
    width = min(pool, n - 1)
    if width < 1:
        return np.zeros((n, 0), dtype=np.int64)
    distinct = list(dict.fromkeys([*queries, *positives]))
    vectors = embed(distinct)
    row = {text: i for i, text in enumerate(distinct)}
    q = vectors[[row[t] for t in queries]]
    p = vectors[[row[t] for t in positives]]
    same_text = np.asarray([row[t] for t in positives])
    out = np.empty((n, width), dtype=np.int64)
    for start in range(0, n, _MINING_ROWS):
        rows = np.arange(start, min(start + _MINING_ROWS, n))
        sims = q[rows] @ p.T
        own = sims[np.arange(len(rows)), rows]
        # a share of a negative similarity would move the bar up: the margin is taken off
        ceiling = own - (1 - FALSE_NEGATIVE_MARGIN) * np.abs(own)
        excluded = same_text[None, :] == same_text[rows][:, None]  # itself and its copies
        masked = np.where(excluded | (sims >= ceiling[:, None]), -np.inf, sims)
        order = np.argsort(-masked, axis=1, kind="stable")[:, :width]
        for k, i in enumerate(rows):
            kept = order[k][np.isfinite(masked[k, order[k]])]
            if not len(kept):  # every other positive above the bar: the least similar one
                kept = np.asarray([np.argmin(np.where(excluded[k], np.inf, sims[k]))])
            out[i] = np.resize(kept, width)
    return out


def with_neighbours(tables: list[PairTable], embed=None) -> list[PairTable]:
    """``tables`` with their ``neighbours`` filled in (for hard negatives): the positives of
    the most BM25-similar queries, or with ``embed`` (the base's encoder: texts ->
    unit-length rows) the positives it ranks nearest each query
    (:func:`embedding_neighbours`)."""
    for table in tables:
        if embed is None:
            table.neighbours = bm25_neighbours(table.queries)
        else:
            table.neighbours = embedding_neighbours(table.queries, table.positives, embed)
    return tables


_MARGIN_ROWS = 512  # queries whose BM25 scores over every positive are held at once


def bm25_margins(table: PairTable, negatives: np.ndarray) -> np.ndarray:
    """Per row, BM25's margin of the row's positive over the positive ``negatives[row]``
    (its hard negative), in standard deviations of the query's BM25 scores over all the
    table's positives: the fusion's z-score, its list the whole table (0 where BM25 scores
    every positive alike).

    Example:
        >>> table = PairTable("beer", "title_body", ["stout", "lager"],
        ...                   ["a dark stout", "a pale lager"])
        >>> bm25_margins(table, np.array([1, 0])) > 0
        array([ True,  True])
    """
    index = BM25Neighbours(table.positives)
    out = np.zeros(len(table), dtype=np.float32)
    for start in range(0, len(table), _MARGIN_ROWS):
        rows = range(start, min(start + _MARGIN_ROWS, len(table)))
        for row, scores in zip(rows, index.scores([table.queries[r] for r in rows])):
            spread = scores.std()
            if spread > 0:
                out[row] = (scores[row] - scores[negatives[row]]) / spread
    return out


def sample_negatives(table: PairTable, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` other candidates per row: indices into ``table.positives``, never the row.

    Random rows by default; with ``table.neighbours``, rows among the BM25-nearest ones
    (without repeats when there are at least ``k`` of them).
    """
    n = len(table)
    if n < 2:
        raise ZooError(
            f"forum {table.forum}: {table.pair_kind} needs at least 2 pairs for negatives"
        )
    if table.neighbours is not None:
        width = table.neighbours.shape[1]
        if width >= k:
            picks = np.argsort(rng.random((n, width)), axis=1)[:, :k]
        else:
            picks = rng.integers(0, width, size=(n, k))
        return np.take_along_axis(table.neighbours, picks, axis=1)
    # Draw from n-1 slots and shift past the row itself, so a negative is never the positive.
    draws = rng.integers(0, n - 1, size=(n, k))
    return draws + (draws >= np.arange(n)[:, None])


def example_shape(loss: str) -> str:
    """The shape of the examples the cross-encoder loss ``loss`` trains on
    (``pointwise``, ``pairwise`` or ``listwise``; see :mod:`adapter_zoo.losses`)."""
    return get_loss(loss, "cross").examples


def examples_per_batch(batch_size: int, k: int, loss: str) -> int:
    """Examples in one minibatch. ``batch_size`` counts scored pairs whatever the loss, so a
    listwise example (a positive and ``k`` negatives) fills ``1 + k`` of them."""
    return max(1, batch_size // (1 + k)) if example_shape(loss) == "listwise" else batch_size


def examples_per_positive(k: int, loss: str) -> int:
    """Training examples one positive pair yields per epoch."""
    return {"pointwise": 1 + k, "pairwise": k, "listwise": 1}[example_shape(loss)]


def forum_examples(
    tables: list[PairTable], k: int, loss: str, rng: np.random.Generator
) -> list[tuple]:
    """One forum's examples for an epoch, shuffled, in the shape ``loss`` trains on:
    ``pointwise`` (query, candidate, label); ``pairwise`` (query, positive, negative);
    ``listwise`` (query, positive, (negative, ...)).
    """
    shape = example_shape(loss)
    examples: list[tuple] = []
    for table in tables:
        negatives = sample_negatives(table, k, rng)
        for i, (query, positive) in enumerate(zip(table.queries, table.positives)):
            others = [table.positives[j] for j in negatives[i]]
            if shape == "listwise":
                examples.append((query, positive, tuple(others)))
            elif shape == "pairwise":
                examples += [(query, positive, other) for other in others]
            else:
                examples.append((query, positive, 1.0))
                examples += [(query, other, 0.0) for other in others]
    order = rng.permutation(len(examples))
    return [examples[i] for i in order]


def round_robin(batches_per_forum: list[list]) -> list:
    """Interleave minibatches one forum at a time (MultiCQA); exhausted forums drop out.

    Example:
        >>> round_robin([["a1", "a2", "a3"], ["b1"], ["c1", "c2"]])
        ['a1', 'b1', 'c1', 'a2', 'c2', 'a3']
    """
    order = []
    longest = max((len(b) for b in batches_per_forum), default=0)
    for position in range(longest):
        order += [batches[position] for batches in batches_per_forum if position < len(batches)]
    return order


def epoch_batches(
    forum_tables: dict[str, list[PairTable]],
    *,
    batch_size: int,
    k: int,
    loss: str,
    seed: int,
    epoch: int,
) -> list[list[tuple]]:
    """All minibatches of one epoch: each from one forum, forums in round-robin order."""
    rng = np.random.default_rng([seed, epoch])
    size = examples_per_batch(batch_size, k, loss)
    per_forum = []
    for host in forum_tables:
        examples = forum_examples(forum_tables[host], k, loss, rng)
        per_forum.append([examples[i : i + size] for i in range(0, len(examples), size)])
    return round_robin(per_forum)


def example_columns(examples: list[tuple], loss: str, k: int) -> dict[str, list]:
    """Examples of the shape ``loss`` trains on as the text columns (and label) that
    ``CrossEncoderTrainer`` hands the loss, in order: ``pointwise`` query, candidate, label;
    ``pairwise`` query, positive, negative; ``listwise`` query, positive, negative_1, ...

    Example:
        >>> example_columns([("q", "p", ("n1", "n2"))], "listwise", 2)
        {'query': ['q'], 'positive': ['p'], 'negative_1': ['n1'], 'negative_2': ['n2']}
    """
    shape = example_shape(loss)
    if shape == "listwise":
        names = ["query", "positive", *(f"negative_{i + 1}" for i in range(k))]
        rows = [(query, positive, *negatives) for query, positive, negatives in examples]
    else:
        names = ["query", "candidate", "label"] if shape == "pointwise" else [
            "query", "positive", "negative"]  # fmt: skip
        rows = examples
    columns = list(zip(*rows)) if rows else [() for _ in names]
    return {name: list(column) for name, column in zip(names, columns, strict=True)}
