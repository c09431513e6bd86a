"""Numeric options out of range, NaN or oddly spelt: one line naming the option and the
allowed range, exit 2, nothing written (``stackexchange.numbers``), on the command line and
for the same keywords from Python."""

from __future__ import annotations

import pytest

from adapter_zoo.cli import main
from stackexchange.errors import AdapterZooError
from stackexchange.numbers import check_number, number_option

TRAIN = ["train", "--mode", "adapter", "--data", "D", "--forums", "beer", "--name", "n"]
CASCADE = ["cascade-train", "--data", "D", "--name", "n"]
WHOLE_POSITIVE = "must be a whole number >= 1"
MAX_LENGTH = "must be a whole number in [1, 1000000]"
SEED = "must be a whole number in [0, 4294967295]"
RATE = "must be a finite number >= 0"
ALPHA = "must be a finite number in [0, 1)"
STEPS = "must be a whole number in [1, 1000000000]"  # stackexchange.numbers.MAX_STEPS
LIST = "must be a whole number in [1, 10000]"  # stackexchange.numbers.MAX_LIST
BATCH = "must be a whole number in [1, 65536]"  # MAX_BATCH
LAYERS = "must be a whole number in [1, 1000]"  # MAX_LAYERS
WIDTH = "must be a whole number in [1, 65536]"  # MAX_WIDTH
QUESTIONS = "must be a whole number in [1, 100000000]"  # MAX_QUESTIONS
PROCESSES = "must be a whole number in [1, 1024]"  # MAX_PROCESSES
ADAPT = ["adapt", "--target", "T", "--name", "n"]
BUDGET = "must be a finite number in [1, 10080]"  # minutes: adapter_zoo.adapt.budget

