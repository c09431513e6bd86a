"""Numeric options checked by type and range: the one check of every CLI option and keyword.

:func:`check_number` checks a Python caller's value (the config dataclasses, keyword
arguments); :func:`number_option` makes an argparse ``type=`` from the same check, so a
command line and a Python caller get the same one-line message.

Example:
    >>> check_number("lr", 2e-5, low=0, low_open=True)
    2e-05
    >>> check_number("max_length", 0, integer=True, low=1)
    Traceback (most recent call last):
    ...
    stackexchange.errors.AdapterZooError: max_length must be a whole number >= 1, not 0
    >>> check_number("lr", float("nan"), low=0, low_open=True)
    Traceback (most recent call last):
    ...
    stackexchange.errors.AdapterZooError: lr must be a finite number > 0, not nan
"""

from __future__ import annotations

import argparse
import math
import numbers
import re

from stackexchange.errors import AdapterZooError

# What a command line may spell a number as: plain decimals (Python's int() and float() also
# take "1_0", " 1", "inf", "nan" and full-width digits).
_INTEGER = re.compile(r"[-+]?[0-9]+")
_DECIMAL = re.compile(r"[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")


def describe_range(
    *, integer: bool = False, low=None, high=None, low_open: bool = False, high_open: bool = False
) -> str:
    """The allowed values in words, e.g. ``a whole number >= 1`` or ``a finite number in [0, 1)``.

    Example:
        >>> describe_range(low=0, high=1, high_open=True)
        'a finite number in [0, 1)'
    """
    kind = "a whole number" if integer else "a finite number"
    if low is not None and high is not None:
        return f"{kind} in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f"{kind} {'>' if low_open else '>='} {low}"
    if high is not None:
        return f"{kind} {'<' if high_open else '<='} {high}"
    return kind


def check_number(
    name: str,
    value,
    *,
    integer: bool = False,
    low=None,
    high=None,
    low_open: bool = False,
    high_open: bool = False,
    error: type[AdapterZooError] = AdapterZooError,
):
    """``value`` if it is a (whole, when ``integer``) finite number within the bounds, else
    ``error`` naming ``name`` and the allowed range in one line. Booleans are not numbers.

    Args:
        name: the option or field, as the user wrote it (``--lr``, ``top_k``).
        value: the value to check.
        integer: only whole numbers (``int``, not ``2.0``).
        low, high: bounds (None: unbounded), inclusive unless ``low_open``/``high_open``.
        error: the error class to raise (the package's own, e.g. ``ZooError``).
    """
    allowed = describe_range(
        integer=integer, low=low, high=high, low_open=low_open, high_open=high_open
    )
    wanted = numbers.Integral if integer else numbers.Real
    ok = isinstance(value, wanted) and not isinstance(value, bool)
    if ok and not integer:
        ok = math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        raise error(f"{name} must be {allowed}, not {value!r}")
    return value


def number_option(
    *,
    integer: bool = False,
    low=None,
    high=None,
    low_open: bool = False,
    high_open: bool = False,
):
    """An argparse ``type=`` reading a plain decimal number checked by :func:`check_number`;
    argparse reports a bad value as ``argument --NAME: must be ..., not 'VALUE'`` and exits 2.

    Example:
        >>> positive = number_option(integer=True, low=1)
        >>> positive("3")
        3
        >>> positive("1_0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be a whole number >= 1, not '1_0'
    """
    bounds = dict(integer=integer, low=low, high=high, low_open=low_open, high_open=high_open)
    allowed = describe_range(**bounds)

    def parse(text: str):
        pattern = _INTEGER if integer else _DECIMAL
        if not pattern.fullmatch(text):
            raise argparse.ArgumentTypeError(f"must be {allowed}, not {text!r}")
        value = int(text) if integer else float(text)
        try:
            return check_number("value", value, **bounds)
        except AdapterZooError:
            raise argparse.ArgumentTypeError(f"must be {allowed}, not {text!r}") from None

    parse.__name__ = "whole number" if integer else "number"
    return parse


# The options most commands share. Every whole-number option has an upper bound too (the
# named limits below): a typo such as an extra zero is refused before any work, not found
# as an out-of-memory error or a run of years, or recorded as given in a card.
# A learning rate: 0 is allowed (a run that must leave the weights as they are).
non_negative_float = number_option(low=0)
# A seed: what numpy's and torch's generators take.
seed_int = number_option(integer=True, low=0, high=2**32 - 1)
# A token limit: BERT-family models read at most 512 positions, long-context ones more; the
# model itself is checked when it is known (``adapter_zoo.ranker.inputs.check_max_length``).
MAX_TOKENS = 1_000_000
max_length_int = number_option(integer=True, low=1, high=MAX_TOKENS)
# A count of training steps or epochs: a billion steps is years at the training speed recorded
# on 2 CPU cores (benchmarks/results/train_infer.json) and months on a GPU fifty times
# faster, so a larger count is a typo, refused before any work; and the
# card and trainer_state.json keep it in JSON, exact only below 2**53 for most readers.
MAX_STEPS = 10**9
step_int = number_option(integer=True, low=1, high=MAX_STEPS)
# A count of list items: candidates per query (build-benchmark, a rerank's top-k, dev lists),
# negatives per positive, members of an adaptation. Each is cut to the list at hand, so a
# typo (--top-k 1000000000) ran as if it were the list's length but went into the card or
# benchmark.json as given. Published lists hold 100 candidates per query (LAS), 20
# (AskUbuntu) or a whole document's passages (WikiPassageQA, under 300); 10,000 is a
# hundred times the largest, and scoring it with a cross-encoder is hours per 100 queries.
MAX_LIST = 10_000
list_int = number_option(integer=True, low=1, high=MAX_LIST)
# A batch of pairs or texts (training or scoring): CLIP's contrastive batches of 32,768 are
# the largest published in-batch-negative batches; twice that is a typo, refused before a
# model loads instead of as an out-of-memory error at the first step.
MAX_BATCH = 65_536
batch_int = number_option(integer=True, low=1, high=MAX_BATCH)
# A transformer layer number or count (cascade exits, AdapterDrop's lower layers): the
# deepest published models have about a hundred layers (Llama 3.1 405B: 126); each is also
# checked against the base's own count, read from its config.json before the model loads.
MAX_LAYERS = 1_000
layer_int = number_option(integer=True, low=1, high=MAX_LAYERS)
# A width inside a model (a LoRA rank and its alpha, an adapter's reduction factor, a head's
# hidden size): the widest published hidden states are 16,384 (Llama 3.1 405B).
MAX_WIDTH = 65_536
width_int = number_option(integer=True, low=1, high=MAX_WIDTH)
# A count of one forum's questions or pairs (recommend's questions and dev sample, parse's
# positives per pair kind, dev queries): Stack Overflow, the largest forum, had 16.8 million
# questions in the catalog's 2018-12 dump; a hundred million leaves room for a large target.
MAX_QUESTIONS = 10**8
question_int = number_option(integer=True, low=1, high=MAX_QUESTIONS)
# Parallel processes: each parse process holds a forum's tables in memory, so more than the
# hardware threads of the largest machines (a few hundred) only exhausts memory.
MAX_PROCESSES = 1_024
process_int = number_option(integer=True, low=1, high=MAX_PROCESSES)
