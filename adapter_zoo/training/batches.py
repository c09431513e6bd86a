"""Training batches of texts of similar length, so that each batch pads little.

A batch is padded to its own longest text (sentence-transformers' collators tokenize each
batch with ``padding=True``), so a batch that mixes a 20-token title with a 128-token answer
pays 128 tokens for the title. Grouping texts of similar length into the same batch cuts those
padded tokens; on the beer forum's bi-encoder pairs (32 triplets, 128 tokens) by a fifth, on
the cross-encoder's title-body pairs (32 pairs, 300 tokens) by more than half.

The grouping is transformers' (:func:`transformers.trainer_pt_utils.get_length_grouped_indices`,
the order behind ``group_by_length``): shuffle, cut into pools of up to 50 batches, sort each
pool by length. What no library does is written here: the bi-encoder batches keep
sentence-transformers' ``no_duplicates`` rule (no text twice in a batch, or it would be its own
in-batch negative) and a forum per batch (each forum's dataset gets its own sampler and
:class:`EpochRoundRobin` takes them in turns), and the batch order is shuffled afterwards so
that training does not run from long batches to short ones. ``group_by_length`` itself is no
option: sentence-transformers' trainers build their own batch samplers and never read it.

Example:
    >>> import torch
    >>> keys = [n % 8 * 10 for n in range(64)]  # lengths 0, 10, ..., 70 in turns
    >>> batches = grouped_batches(keys, 8, torch.Generator().manual_seed(0))
    >>> def spread(batches):
    ...     return sum(max(keys[i] for i in b) - min(keys[i] for i in b) for b in batches)
    >>> spread(batches) < spread([range(i, i + 8) for i in range(0, 64, 8)]) / 2
    True
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch
from sentence_transformers.base.sampler import DefaultBatchSampler, RoundRobinBatchSampler
from transformers import AutoTokenizer
from transformers.trainer_pt_utils import get_length_grouped_indices

from adapter_zoo.ranker.model import resolve_base_model
from adapter_zoo.training.data import examples_per_batch, forum_examples, round_robin

# batches searched on either side for an example to trade places with one that repeats a
# text (wider costs time on large forums; beer's triplets found one within 2 batches)
SWAP_WINDOW = 8
TOKENIZE_CHUNK = 1024  # texts tokenized at once: their token ids are held only that long


def token_counts(tokenizer, texts: Sequence[str], max_length: int) -> np.ndarray:
    """Tokens of each text without special tokens, at most ``max_length``.

    Example:
        >>> from transformers import AutoTokenizer  # doctest: +SKIP
        >>> token_counts(AutoTokenizer.from_pretrained("bert-base-uncased"),
        ...              ["a stout", "hops"], 128)  # doctest: +SKIP
        array([2, 1])
    """
    counts = np.zeros(len(texts), dtype=np.int64)
    for start in range(0, len(texts), TOKENIZE_CHUNK):
        chunk = list(texts[start : start + TOKENIZE_CHUNK])
        ids = tokenizer(chunk, add_special_tokens=False, truncation=True, max_length=max_length)
        counts[start : start + len(chunk)] = [len(row) for row in ids["input_ids"]]
    return counts


def seeded_generator(seed: int, epoch: int):
    """A torch generator for (``seed``, ``epoch``): distinct pairs give distinct streams
    (``seed + epoch``, sentence-transformers' choice, gives seed 1's epoch 0 to seed 0's 1)."""
    state = int(np.random.SeedSequence([seed, epoch]).generate_state(1)[0])
    return torch.Generator().manual_seed(state)


def grouped_batches(
    keys: Sequence[float],
    batch_size: int,
    generator,
    texts: Sequence[frozenset] | None = None,
) -> list[list[int]]:
    """Indices of ``keys`` cut into batches of similar keys, the batches in random order.

    Args:
        keys: each example's length (what its batch pads to).
        batch_size: examples per batch; only the last batch, and batches closed when every
            example left shares a text with them, hold fewer.
        generator: the torch generator of the shuffles.
        texts: each example's texts (any hashable ids); an example never joins a batch that
            holds one of its texts, it waits for the next one (as sentence-transformers'
            ``NoDuplicatesBatchSampler`` defers it), which keeps it among examples of
            similar length.

    Example:
        >>> import torch
        >>> batches = grouped_batches([3, 90, 5, 80], 2, torch.Generator().manual_seed(0))
        >>> sorted(i for b in batches for i in b), [len(b) for b in batches]
        ([0, 1, 2, 3], [2, 2])
    """
    if not len(keys):
        return []
    order = get_length_grouped_indices(list(keys), batch_size, generator=generator)
    batches = _cut(order, batch_size, texts, keys)
    shuffled = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in shuffled]


