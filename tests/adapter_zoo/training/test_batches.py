"""Length-grouped training batches: the sampler's rules hold, and batches pad less."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch

from adapter_zoo.training.batches import (
    EpochRoundRobin,
    LengthGroupedBatchSampler,
    PairLengths,
    grouped_batches,
    grouped_epoch_batches,
    length_grouped_sampler,
    token_counts,
)


@pytest.fixture(scope="module")
def tokenizer(minilm_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(minilm_path))


@pytest.fixture(scope="module")
def beer_triplets(parsed_beer):
    """The beer forum's bi-encoder training set as bi.py builds it (hard negatives: every
    negative is another pair's positive, so texts repeat across examples)."""
    from adapter_zoo.training.bi import pair_dataset
    from adapter_zoo.training.data import load_pairs, with_neighbours

    tables = load_pairs(parsed_beer, "beer.stackexchange.com", ("question_answer", "title_body"),
                        "train")  # fmt: skip
    return pair_dataset(with_neighbours(tables), hard_negatives=True, seed=42)


def padded(batches, lengths: dict) -> int:
    """Tokens the batches cost, every column padded to its longest in the batch."""
    return sum(
        int(col[b].max()) * len(b) for b in map(np.array, batches) for col in lengths.values()
    )


def column_lengths(dataset, tokenizer, limit=128) -> dict:
    return {c: np.minimum(token_counts(tokenizer, list(dataset[c]), limit) + 2, limit)
            for c in dataset.column_names}  # fmt: skip


def test_every_example_once_no_text_twice_and_the_same_batches_again(beer_triplets, tokenizer):
    model = types.SimpleNamespace(tokenizer=tokenizer, max_seq_length=128)
    make = length_grouped_sampler(model, seed=42)
    sampler = make(beer_triplets, batch_size=32, drop_last=False, valid_label_columns=["label"],
                   generator=torch.Generator(), seed=0)  # fmt: skip
    batches = list(sampler)
    assert sorted(i for b in batches for i in b) == list(range(len(beer_triplets)))
    assert len(batches) == len(sampler) and sorted(map(len, batches))[1:] == [32] * 42
    rows = beer_triplets.to_list()
    for batch in batches:
        texts = [t for i in batch for t in rows[i].values()]
        assert len(texts) == len(set(texts))
    # a restarted run (a new sampler, as on resume) gets the very same batches; another epoch
    # and another seed do not
    again = make(beer_triplets, batch_size=32, drop_last=False)
    assert list(again) == batches
    again.set_epoch(1)
    assert list(again) != batches
    assert list(length_grouped_sampler(model, seed=7)(beer_triplets, 32, False)) != batches


def test_batches_hold_texts_of_similar_length_and_pad_less(beer_triplets, tokenizer):
    from sentence_transformers.base.sampler import NoDuplicatesBatchSampler

    lengths = column_lengths(beer_triplets, tokenizer)
    model = types.SimpleNamespace(tokenizer=tokenizer, max_seq_length=128)
    grouped = list(length_grouped_sampler(model, seed=42)(beer_triplets, 32, False))
    random = list(NoDuplicatesBatchSampler(beer_triplets, 32, False,
                                           generator=torch.Generator().manual_seed(42)))  # fmt: skip
    total = sum(lengths.values())

    def spread(batches):
        return np.mean([np.ptp(total[b]) for b in map(np.array, batches)])

    assert spread(grouped) < 0.5 * spread(random)
    # measured 430k padded tokens against 520k (1.21x fewer)
    assert padded(grouped, lengths) < 0.87 * padded(random, lengths)
    # the batch order is shuffled, not longest to shortest
    means = [total[b].mean() for b in grouped]
    assert means != sorted(means) and means != sorted(means, reverse=True)


