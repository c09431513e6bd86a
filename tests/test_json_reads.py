"""The JSON files a user or an entry hands in, read outside the training code, go through
``stackexchange.jsontext``: deep nesting, or a list where an object belongs, is one line
naming the file (not a RecursionError, AttributeError or TypeError traceback),
or, for a reader that only asks whether a folder is its own, a plain no."""

from __future__ import annotations

from pathlib import Path

import pytest

DEEP = "[" * 100_000
NESTED = "not valid JSON (nested too deeply)"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "reason"),
    [(DEEP, NESTED), ("[1]", "a parsed forum's stats must be a JSON object, not a list")],
    ids=["deep", "list"],
)
def test_a_broken_stats_json_is_one_line_naming_it(tmp_path, text, reason):
    import stackexchange
    from stackexchange.errors import DumpError

    stats = _write(tmp_path / "beer" / "stats.json", text)
    with pytest.raises(DumpError) as refused:
        stackexchange.read_stats(stats.parent)
    assert str(refused.value) == f"{stats}: {reason}"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (DEEP, NESTED),
        ("[1]", "a DatasetDict's index must be a JSON object, not a list"),
        ('{"splits": 5}', "'splits' must be a list of split names"),
    ],
    ids=["deep", "list", "splits"],
)
def test_a_broken_duplicates_index_is_one_line_naming_it(tmp_path, text, reason):
    from benchmarks.builder import _load_duplicates
    from benchmarks.errors import BenchmarkError

    index = _write(tmp_path / "duplicates" / "dataset_dict.json", text)
    with pytest.raises(BenchmarkError) as refused:
        _load_duplicates(tmp_path)
    assert str(refused.value) == f"{index}: {reason}"


@pytest.mark.parametrize("text", [DEEP, "[1]"], ids=["deep", "list"])
def test_a_broken_benchmark_json_at_build_benchmark_out_is_not_a_benchmark(
    tmp_path, capsys, snapshot, text
):
    from adapter_zoo.cli import main

    out = tmp_path / "bench"
    _write(out / "benchmark.json", text)
    before = snapshot(tmp_path)
    assert main(["build-benchmark", str(tmp_path / "forum"), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo build-benchmark: error: {out}: already exists and is not a benchmark "
        "written by adapter-zoo; move it away or pass --overwrite\n"
    )
    assert snapshot(tmp_path) == before


def test_broken_adapter_and_head_configs_are_one_line_or_left_out(tmp_path):
    from adapter_zoo.adapt.soup import _adapter_config
    from adapter_zoo.errors import ZooError
    from adapter_zoo.zoo.layouts import adapter_settings
    from adapter_zoo.zoo.snippets import entry_head_type

    config = _write(tmp_path / "adapter_config.json", DEEP)
    _write(tmp_path / "head_config.json", DEEP)
    for read in (adapter_settings, _adapter_config):
        with pytest.raises(ZooError) as refused:
            read(tmp_path)
        assert str(refused.value) == f"{config}: {NESTED}"
    assert entry_head_type(tmp_path) is None  # a snippet leaves a broken head config out


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("modules.json", DEEP, NESTED),
        ("modules.json", "{}", "must be a JSON list of modules"),
        ("1_Pooling/config.json", DEEP, NESTED),
        ("1_Pooling/config.json", "[]", "must be a JSON object"),
    ],
    ids=["modules-deep", "modules-object", "pooling-deep", "pooling-list"],
)
def test_a_broken_sentence_model_file_is_one_line_naming_it(tmp_path, name, text, reason):
    from adapter_zoo.errors import ZooError
    from adapter_zoo.ranker.model import mean_pooling_base

    _write(tmp_path / "modules.json", '[{"path": "1_Pooling", "type": "x.Pooling"}]')
    broken = _write(tmp_path / name, text)
    with pytest.raises(ZooError) as refused:
        mean_pooling_base(str(tmp_path))
    assert str(refused.value) == f"{broken}: {reason}"


def test_a_deep_json_file_among_an_entrys_configs_or_temporary_records_is_left_alone(tmp_path):
    from adapter_zoo.zoo.untrusted import strip_model_paths
    from stackexchange.io import RECORD_SUFFIX, TEMP_MARK, remove_stale_temporaries

    config = _write(tmp_path / "entry" / "config.json", DEEP)
    strip_model_paths(config.parent, "minilm-l6")
    assert config.read_text(encoding="utf-8") == DEEP
    temporary = tmp_path / "out" / f".board{TEMP_MARK}1-abc"
    temporary.mkdir(parents=True)
    record = _write(temporary.with_name(temporary.name + RECORD_SUFFIX), DEEP)
    assert remove_stale_temporaries(tmp_path / "out") == []  # no record of ours: a user's
    assert temporary.is_dir() and record.is_file()