def _cut(order: Iterable[int], batch_size: int, texts, keys) -> list[list[int]]:
    """``order`` cut into batches of ``batch_size``; where a batch holds a text twice, one of
    its examples trades places with the example of nearest length in the nearest batch
    that can take it (so the batches stay grouped; deferring it to the next batch, as
    ``NoDuplicatesBatchSampler`` does, drags a long example into shorter batches, down the
    pool: a third of the padding saved on beer's hard-negative triplets was lost that way)."""
    order = list(order)
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    if texts is None:
        return batches

    counts = [Counter(t for i in batch for t in texts[i]) for batch in batches]

    def fits(index: int, batch: int, leaving: int) -> bool:
        held = counts[batch]
        return all(held[t] - (t in texts[leaving]) == 0 for t in texts[index])

    left_over = []
    for k, batch in enumerate(batches):
        for x in list(batch):
            if all(counts[k][t] == 1 for t in texts[x]):
                continue
            partner = _partner(x, k, batches, keys, fits)
            counts[k].subtract(texts[x])
            if partner is None:  # nowhere to go: it waits for a batch of its own
                batch.remove(x)
                left_over.append(x)
                continue
            j, y = partner
            counts[j].subtract(texts[y])
            batch[batch.index(x)], batches[j][batches[j].index(y)] = y, x
            counts[k].update(texts[y])
            counts[j].update(texts[x])
    return [b for b in batches if b] + _defer(left_over, batch_size, texts)


def _partner(x: int, k: int, batches, keys, fits) -> tuple[int, int] | None:
    """The (batch, example) within ``SWAP_WINDOW`` batches of batch ``k`` whose length is
    nearest ``x``'s and that can trade places with ``x``, or None. Nearest in length, not
    in batch: the next batch may begin the next pool, all long where ``k`` ends it short."""
    best, gap = None, None
    for j in range(max(0, k - SWAP_WINDOW), min(len(batches), k + SWAP_WINDOW + 1)):
        for y in batches[j] if j != k else ():
            if (gap is None or abs(keys[y] - keys[x]) < gap) and fits(x, j, y) and fits(y, k, x):
                best, gap = (j, y), abs(keys[y] - keys[x])
    return best


def _defer(order: Iterable[int], batch_size: int, texts) -> list[list[int]]:
    """Batches of ``order`` with no text twice, an example that would repeat one deferred
    to the next batch (``NoDuplicatesBatchSampler``'s rule)."""
    waiting, batches = deque(order), []
    while waiting:
        batch, seen, deferred = [], set(), []
        while waiting and len(batch) < batch_size:
            index = waiting.popleft()
            if seen.isdisjoint(texts[index]):
                batch.append(index)
                seen |= texts[index]
            else:
                deferred.append(index)
        waiting.extendleft(reversed(deferred))  # first in line for the next batch
        batches.append(batch)
    return batches


