"""The zoo sweep on the tiny BERT: one Parallel pass gives each adapter's own scores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import adapter_zoo
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.model import add_ranking_head, build_model
from adapter_zoo.sweep import independent_scores, resolve_adapter, sweep
from adapter_zoo.zoo import save_entry, zoo_home

# one xdist process runs this module (--dist loadgroup): tiny_adapters is a module fixture
pytestmark = pytest.mark.xdist_group("sweep")

PAIRS = [
    ("what is a stout", "a dark beer brewed with roasted malt and barley"),
    ("what is a stout", "a bicycle"),
    ("how are hops used", "for bitterness"),
    ("why is beer foamy", "carbon dioxide and proteins keep the foam stable for minutes"),
    ("single", "only"),
]


def make_adapters(
    base: str, folder, count: int, *, with_head: bool = True, drop_lower: int = 0, first: int = 0
) -> list[str]:
    """Random SeqBn adapters with one-logit heads, saved as adapter folders: every other one
    in safetensors, as training writes zoo entries, so a sweep mixes both formats.
    ``drop_lower``: no adapter in the lowest layers, as ``train --drop-lower``."""
    from adapters import SeqBnConfig

    paths = []
    for i in range(first, first + count):
        torch.manual_seed(100 + i)
        model, _ = build_model(base)
        model.add_adapter(f"a{i}", config=SeqBnConfig(leave_out=list(range(drop_lower))))
        add_ranking_head(model, f"a{i}")
        with torch.no_grad():  # make every adapter clearly different from the identity
            for name, param in model.named_parameters():
                if "adapters" in name:
                    param.add_(torch.randn_like(param) * 0.3)
        path = folder / f"adapter-{i}"
        model.save_adapter(str(path), f"a{i}", with_head=with_head, use_safetensors=i % 2 == 1)
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def tiny_adapters(tiny_bert_path, tmp_path_factory):
    return make_adapters(str(tiny_bert_path), tmp_path_factory.mktemp("adapters"), 3)


@pytest.mark.parametrize("base", ["tiny_bert_path", "tiny_sentence_bert_path"])
def test_sweep_equals_independent_rankers(base, request, tmp_path):
    base = str(request.getfixturevalue(base))  # CLS heads, then pair-cosine heads
    tiny_adapters = make_adapters(base, tmp_path, 3)
    shared = sweep(base, tiny_adapters, PAIRS, batch_size=2, device="cpu")
    separate = independent_scores(base, tiny_adapters, PAIRS, batch_size=3)
    assert list(shared) == tiny_adapters
    for path in tiny_adapters:
        assert shared[path].shape == (len(PAIRS),)
        np.testing.assert_allclose(shared[path], separate[path], atol=1e-5, rtol=0)
    # the adapters really differ, so a mixed-up head would be caught
    assert np.abs(shared[tiny_adapters[0]] - shared[tiny_adapters[1]]).max() > 1e-3


def test_sweep_single_adapter_and_empty_pairs(tiny_bert_path, tiny_adapters):
    one = sweep(str(tiny_bert_path), tiny_adapters[:1], PAIRS, device="cpu")
    ref = independent_scores(str(tiny_bert_path), tiny_adapters[:1], PAIRS)
    np.testing.assert_allclose(one[tiny_adapters[0]], ref[tiny_adapters[0]], atol=1e-5, rtol=0)
    empty = sweep(str(tiny_bert_path), tiny_adapters[:2], [], device="cpu")
    assert all(v.shape == (0,) for v in empty.values())


def test_sweep_rejects_headless_or_missing(tiny_bert_path, tmp_path):
    headless = make_adapters(str(tiny_bert_path), tmp_path, 1, with_head=False)
    with pytest.raises(ZooError, match="has no head_config.json"):
        sweep(str(tiny_bert_path), headless, PAIRS)
    with pytest.raises(ZooError, match="unknown adapter 'no-such-forum'"):
        sweep(str(tiny_bert_path), ["no-such-forum"], PAIRS)


def test_sweep_command_records_match_independent_scores(
    tiny_bert_path, tiny_adapters, tiny_benchmark, tmp_path, capsys
):
    import json

    from adapter_zoo.cli import main
    from adapter_zoo.metrics import evaluate_rankings

    bench = "local:" + str(tiny_benchmark)
    # bare adapter folders name no base model: the command says so
    assert main(["sweep", "--benchmark", bench, "--adapters", *tiny_adapters]) == 2
    assert "has no card naming its base model; pass --base" in capsys.readouterr().err
    results = tmp_path / "results"
    argv = [
        "sweep",
        "--benchmark",
        bench,
        "--adapters",
        *tiny_adapters,
        "--base",
        str(tiny_bert_path),
        "--results",
        str(results),
    ]
    assert main(argv) == 0
    records = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    assert [r["adapters"] for r in records] == [[a] for a in tiny_adapters]
    import datasets

    rows = datasets.load_from_disk(str(tiny_benchmark / "test"))
    pairs = [(q, c) for q, cands in zip(rows["query"], rows["candidates"]) for c in cands]
    separate = independent_scores(str(tiny_bert_path), tiny_adapters, pairs)
    bounds = np.cumsum([0] + [len(c) for c in rows["candidates"]])
    for record, adapter in zip(records, tiny_adapters):
        per_query = [separate[adapter][a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        expected = evaluate_rankings(per_query, rows["labels"])
        assert record["mode"] == "sweep" and record["sweep_size"] == len(tiny_adapters)
        assert record["metrics"]["map"] == pytest.approx(expected["map"], abs=1e-6)
        assert record["max_length"] == 300
    # --max-length reaches the model: the records match independent passes cut at 12 tokens
    short = tmp_path / "short"
    assert main([*argv[:-1], str(short), "--max-length", "12"]) == 0
    records = [json.loads(line) for line in (short / "results.jsonl").read_text().splitlines()]
    cut = independent_scores(str(tiny_bert_path), tiny_adapters, pairs, max_length=12)
    assert any(not np.allclose(cut[a], separate[a]) for a in tiny_adapters)
    for record, adapter in zip(records, tiny_adapters):
        per_query = [cut[adapter][a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        expected = evaluate_rankings(per_query, rows["labels"])
        assert record["max_length"] == 12
        assert record["metrics"]["map"] == pytest.approx(expected["map"], abs=1e-6)


class LayerInputs:
    """Records the batch size each transformer layer of the sweep's model sees, per call."""

    def __init__(self, monkeypatch):
        import importlib

        sweep_module = importlib.import_module("adapter_zoo.sweep.sweep")  # not the function
        self.sizes: dict[int, list[int]] = {}
        load = sweep_module.load_parallel_model

        def load_and_hook(*args, **kwargs):
            model, tokenizer, names = load(*args, **kwargs)
            for index, layer in enumerate(model.base_model.encoder.layer):
                layer.register_forward_pre_hook(self._hook(index), with_kwargs=True)
            return model, tokenizer, names

        monkeypatch.setattr(sweep_module, "load_parallel_model", load_and_hook)

    def _hook(self, index):
        def record(module, args, kwargs):
            hidden = args[0] if args else kwargs["hidden_states"]
            self.sizes.setdefault(index, []).append(hidden.shape[0])

        return record