def test_a_repeated_text_trades_places_within_its_length_group():
    import datasets

    # examples 0-3 share one text: no two of them may meet, whatever their lengths say
    texts = [("shared", f"a{i}") for i in range(4)] + [(f"q{i}", f"b{i}") for i in range(12)]
    rows = datasets.Dataset.from_dict({"anchor": [a for a, _ in texts],
                                       "positive": [p for _, p in texts]})  # fmt: skip
    lengths = [100, 100, 99, 99] + list(range(98, 86, -1))
    for epoch in range(5):
        sampler = LengthGroupedBatchSampler(rows, 4, False, lengths=lengths, seed=epoch)
        batches = list(sampler)
        assert sorted(i for b in batches for i in b) == list(range(16))
        assert all(len(set(b) & {0, 1, 2, 3}) <= 1 for b in batches)
        assert all(len(b) == 4 for b in batches)


def test_grouped_batches_without_text_rules_spread_little():
    keys = np.random.default_rng(0).permutation(256)
    batches = grouped_batches(keys, 8, torch.Generator().manual_seed(0))
    assert sorted(i for b in batches for i in b) == list(range(256))
    spread = np.mean([np.ptp(keys[b]) for b in batches])
    assert spread < np.mean([np.ptp(keys[i : i + 8]) for i in range(0, 256, 8)]) / 4
    assert grouped_batches([], 2, torch.Generator()) == []


def test_round_robin_takes_forums_in_turns_and_tells_each_the_epoch():
    import datasets
    from torch.utils.data import ConcatDataset

    forums = [
        datasets.Dataset.from_dict({"anchor": [f"{f}{i}" for i in range(n)],
                                    "positive": [f"{f}p{i}" * (i + 1) for i in range(n)]})
        for f, n in (("a", 8), ("b", 12))
    ]  # fmt: skip
    samplers = [LengthGroupedBatchSampler(d, 4, False, seed=1) for d in forums]
    robin = EpochRoundRobin(ConcatDataset(forums), samplers, seed=1)
    first = list(robin)
    assert len(first) == len(robin) == 4  # an epoch ends with the smallest forum
    assert [max(b) >= 8 for b in first] == [False, True, False, True]  # a, b, a, b
    robin.set_epoch(3)
    assert all(s.epoch == 3 for s in samplers) and list(robin) != first


def test_cross_encoder_plan_keeps_its_examples_and_forum_order_and_pads_less(
    parsed_beer, minilm_path, tokenizer
):
    from adapter_zoo.ranker.ranker import encode_pairs
    from adapter_zoo.training import TrainingConfig
    from adapter_zoo.training.data import epoch_batches, load_pairs

    config = TrainingConfig(mode="adapter", data=str(parsed_beer), forums=("beer",), name="x",
                            base_model=str(minilm_path), encoder="cross", max_length=300)  # fmt: skip
    tables = {"beer": load_pairs(parsed_beer, "beer.stackexchange.com", ("title_body",), "train")}
    plain = epoch_batches(tables, batch_size=32, k=1, loss="bce", seed=42, epoch=0)
    grouped = grouped_epoch_batches(config, tables, epoch=0)
    assert sorted(e for b in grouped for e in b) == sorted(e for b in plain for e in b)
    assert [len(b) for b in sorted(grouped, key=len)] == [len(b) for b in sorted(plain, key=len)]
    assert grouped != grouped_epoch_batches(config, tables, epoch=1)

    def cost(batches):  # the tokens the model reads, as encode_pairs pads them
        return sum(encode_pairs(tokenizer, [q for q, *_ in b], [c for _, c, _ in b], 300)[
            "input_ids"].numel() for b in batches)  # fmt: skip

    assert cost(grouped) < 0.6 * cost(plain)  # measured 2.6x fewer when fully sorted


def test_pair_lengths_count_the_longest_pair_of_an_example(tokenizer):
    from adapter_zoo.ranker.ranker import encode_pairs

    lengths = PairLengths(tokenizer, 16)
    short, long_ = "a stout", "the porter came first, then stouts as strong porters did"
    examples = [("q", short, 1.0), ("q", short, long_), ("q", short, (short, long_))]
    got = lengths.of(examples)
    expected = [encode_pairs(tokenizer, ["q"], [text], 16)["input_ids"].shape[1]
                for text in (short, long_)]  # fmt: skip
    assert got.tolist() == [expected[0], expected[1], expected[1]]