CASES = [
    (TRAIN, "--lr", "nan", RATE),
    (TRAIN, "--lr", "-1e-5", RATE),
    (TRAIN, "--lr", "inf", RATE),
    (TRAIN, "--max-length", "0", MAX_LENGTH),
    (TRAIN, "--max-length", "2000000", MAX_LENGTH),
    (TRAIN, "--epochs", "0", STEPS),
    (TRAIN, "--epochs", "1000000001", STEPS),
    (TRAIN, "--max-steps", "100000000000000000000", STEPS),
    (TRAIN, "--batch-size", "1_0", BATCH),
    (TRAIN, "--max-steps", "-3", STEPS),
    (TRAIN, "--eval-steps", "2.5", STEPS),
    (TRAIN, "--negatives", " 1", LIST),
    (TRAIN, "--drop-lower", "-1", "must be a whole number in [0, 1000]"),
    (TRAIN, "--transfer-lr", "nan", RATE),
    (TRAIN, "--patience", "0", STEPS),
    (TRAIN, "--seed", "-1", SEED),
    (TRAIN, "--seed", "4294967296", SEED),
    (["evaluate", "--model", "bm25", "--benchmark", "b"], "--max-length", "0", MAX_LENGTH),
    (["evaluate", "--model", "bm25", "--benchmark", "b"], "--max-steps", "0", STEPS),
    (["evaluate", "--model", "bm25", "--benchmark", "b"], "--max-steps", "1000000001", STEPS),
    (["build", "beer"], "--steps", "1000000001", STEPS),
    (["build", "beer"], "--steps", "1_0", STEPS),
    (["build", "beer"], "--steps", "0", STEPS),
    (CASCADE, "--max-steps", "1000000001", STEPS),
    (CASCADE, "--epochs", "1000000001", STEPS),
    (["evaluate", "--model", "bm25", "--benchmark", "b"], "--seed", "0x10", SEED),
    (
        ["build-benchmark", "F", "--out", "B"],
        "--candidates",
        "1",
        "must be a whole number in [2, 10000]",
    ),
    (
        ["build-benchmark", "F", "--out", "B"],
        "--candidates",
        "10001",
        "must be a whole number in [2, 10000]",
    ),
    (["compose", "--name", "c", "--rerank", "a", "b"], "--top-k", "1000000000", LIST),
    (ADAPT, "--top-k", "10001", LIST),
    (ADAPT, "--max-steps", "1000000001", STEPS),
    (TRAIN, "--negatives", "10001", LIST),
    (CASCADE, "--negatives", "10001", LIST),
    (["build-benchmark", "F", "--out", "B"], "--seed", "nan", SEED),
    (CASCADE, "--alpha", "1", ALPHA),
    (CASCADE, "--alpha", "nan", ALPHA),
    (CASCADE, "--lr", "nan", RATE),
    (CASCADE, "--exits", "0", LAYERS),
    (CASCADE, "--max-length", "-5", MAX_LENGTH),
    (CASCADE, "--negatives", "0", LIST),
    (["cascade-eval", "--model", "m", "--benchmark", "b"], "--alpha", "-0.1", ALPHA),
    (["cascade-eval", "--model", "m", "--benchmark", "b"], "--batch-size", "0", BATCH),
    (["sweep", "--benchmark", "b", "--adapters", "a"], "--batch-size", "0", BATCH),
    (["sweep", "--benchmark", "b", "--adapters", "a"], "--max-length", "0", MAX_LENGTH),
    (
        ["recommend", "--target", "t", "--adapters", "a"],
        "--dev-sample",
        "-5",
        "must be a whole number in [0, 100000000]",
    ),
    (["recommend", "--target", "t", "--adapters", "a"], "--questions", "0", QUESTIONS),
    (["recommend", "--target", "t", "--adapters", "a"], "--max-length", "100001.5", MAX_LENGTH),
    (["compose", "--name", "c", "--rerank", "a", "b"], "--top-k", "0", LIST),
    (["parse", "S", "--out", "O"], "--workers", "0", PROCESSES),
    (["parse", "S", "--out", "O"], "--max-positives", "-1", QUESTIONS),
    (["parse", "S", "--out", "O"], "--seed", "1e3", SEED),
    (["quickstart", "--out", "Q"], "--max-steps", "0", STEPS),
    (["quickstart", "--out", "Q"], "--max-steps", "1000000001", STEPS),
    (["quickstart", "--out", "Q"], "--budget", "0.5", BUDGET),
    (["quickstart", "--out", "Q"], "--budget", "nan", BUDGET),
    # upper bounds where there were none: a typo (an extra zero) is refused before any work
    (TRAIN, "--batch-size", "65537", BATCH),
    (TRAIN, "--eval-steps", "1000000001", STEPS),
    (TRAIN, "--patience", "1000000001", STEPS),
    (TRAIN, "--drop-lower", "1001", "must be a whole number in [0, 1000]"),
    (TRAIN, "--lora-r", "65537", WIDTH),
    (TRAIN, "--lora-r", "1_0", WIDTH),
    (TRAIN, "--lora-alpha", "0", WIDTH),
    (TRAIN, "--lora-alpha", " 16", WIDTH),
    (CASCADE, "--exits", "1001", LAYERS),
    (CASCADE, "--batch-size", "65537", BATCH),
    (["cascade-eval", "--model", "m", "--benchmark", "b"], "--batch-size", "65537", BATCH),
    (["sweep", "--benchmark", "b", "--adapters", "a"], "--batch-size", "65537", BATCH),
    (["recommend", "--target", "t", "--adapters", "a"], "--questions", "100000001", QUESTIONS),
    (
        ["recommend", "--target", "t", "--adapters", "a"],
        "--dev-sample",
        "100000001",
        "must be a whole number in [0, 100000000]",
    ),
    (["parse", "S", "--out", "O"], "--workers", "1025", PROCESSES),
    (["parse", "S", "--out", "O"], "--max-positives", "100000001", QUESTIONS),
]