# 5 pairs in batches of 2: 3 forward passes of 2, 2 and 1 pairs per group
BATCHES = [2, 2, 1]


@pytest.mark.parametrize("base", ["tiny_bert_path", "tiny_sentence_bert_path"])
def test_sweep_of_drop_lower_entries_equals_separate_passes(base, request, tmp_path, monkeypatch):
    base = str(request.getfixturevalue(base))  # CLS heads, then pair-cosine heads
    adapters = make_adapters(base, tmp_path, 3, drop_lower=1)
    inputs = LayerInputs(monkeypatch)
    shared = sweep(base, adapters, PAIRS, batch_size=2, device="cpu")
    separate = independent_scores(base, adapters, PAIRS, batch_size=2)
    for path in adapters:
        np.testing.assert_allclose(shared[path], separate[path], atol=1e-6, rtol=0)
    assert np.abs(shared[adapters[0]] - shared[adapters[1]]).max() > 1e-3
    # one Parallel pass: layer 0 (no adapter) and layer 1 (its adapter comes after its
    # feed-forward block) each run once per batch on the unreplicated batch, not once per
    # adapter; the batch is replicated 3 times only inside layer 1's adapter block
    assert inputs.sizes == {0: BATCHES, 1: BATCHES}


def test_without_drop_lower_the_second_layer_runs_once_per_adapter(
    tiny_bert_path, tiny_adapters, monkeypatch
):
    inputs = LayerInputs(monkeypatch)
    sweep(str(tiny_bert_path), tiny_adapters, PAIRS, batch_size=2, device="cpu")
    assert inputs.sizes == {0: BATCHES, 1: [3 * b for b in BATCHES]}