class LengthGroupedBatchSampler(DefaultBatchSampler):
    """Batches of one dataset (one forum) with texts of similar length and no text twice.

    A drop-in for sentence-transformers' ``NoDuplicatesBatchSampler`` (its signature, and
    ``set_epoch``): every example once per epoch, in batches of ``batch_size`` grouped by
    length (:func:`grouped_batches`). An epoch's batches depend only on ``seed`` and the
    epoch, so a resumed run skips exactly the batches it had trained on.

    Args:
        dataset: a ``datasets.Dataset`` of text columns (and label columns).
        batch_size: examples per batch.
        drop_last: drop a last batch smaller than ``batch_size``.
        valid_label_columns: columns that are labels, not texts.
        generator: ignored: the sampler seeds its own per epoch (``seed``).
        seed: the seed of the shuffles.
        lengths: each example's length (the sum of its texts' tokens: every text column is
            padded apart); None counts characters.

    Example:
        >>> import datasets
        >>> rows = datasets.Dataset.from_dict({"anchor": ["q1", "q2", "q3"],
        ...                                    "positive": ["same", "same", "other"]})
        >>> batches = list(LengthGroupedBatchSampler(rows, 2, False, seed=0))
        >>> all(not {0, 1} <= set(b) for b in batches), sorted(i for b in batches for i in b)
        (True, [0, 1, 2])
    """

    def __init__(
        self,
        dataset,
        batch_size: int,
        drop_last: bool,
        valid_label_columns: list[str] | None = None,
        generator=None,
        seed: int = 0,
        lengths: Sequence[int] | None = None,
    ) -> None:
        super().__init__(dataset, batch_size, drop_last, valid_label_columns, generator, seed)
        skip = set(valid_label_columns or ()) | {"dataset_name"}
        columns = [c for c in dataset.column_names if c not in skip]
        # texts as integer ids: a batch's duplicate check compares ints, not the strings
        ids: dict[str, int] = {}
        rows = zip(*(dataset[c] for c in columns), strict=True)
        self.texts = [frozenset(ids.setdefault(str(t), len(ids)) for t in row) for row in rows]
        if lengths is None:
            lengths = [sum(len(str(t)) for t in row) for row in zip(*(dataset[c] for c in columns))]
        self.lengths = np.asarray(lengths)
        self._plans: dict[int, list[list[int]]] = {}

    def plan(self, epoch: int) -> list[list[int]]:
        """The batches of ``epoch`` (kept: ``__len__`` and ``__iter__`` read them)."""
        if epoch not in self._plans:
            batches = grouped_batches(
                self.lengths, self.batch_size, seeded_generator(self.seed, epoch), self.texts
            )
            if self.drop_last:
                batches = [b for b in batches if len(b) == self.batch_size]
            self._plans = {epoch: batches}
        return self._plans[epoch]

    def __iter__(self):
        yield from (list(batch) for batch in self.plan(self.epoch))

    def __len__(self) -> int:
        return len(self.plan(self.epoch))


class EpochRoundRobin(RoundRobinBatchSampler):
    """sentence-transformers' round-robin over forums (one forum per batch, forums in turns,
    an epoch ends with the smallest forum), telling each forum's sampler the epoch too: its
    own ``set_epoch`` keeps it, so every forum would repeat epoch 0's batches."""

    def set_epoch(self, epoch: int) -> None:
        super().set_epoch(epoch)
        for sampler in self.batch_samplers:
            if hasattr(sampler, "set_epoch"):
                sampler.set_epoch(epoch)


def length_grouped_sampler(model, seed: int) -> Callable:
    """The ``batch_sampler`` argument of ``SentenceTransformerTrainingArguments`` that makes
    a :class:`LengthGroupedBatchSampler` of each dataset, its examples' lengths counted in
    ``model``'s tokens at the model's ``max_seq_length`` (what the collator pads to).

    Example:
        >>> args = SentenceTransformerTrainingArguments(  # doctest: +SKIP
        ...     output_dir="out", batch_sampler=length_grouped_sampler(model, seed=42))
    """

    # sentence-transformers hands every sampler seed 0 (the generator holds the run's seed,
    # but its samplers reseed it with their own): the run's seed is taken here instead
    def sampler(dataset, batch_size, drop_last, valid_label_columns=None, generator=None,
                **_seed):  # fmt: skip
        skip = set(valid_label_columns or ()) | {"dataset_name"}
        tokenizer, limit = model.tokenizer, model.max_seq_length
        specials = tokenizer.num_special_tokens_to_add(pair=False)
        lengths = sum(
            np.minimum(token_counts(tokenizer, list(dataset[c]), limit) + specials, limit)
            for c in dataset.column_names
            if c not in skip
        )
        return LengthGroupedBatchSampler(
            dataset, batch_size, drop_last, valid_label_columns, generator, seed, lengths
        )

    return sampler