@pytest.mark.parametrize(
    ("argv", "option", "value", "allowed"),
    CASES,
    ids=[f"{argv[0]} {option} {value}" for argv, option, value, _ in CASES],
)
def test_a_numeric_option_out_of_range_is_one_line_naming_it_and_its_range(
    argv, option, value, allowed, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main([*argv, f"{option}={value}"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error == f"adapter-zoo {argv[0]}: error: argument {option}: {allowed}, not {value!r}"
    assert list(tmp_path.iterdir()) == []


def test_numbers_are_read_as_plain_decimals_and_kept_in_range():
    assert number_option(integer=True, low=1)("12") == 12
    assert number_option(low=0)("2e-5") == 2e-5
    assert number_option(low=0)(".5") == 0.5
    for value in (True, float("nan"), float("inf"), "3", None, 2.0):
        with pytest.raises(AdapterZooError):
            check_number("n", value, integer=True)
    assert check_number("n", 2.0) == 2.0


def test_training_config_checks_the_same_numbers_for_python_callers():
    from adapter_zoo.errors import ZooError
    from adapter_zoo.training import TrainingConfig

    base = dict(mode="adapter", data="D", forums=("beer",), name="n", encoder="cross")
    for field, value, allowed in [
        ("lr", float("nan"), "a finite number >= 0"),
        ("max_length", 0, "a whole number in [1, 1000000]"),
        ("max_length", 2.5, "a whole number in [1, 1000000]"),
        ("batch_size", True, "a whole number in [1, 65536]"),
        ("batch_size", 65537, "a whole number in [1, 65536]"),
        ("lora_r", 0, "a whole number in [1, 65536]"),
        ("lora_r", 2.5, "a whole number in [1, 65536]"),
        ("lora_alpha", 10**6, "a whole number in [1, 65536]"),
        ("reduction_factor", 10**6, "a whole number in [1, 65536]"),
        ("drop_lower", 1001, "a whole number in [0, 1000]"),
        ("dev_queries", 10**8 + 1, "a whole number in [1, 100000000]"),
        ("epochs", -1, "a whole number in [1, 1000000000]"),
        ("max_steps", 0, "a whole number in [1, 1000000000]"),
        ("max_steps", 10**20, "a whole number in [1, 1000000000]"),
        ("transfer_epochs", 10**9 + 1, "a whole number in [1, 1000000000]"),
        ("eval_steps", float("inf"), "a whole number in [1, 1000000000]"),
        ("eval_steps", 10**9 + 1, "a whole number in [1, 1000000000]"),
        ("patience", 0, "a whole number in [1, 1000000000]"),
        ("patience", 10**9 + 1, "a whole number in [1, 1000000000]"),
        ("dev_candidates", 1, "a whole number in [2, 10000]"),
        ("dev_candidates", 10**6, "a whole number in [2, 10000]"),
        ("negatives", 10001, "a whole number in [1, 10000]"),
        ("weight_decay", -0.1, "a finite number >= 0"),
        ("transfer_lr", float("nan"), "a finite number >= 0"),
        ("seed", -1, "a whole number in [0, 4294967295]"),
    ]:
        with pytest.raises(ZooError) as error:
            TrainingConfig(**base, **{field: value})
        assert str(error.value) == f"{field} must be {allowed}, not {value!r}"


def test_cascade_config_and_keywords_check_their_numbers():
    from adapter_zoo.cascade.config import CascadeConfig
    from adapter_zoo.errors import ZooError

    for kwargs, message in [
        ({"alpha": float("nan")}, "cascade config: alpha must be a finite number in [0, 1), not nan"),
        ({"alpha": 1.0}, "cascade config: alpha must be a finite number in [0, 1), not 1.0"),
        ({"max_length": 4}, "cascade config: max_length must be a whole number in [8, 1000000], not 4"),
        ({"head_dropout": 1.5}, "cascade config: head_dropout must be a finite number in [0, 1), not 1.5"),
        ({"exits": (2.5,)}, "cascade config: exit layer must be a whole number in [1, 1000], not 2.5"),
        ({"exits": ("2",)}, "cascade config: exit layer must be a whole number in [1, 1000], not '2'"),
        ({"exits": (2, 10**6)}, "cascade config: exit layer must be a whole number in [1, 1000], not 1000000"),
        ({"exits": 4}, "cascade config: exits must be a list of layer numbers, not 4"),
        ({"head_hidden": 10**6}, "cascade config: head_hidden must be a whole number in [1, 65536], not 1000000"),
        ({"max_length": 10**7}, "cascade config: max_length must be a whole number in [8, 1000000], not 10000000"),
    ]:  # fmt: skip
        with pytest.raises(ZooError) as error:
            CascadeConfig(**kwargs)
        assert str(error.value) == message


def test_benchmark_and_parse_keywords_check_their_numbers(tmp_path):
    import benchmarks
    from benchmarks.errors import BenchmarkError
    from benchmarks.recommend import recommend
    from stackexchange.dump import parse_dump
    from stackexchange.errors import DumpError

    with pytest.raises(BenchmarkError) as error:
        benchmarks.evaluate("bm25", "local:" + str(tmp_path), max_length=0)
    assert str(error.value) == "max_length must be a whole number in [1, 1000000], not 0"
    with pytest.raises(BenchmarkError) as error:
        benchmarks.evaluate("bm25", "local:" + str(tmp_path), seed=float("nan"))
    assert str(error.value) == "seed must be a whole number in [0, 4294967295], not nan"
    with pytest.raises(BenchmarkError) as error:
        benchmarks.evaluate("bm25", "local:" + str(tmp_path), max_steps=10**20)
    assert str(error.value) == f"max_steps must be a whole number in [1, 1000000000], not {10**20}"
    with pytest.raises(AdapterZooError) as error:
        recommend(str(tmp_path), ["a"], dev_sample=-5)
    assert str(error.value) == (
        "recommend: dev_sample must be a whole number in [0, 100000000], not -5"
    )
    with pytest.raises(DumpError) as error:
        parse_dump(tmp_path, tmp_path / "out", workers=0)
    assert str(error.value) == "workers must be a whole number in [1, 1024], not 0"
    assert list(tmp_path.iterdir()) == []


def test_list_sizes_from_python_are_bounded_as_on_the_command_line():
    """A top-k of a billion was cut to the list at hand and recorded as given."""
    import numpy as np

    from adapter_zoo.adapt.plan import plan_adaptation
    from adapter_zoo.errors import ZooError

    for top_k in (0, 10**9):
        with pytest.raises(ZooError) as error:
            plan_adaptation(np.array([1.0, 0.0]), {"a": np.array([0.0, 1.0])}, top_k=top_k)
        assert str(error.value) == f"top_k must be a whole number in [1, 10000], not {top_k}"


def test_upper_bounds_hold_for_the_same_keywords_from_python(tmp_path, snapshot):
    """The options bounded on the command line (batch sizes, recommend's counts, parse's
    positives and workers, token limits) had no upper bound, or none at all, from Python:
    parse_forum ran with max_positives=2.5 and workers=10**6."""
    import benchmarks
    from adapter_zoo.cascade.inference import run_cascade
    from adapter_zoo.cascade.train import train_entry
    from adapter_zoo.errors import ZooError
    from adapter_zoo.sweep.sweep import sweep
    from benchmarks.cascade import evaluate_cascade
    from benchmarks.errors import BenchmarkError
    from benchmarks.recommend import recommend
    from benchmarks.sweep import sweep_benchmark
    from stackexchange.catalog import shipped_data
    from stackexchange.errors import DumpError
    from stackexchange.parse import parse_forum

    beer = shipped_data() / "beer.stackexchange.com.7z"
    before = snapshot(tmp_path)
    cases = [
        (lambda: sweep("b", ["a"], [("q", "c")], batch_size=10**6), ZooError,
         "sweep: batch_size must be a whole number in [1, 65536], not 1000000"),
        (lambda: sweep_benchmark("b", ["a"], batch_size=10**6), ZooError,
         "sweep: batch_size must be a whole number in [1, 65536], not 1000000"),
        (lambda: sweep_benchmark("b", ["a"], max_length=10**7), ZooError,
         "sweep: max_length must be a whole number in [1, 1000000], not 10000000"),
        (lambda: evaluate_cascade("m", "b", batch_size=10**6), ZooError,
         "cascade-eval: batch_size must be a whole number in [1, 65536], not 1000000"),
        (lambda: run_cascade(None, [], alpha=0.3, batch_size=10**6), ZooError,
         "cascade: batch_size must be a whole number in [1, 65536], not 1000000"),
        (lambda: train_entry("n", data=tmp_path, batch_size=10**6), ZooError,
         "cascade-train: batch_size must be a whole number in [1, 65536], not 1000000"),
        (lambda: recommend(str(tmp_path), ["a"], max_questions=10**9), ZooError,
         "recommend: max_questions must be a whole number in [1, 100000000], not 1000000000"),
        (lambda: recommend(str(tmp_path), ["a"], max_length=10**7), ZooError,
         "recommend: max_length must be a whole number in [1, 1000000], not 10000000"),
        (lambda: benchmarks.evaluate("bm25", "b", max_length=10**7), BenchmarkError,
         "max_length must be a whole number in [1, 1000000], not 10000000"),
        (lambda: parse_forum(beer, tmp_path / "out", max_positives=2.5), DumpError,
         "max_positives must be a whole number in [1, 100000000], not 2.5"),
        (lambda: parse_forum(beer, tmp_path / "out", workers=10**6), DumpError,
         "workers must be a whole number in [1, 1024], not 1000000"),
        (lambda: parse_forum(beer, tmp_path / "out", seed=-1), DumpError,
         "seed must be a whole number in [0, 4294967295], not -1"),
    ]  # fmt: skip
    for call, error, message in cases:
        with pytest.raises(error) as refused:
            call()
        assert str(refused.value) == message
    assert snapshot(tmp_path) == before