def test_entries_with_different_lower_layers_are_swept_in_one_pass_per_group(
    tiny_bert_path, tmp_path, monkeypatch
):
    from adapters.composition import Parallel

    from adapter_zoo.sweep import load_parallel_model, parallel_groups

    base = str(tiny_bert_path)
    dropped = make_adapters(base, tmp_path, 2, drop_lower=1)
    full = make_adapters(base, tmp_path, 2, first=2)
    adapters = [dropped[0], full[0], dropped[1], full[1]]
    model, tokenizer, names = load_parallel_model(base, adapters, device="cpu")
    assert parallel_groups(model, names) == [["sweep_0", "sweep_2"], ["sweep_1", "sweep_3"]]
    # why: one Parallel over adapters in different layers fails inside adapters 1.3
    model.set_active_adapters(Parallel(*names))
    model.active_head = Parallel(*names)
    batch = tokenizer(["a stout"], ["dark beer"], return_tensors="pt")
    with pytest.raises((KeyError, TypeError)), torch.inference_mode():
        model(**batch)

    inputs = LayerInputs(monkeypatch)
    shared = sweep(base, adapters, PAIRS, batch_size=2, device="cpu")
    separate = independent_scores(base, adapters, PAIRS, batch_size=2)
    assert list(shared) == adapters
    for path in adapters:
        np.testing.assert_allclose(shared[path], separate[path], atol=1e-6, rtol=0)
    # the drop-lower group first (2 adapters share layers 0 and 1), then the other group
    assert inputs.sizes == {0: BATCHES * 2, 1: BATCHES + [2 * b for b in BATCHES]}


def test_a_name_means_the_zoo_entry_never_a_folder_of_the_working_directory(
    tiny_bert_path, tmp_path, monkeypatch
):
    """sweep resolves names as load does (``resolve_entry``: the local zoo, then the Hub): a
    folder ``beer`` in the working directory neither stands in for the zoo's ``beer`` when the
    local zoo lacks it nor shadows it when it has it."""
    (tmp_path / "cwd").mkdir()
    # (safetensors: a pytorch_adapter.bin folder would be load's MultiCQA import instead)
    [folder] = make_adapters(str(tiny_bert_path), tmp_path / "cwd", 1, first=1)
    monkeypatch.chdir(tmp_path / "cwd")
    name = Path(folder).name
    for resolve in (resolve_adapter, adapter_zoo.load):
        with pytest.raises(ZooError, match=f"unknown adapter '{name}'"):
            resolve(name)
    assert resolve_adapter(f"./{name}") == Path(name)  # a path is a folder
    card = {"mode": "adapter", "base_model": str(tiny_bert_path)}
    entry = save_entry(lambda out: shutil.copytree(folder, out, dirs_exist_ok=True), name, card)
    assert resolve_adapter(name) == entry == zoo_home() / name


def test_entries_are_swept_at_their_own_max_length(tiny_bert_path, tiny_benchmark, tmp_path):
    """An entry trained at 12 tokens is swept at 12 (its card's max_length), as load and
    evaluate score it; one without a recorded length at 300."""
    from benchmarks import evaluate
    from benchmarks.sweep import sweep_benchmark

    folders = make_adapters(str(tiny_bert_path), tmp_path, 2, first=1)  # both safetensors
    for folder, name, length in zip(folders, ("short", "long"), ({"max_length": 12}, {})):
        card = {"mode": "adapter", "base_model": str(tiny_bert_path), **length}
        save_entry(lambda out, f=folder: shutil.copytree(f, out, dirs_exist_ok=True), name, card)
    bench = "local:" + str(tiny_benchmark)
    records = sweep_benchmark(bench, ["short", "long"])
    assert [r["max_length"] for r in records] == [12, 300]
    for record, name in zip(records, ("short", "long")):
        expected = evaluate(name, bench)
        assert expected["max_length"] == record["max_length"]
        assert record["metrics"] == pytest.approx(expected["metrics"], abs=1e-6)


@pytest.fixture
def two_entries(tiny_bert_path, tmp_path):
    """Two cross-encoder adapter entries of the zoo, ``one`` and ``two``."""
    folders = make_adapters(str(tiny_bert_path), tmp_path, 2, first=1)
    for folder, name in zip(folders, ("one", "two")):
        card = {"mode": "adapter", "base_model": str(tiny_bert_path)}
        save_entry(lambda out, f=folder: shutil.copytree(f, out, dirs_exist_ok=True), name, card)
    return ["one", "two"]