def test_deep_json_in_a_benchmarks_data_files_is_one_line_naming_it(tmp_path):
    from benchmarks.datasets.trecqa import read_jsonl
    from benchmarks.datasets.wikipassageqa import PASSAGES, WikiPassageQA
    from benchmarks.errors import BenchmarkError

    lines = _write(tmp_path / "trecqa.jsonl", DEEP + "\n")
    with pytest.raises(BenchmarkError) as refused:
        read_jsonl(lines)
    assert str(refused.value) == (
        f"{lines}:1: bad TREC-QA record (JSONTextError('nested too deeply'))"
    )
    passages = _write(tmp_path / PASSAGES, DEEP)
    with pytest.raises(BenchmarkError) as refused:
        WikiPassageQA().read("test", tmp_path)
    assert str(refused.value) == f"{passages}: {NESTED}"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (DEEP, NESTED),
        ("[1]", "a DatasetDict's index must be a JSON object, not a list"),
        ('{"splits": 5}', "'splits' must be a list of split names"),
        ('{"splits": ["train", 1]}', "'splits' must be a list of split names"),
    ],
    ids=["deep", "list", "splits", "split-number"],
)
def test_a_broken_dataset_dict_json_of_a_parsed_forum_is_one_line_naming_it(tmp_path, text, reason):
    """Training read it with ``json.loads(...)["splits"]``: a list there was a TypeError
    traceback, deep nesting a RecursionError."""
    from adapter_zoo.errors import ZooError
    from adapter_zoo.training.data import read_split

    index = _write(tmp_path / "beer" / "title_body" / "dataset_dict.json", text)
    with pytest.raises(ZooError) as refused:
        read_split(index.parent, "train")
    assert str(refused.value) == f"{index}: {reason}"


def test_a_missing_dataset_dict_json_still_says_to_parse(tmp_path):
    from adapter_zoo.errors import ZooError
    from adapter_zoo.training.data import read_split

    with pytest.raises(ZooError) as refused:
        read_split(tmp_path, "train")
    assert str(refused.value) == (
        f"{tmp_path}: missing or not a saved DatasetDict (run adapter-zoo parse)"
    )


def test_a_deep_run_json_in_a_checkpoint_folder_is_another_runs(tmp_path):
    """The run file of ``.checkpoints/<name>`` decides whether a run resumes there; deep
    nesting was a RecursionError traceback, now it is a run that is not this one (the
    folder, the project's own, is emptied as for any other run)."""
    from adapter_zoo.training.checkpoint import RUN_FILE, _run_of

    _write(tmp_path / RUN_FILE, DEEP)
    assert _run_of(tmp_path) is None
    _write(tmp_path / RUN_FILE, '{"config": {}, "encoder": "bi"}')
    assert _run_of(tmp_path) == {"config": {}, "encoder": "bi"}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (DEEP, "nested too deeply"),
        ("[1]", "not a finished phase's log, steps and best record"),
        ('{"log": [], "steps": 3}', "not a finished phase's log, steps and best record"),
        (
            '{"log": 1, "steps": 3, "best": null}',
            "not a finished phase's log, steps and best record",
        ),
    ],
    ids=["deep", "list", "no-best", "log-number"],
)
def test_a_broken_finished_phase_of_a_resumed_run_is_one_line_naming_it(tmp_path, text, reason):
    """A resumed tanda run reads ``transfer-done.json``: it was ``json.loads(...)["log"]``,
    a TypeError, KeyError or RecursionError traceback on a damaged one."""
    from adapter_zoo.errors import ZooError
    from adapter_zoo.training.trainer import Phase, run_phases

    done = _write(tmp_path / "transfer-done.json", text)
    phase = Phase("transfer", lr=1e-5, steps=1, steps_per_epoch=1, eval_steps=1, warmup=0,
                  selects=False)  # fmt: skip
    with pytest.raises(ZooError) as refused:
        run_phases(None, None, [phase], tmp_path, make_trainer=None)
    assert str(refused.value) == (
        f"{done}: corrupt or truncated checkpoint ({reason}); "
        "run adapter-zoo train again with --restart to start over"
    )
