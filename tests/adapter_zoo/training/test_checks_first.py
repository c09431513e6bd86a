"""What can be checked before the expensive part is checked first: a zoo home
that cannot take the entry, cascade exits beyond the base's layers and a token limit beyond
its positions (read from its config.json) are one line before any model or data loads."""

from __future__ import annotations

import errno
import sys
import tempfile

import pytest

from adapter_zoo.cli import main
from adapter_zoo.errors import ZooError
from adapter_zoo.zoo.store import zoo_home
from stackexchange.io import check_writable


def _forbidden(*_args, **_kwargs):
    raise AssertionError("the model (or the data) was loaded before the checks")


@pytest.fixture
def no_training(monkeypatch):
    """Training and model loading fail the test if reached."""
    import adapter_zoo.training.bi
    import adapter_zoo.training.cross  # noqa: F401
    import adapter_zoo.training.data

    monkeypatch.setattr(sys.modules["adapter_zoo.training.cross"], "train_cross_encoder",
                        _forbidden)  # fmt: skip
    monkeypatch.setattr(adapter_zoo.training.bi, "train_bi_encoder", _forbidden)
    monkeypatch.setattr(adapter_zoo.training.data, "resolve_forums", _forbidden)
    monkeypatch.setattr("adapter_zoo.cascade.model.CascadeRanker.from_base", _forbidden)
    monkeypatch.setattr("adapter_zoo.cascade.data.pairs_from_parsed", _forbidden)
    monkeypatch.setattr("benchmarks.cascade.pairs_from_benchmark", _forbidden)


def _train(parsed, base, *more):
    return ["train", "--mode", "adapter", "--data", str(parsed), "--forums", "beer.example", "--name", "entry",
            "--base", str(base), "--max-steps", "1", *more]  # fmt: skip


ADVICE = "make it writable, or set ADAPTER_ZOO_HOME to a folder you can write"


def test_train_into_a_zoo_home_whose_checkpoints_cannot_be_made_fails_first(
    no_training, parsed_forums, tiny_bert_path, capsys
):
    home = zoo_home()
    home.mkdir(parents=True, exist_ok=True)
    (home / ".checkpoints").write_text("a file where the checkpoints go")
    assert main(_train(parsed_forums, tiny_bert_path)) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo train: error: {home / '.checkpoints'}: cannot write zoo entries there "
        f"({home / '.checkpoints'} is not a folder); {ADVICE} (the zoo home is {home})\n"
    )
    assert sorted(p.name for p in home.iterdir()) == [".checkpoints"]


def test_train_into_a_read_only_zoo_home_fails_first(
    no_training, parsed_forums, tiny_bert_path, monkeypatch, capsys
):
    home = zoo_home()
    home.mkdir(parents=True, exist_ok=True)

    def read_only(*_args, dir=None, **_kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(dir))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    assert main(_train(parsed_forums, tiny_bert_path)) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo train: error: {home}: cannot write zoo entries there (Read-only file "
        f"system); {ADVICE} (the zoo home is {home})\n"
    )


def test_train_into_a_zoo_home_below_a_file_fails_first(
    no_training, parsed_forums, tiny_bert_path, monkeypatch, tmp_path, capsys
):
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path / "file" / "zoo"))
    assert main(_train(parsed_forums, tiny_bert_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"adapter-zoo train: error: {tmp_path / 'file' / 'zoo'}: cannot write")
    assert err.count("\n") == 1 and f"({tmp_path / 'file'} is not a folder)" in err


def test_check_writable_writes_nothing_and_names_the_folder(tmp_path):
    check_writable(tmp_path / "new" / "deeper", what="x", advice="y", error=ZooError)
    check_writable(tmp_path, what="x", advice="y", error=ZooError)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("source", ["data", "benchmark"])
def test_cascade_exits_beyond_the_base_are_refused_before_it_loads(
    source, no_training, parsed_forums, tiny_benchmark, tiny_bert_path, capsys
):
    given = (["--data", str(parsed_forums)] if source == "data"
             else ["--benchmark", f"local:{tiny_benchmark}"])  # fmt: skip
    argv = ["cascade-train", *given, "--name", "c", "--base", str(tiny_bert_path)]
    assert main([*argv, "--exits", "1", "5"]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo cascade-train: error: cascade-train: exit layer 5 is beyond the 2 layers "
        f"of base {str(tiny_bert_path)!r} (its config.json); choose exits in 1..2\n"
    )
    assert main([*argv, "--max-length", "1000"]) == 2
    assert capsys.readouterr().err == (
        "adapter-zoo cascade-train: error: cascade-train: max_length 1000 is above the 512 "
        f"positions of {tiny_bert_path}\n"
    )
    assert not (zoo_home() / "c").exists()


def test_adapt_into_a_zoo_home_whose_checkpoints_cannot_be_made_fails_first(
    no_training, parsed_shipped, monkeypatch, capsys
):
    import adapter_zoo.adapt.threads  # noqa: F401  (the package's adapt function shadows it)

    monkeypatch.setattr(sys.modules["adapter_zoo.adapt.threads"], "read_threads", _forbidden)
    home = zoo_home()
    home.mkdir(parents=True, exist_ok=True)
    (home / ".checkpoints").write_text("a file where the checkpoints go")
    target = str(parsed_shipped / "beer.stackexchange.com")
    assert main(["adapt", "--target", target, "--name", "beer-adapted"]) == 2
    assert capsys.readouterr().err == (
        f"adapter-zoo adapt: error: {home / '.checkpoints'}: cannot write zoo entries there "
        f"({home / '.checkpoints'} is not a folder); {ADVICE} (the zoo home is {home})\n"
    )
    with pytest.raises(SystemExit) as exit_code:
        main(["adapt", "--target", target, "--name", "x", "--top-k", "0"])
    assert exit_code.value.code == 2
    assert "--top-k: must be a whole number in [1, 10000], not '0'" in capsys.readouterr().err