@pytest.mark.parametrize("spelling", ["name", "path"])
def test_a_sweep_naming_one_entry_twice_is_refused_before_anything_is_written(
    two_entries, tiny_benchmark, tmp_path, spelling, capsys
):
    from adapter_zoo.cli import main
    from benchmarks.sweep import sweep_benchmark

    bench = "local:" + str(tiny_benchmark)
    again = "one" if spelling == "name" else str(zoo_home() / "one")
    message = (
        "sweep: 'one' is named twice; name each model once"
        if spelling == "name"
        else f"sweep: 'one' and {again!r} are the same model; name each model once"
    )
    with pytest.raises(ZooError) as error:
        sweep_benchmark(bench, ["one", "two", again], results=tmp_path / "results")
    assert str(error.value) == message
    argv = [
        "sweep",
        "--benchmark",
        bench,
        "--adapters",
        "one",
        again,
        "--results",
        str(tmp_path / "results"),
    ]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"adapter-zoo sweep: error: {message}\n"
    argv = ["evaluate", "--model", "x", "--adapter", "one", again, "--benchmark", bench,
            "--results", str(tmp_path / "results")]  # fmt: skip
    assert main(argv) == 2
    assert (
        capsys.readouterr().err
        == f"adapter-zoo evaluate: error: {message.replace('sweep', 'evaluate')}\n"
    )
    assert not (tmp_path / "results").exists()


def test_a_sweep_that_fails_on_a_later_model_writes_no_record(
    two_entries, tiny_benchmark, tmp_path
):
    from benchmarks.sweep import sweep_benchmark

    bench = "local:" + str(tiny_benchmark)
    with pytest.raises(ZooError, match=r"^unknown adapter 'missing'"):
        sweep_benchmark(bench, ["one", "missing"], results=tmp_path / "results")
    assert not (tmp_path / "results").exists()


def test_the_shared_pass_refuses_a_bi_encoder_entry_in_one_line(
    two_entries, tiny_bert_path, tmp_path
):
    card_file = zoo_home() / "two" / "card.json"
    card = json.loads(card_file.read_text())
    card["encoder"] = "bi"
    card_file.write_text(json.dumps(card))
    with pytest.raises(ZooError) as error:
        sweep(str(tiny_bert_path), ["one", "two"], PAIRS)
    assert str(error.value) == (
        f"sweep: {zoo_home() / 'two'} is a bi-encoder entry; the shared pass takes "
        "cross-encoder adapters (sweep_benchmark scores the others one by one)"
    )


def test_sweep_refuses_bad_numbers_and_non_string_pairs(tiny_bert_path, tiny_adapters):
    base = str(tiny_bert_path)
    for kwargs, message in [
        ({"batch_size": 0}, "sweep: batch_size must be a whole number in [1, 65536], not 0"),
        ({"max_length": 0}, "sweep: max_length must be a whole number >= 1, not 0"),
        ({"max_length": 100_000}, f"sweep: max_length 100000 is above the 512 positions of {base}"),
    ]:
        with pytest.raises(ZooError) as error:
            sweep(base, tiny_adapters[:1], PAIRS, **kwargs)
        assert str(error.value) == message
    with pytest.raises(ZooError) as error:
        sweep(base, tiny_adapters[:1], [("q", None)])
    assert str(error.value) == "sweep: pair 0: candidate is NoneType, not a string"


def test_sweep_over_a_cross_and_a_bi_encoder_entry_scores_each_and_prints_one_line_each(
    two_entries, tiny_bert_path, tiny_sentence_bert_path, tiny_benchmark, tmp_path, capsys
):
    """Issue 34: the cross-encoder entry shares the pass, the bi-encoder entry is scored on its
    own; the command printed the bi-encoder's record by its (empty) adapters list, an
    IndexError after the records were written."""
    import adapter_zoo
    from adapter_zoo.biencoder.layouts import write_bi_full
    from adapter_zoo.cli import main

    encoder = adapter_zoo.BiEncoder.from_base(str(tiny_sentence_bert_path), device="cpu")
    save_entry(lambda folder: write_bi_full(encoder.model, folder), "bi",
               {"mode": "full", "encoder": "bi", "layout": "full",
                "base_model": str(tiny_sentence_bert_path)})  # fmt: skip
    bench, results = "local:" + str(tiny_benchmark), tmp_path / "results"
    argv = ["sweep", "--benchmark", bench, "--adapters", "one", "bi", "--results", str(results)]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in out] == ["one", "bi"]
    records = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    # the shared pass records its base as the model and the entry as its adapter
    assert [(r["model"], r["adapters"]) for r in records] == [
        (str(tiny_bert_path), ["one"]),
        ("bi", []),
    ]