def length_grouped_sampling(model, seed: int) -> dict:
    """The sampler arguments of ``SentenceTransformerTrainingArguments`` for batches grouped
    by length: :func:`length_grouped_sampler` per forum, forums in :class:`EpochRoundRobin`.

    Example:
        >>> SentenceTransformerTrainingArguments(  # doctest: +SKIP
        ...     output_dir="out", **length_grouped_sampling(model, seed=42))
    """
    return {
        "batch_sampler": length_grouped_sampler(model, seed),
        "multi_dataset_batch_sampler": EpochRoundRobin,
    }


class PairLengths:
    """Token lengths of cross-encoder examples: each (query, candidate) pair is one sequence
    of at most ``max_length`` tokens, and an example (a pair, a pairwise triple, a listwise
    list) pads its batch to its longest pair. Each distinct text is tokenized once.

    A pair's length is counted as its two texts' tokens plus the special tokens, at most
    ``max_length``: what ``encode_pairs`` gives, up to the characters ``clip_pair`` cuts
    from texts far longer than that (which are past the limit either way).

    Example:
        >>> lengths = PairLengths(tokenizer, 128)  # doctest: +SKIP
        >>> lengths.of([("q", "a b", 1.0), ("q", "a", ("b c d",))])  # doctest: +SKIP
        array([5, 6])
    """

    def __init__(self, tokenizer, max_length: int):
        self.tokenizer, self.max_length = tokenizer, max_length
        self.specials = tokenizer.num_special_tokens_to_add(pair=True)
        self.counts: dict[str, int] = {}

    def of(self, examples: Sequence[tuple]) -> np.ndarray:
        """The length of each example: its longest pair's."""
        pairs = [_example_pairs(example) for example in examples]
        new = list(dict.fromkeys(t for p in pairs for pair in p for t in pair
                                 if t not in self.counts))  # fmt: skip
        self.counts.update(zip(new, token_counts(self.tokenizer, new, self.max_length).tolist()))
        return np.array([
            min(self.max_length, max(self.counts[q] + self.counts[c] for q, c in p) + self.specials)
            for p in pairs
        ])  # fmt: skip


def _example_pairs(example: tuple) -> list[tuple[str, str]]:
    """The (query, candidate) pairs a cross-encoder example is scored on: pointwise
    (query, candidate, label), pairwise (query, positive, negative), listwise
    (query, positive, (negative, ...))."""
    query, first, rest = example
    if isinstance(rest, tuple):
        return [(query, c) for c in (first, *rest)]
    return [(query, first), (query, rest)] if isinstance(rest, str) else [(query, first)]


def grouped_epoch_batches(config, forum_tables: dict, *, epoch: int) -> list[list[tuple]]:
    """:func:`adapter_zoo.training.data.epoch_batches` with each forum's batches grouped by
    length (:func:`grouped_batches`): the same examples (negatives drawn from the same
    ``[seed, epoch]`` stream), one forum per batch, forums in round-robin order.

    Example:
        >>> batches = grouped_epoch_batches(config, {"beer": tables}, epoch=0)  # doctest: +SKIP
    """
    rng = np.random.default_rng([config.seed, epoch])
    size = examples_per_batch(config.batch_size, config.negatives, config.loss)
    lengths = PairLengths(_tokenizer(resolve_base_model(config.base_model)), config.max_length)
    generator = seeded_generator(config.seed, epoch)
    per_forum = []
    for tables in forum_tables.values():
        examples = forum_examples(tables, config.negatives, config.loss, rng)
        batches = grouped_batches(lengths.of(examples), size, generator)
        per_forum.append([[examples[i] for i in batch] for batch in batches])
    return round_robin(per_forum)


def _tokenizer(path: str):
    return AutoTokenizer.from_pretrained(path, trust_remote_code=False)
