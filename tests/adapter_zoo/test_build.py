"""``adapter_zoo.load(forum)`` on an empty zoo: built from the (loopback) dump mirror, once.

The mirror (``dump_mirror`` in tests/conftest.py) serves the shipped archives as archive.org
lays out its ``stackexchange`` collection; each test has its own empty zoo.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.build import DUMPS_FOLDER, build_entry, estimate_seconds
from adapter_zoo.cli import main
from adapter_zoo.errors import ZooError
from adapter_zoo.resolve import catalog_forum
from adapter_zoo.zoo.store import zoo_home
from stackexchange.catalog import shipped_data

BEER_SHA256 = "d573263dcfa9e08944e02fc28d6c62dbfa3110981f9658236d276036e2154596"
PAIRS = [("Which glass for a stout?", "A nonic pint glass."), ("Is IPA bitter?", "Hops.")]


@pytest.fixture
def tiny(tiny_sentence_bert_path) -> str:
    return str(tiny_sentence_bert_path)


def test_load_builds_a_forum_on_an_empty_zoo_once(dump_mirror, tiny, caplog):
    assert not (zoo_home() / "beer").exists()
    with caplog.at_level("INFO", logger="adapter_zoo.build"):
        encoder = adapter_zoo.load("beer", base_model=tiny, build_steps=2, device="cpu")
    assert type(encoder).__name__ == "BiEncoder"
    (line,) = [r.getMessage() for r in caplog.records if r.name == "adapter_zoo.build"]
    assert line.startswith(
        "building zoo entry 'beer' from beer.stackexchange.com's dump: downloading 3 MB from "
        f"{dump_mirror.url}, parsing 914 questions, training a bi-encoder adapter on {tiny} "
        "(2 steps); roughly "
    )
    card = encoder.card
    assert card["name"] == "beer" and card["forums"] == ["beer.stackexchange.com"]
    assert card["training"]["max_steps"] == 2 and card["training"]["mode"] == "adapter"
    assert card["source"]["sha256"] == BEER_SHA256
    assert card["source"]["dump"] == f"{dump_mirror.url}/beer.stackexchange.com.7z"
    assert (zoo_home() / "beer" / "card.json").is_file()
    assert list((zoo_home() / DUMPS_FOLDER).iterdir()) == []  # the dump is not kept
    first = encoder.score(PAIRS)

    again = adapter_zoo.load("beer", device="cpu")  # from the zoo, no download
    by_host = adapter_zoo.load("beer.stackexchange.com", device="cpu")
    assert len(dump_mirror.archive_requests()) == 1
    np.testing.assert_array_equal(again.score(PAIRS), first)
    np.testing.assert_array_equal(by_host.score(PAIRS), first)


def test_build_false_refuses_and_says_how_to_build(dump_mirror):
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("bicycles.meta", build=False)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(
        f"'bicycles.meta' is not in the local zoo ({zoo_home()}) nor on the Hub ("
    )
    assert message.endswith(
        "it is the forum bicycles.meta.stackexchange.com, whose entry can be built from its "
        "dump: adapter_zoo.load('bicycles.meta') builds it (without build=False), as does "
        "`adapter-zoo build bicycles.meta` (--dump PATH for a dump you have)"
    )
    assert dump_mirror.requests == []


def test_a_size_mismatch_is_one_line_and_nothing_is_cached(dump_mirror, tiny):
    dump_mirror.listing["beer.stackexchange.com.7z"] = 1234
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("beer", base_model=tiny, build_steps=2)
    assert str(error.value) == (
        f"cannot build 'beer': {dump_mirror.url}/beer.stackexchange.com.7z: 3,337,659 bytes, "
        f"but the mirror's listing {dump_mirror.url}/stackexchange_files.xml says 1,234; "
        "refused (a different or damaged dump)"
    )
    assert [p.name for p in zoo_home().iterdir()] == [DUMPS_FOLDER]
    assert list((zoo_home() / DUMPS_FOLDER).iterdir()) == []
    assert adapter_zoo.list_entries() == []


def test_no_network_is_one_line_saying_what_to_do(monkeypatch, tiny):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/download/stackexchange"
    monkeypatch.setenv("ADAPTER_ZOO_DUMP_MIRROR", url)
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("beer", base_model=tiny)
    assert str(error.value) == (
        f"no network: cannot download {url}/stackexchange_files.xml (connection refused); "
        "build from a dump you have (`adapter-zoo build beer --dump beer.stackexchange.com.7z`, "
        "or adapter-zoo parse + train) or set ADAPTER_ZOO_DUMP_MIRROR to a mirror you can reach"
    )
    assert adapter_zoo.list_entries() == []


def test_the_offline_switch_is_one_line_saying_what_to_do(dump_mirror, monkeypatch):
    monkeypatch.setenv("ADAPTER_ZOO_OFFLINE", "1")
    with pytest.raises(ZooError) as error:
        adapter_zoo.load("beer")
    assert str(error.value) == (
        f"no network: cannot download {dump_mirror.url}/beer.stackexchange.com.7z "
        "(ADAPTER_ZOO_OFFLINE is set); build from a dump you have (`adapter-zoo build beer "
        "--dump beer.stackexchange.com.7z`, or adapter-zoo parse + train) or unset "
        "ADAPTER_ZOO_OFFLINE"
    )
    assert dump_mirror.requests == []


def test_an_interrupted_download_leaves_no_entry_and_no_dump_that_looks_complete(dump_mirror, tiny):
    dump_mirror.cut_after["beer.stackexchange.com.7z"] = 500_000
    with pytest.raises(ZooError, match="download cut short at 500,000 of 3,337,659 bytes"):
        adapter_zoo.load("beer", base_model=tiny, build_steps=2)
    assert [p.name for p in (zoo_home() / DUMPS_FOLDER).iterdir()] == [
        "beer.stackexchange.com.7z.part"
    ]
    assert [p.name for p in zoo_home().iterdir()] == [DUMPS_FOLDER]
    with pytest.raises(ZooError, match="'beer' is not in the local zoo"):
        adapter_zoo.load("beer", build=False)


def test_a_name_that_is_no_forum_keeps_the_unknown_adapter_error(dump_mirror):
    with pytest.raises(
        ZooError, match=r"^unknown adapter 'beerr'; no similar local name; local zoo at "
    ):
        adapter_zoo.load("beerr")
    assert catalog_forum("beerr") is None and dump_mirror.requests == []


def test_build_command_takes_a_dump_you_have(tiny, capsys):
    # the work folder of a killed build (its process is gone) is removed, a live one's kept
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = zoo_home() / f".bicycles.meta.tmp-build-{int(dead.stdout)}-0badc0de"
    live = zoo_home() / f".bicycles.meta.tmp-build-{os.getpid()}-0badc0de"
    (stale / "parsed").mkdir(parents=True)
    live.mkdir()
    dump = shipped_data() / "bicycles.meta.stackexchange.com.7z"
    argv = ["build", "bicycles.meta", "--dump", str(dump), "--base", tiny, "--steps", "1"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert (
        out.strip()
        .splitlines()[-1]
        .startswith("adapter-zoo build: wrote zoo entry 'bicycles.meta' at ")
    )
    assert (
        "adapter-zoo build: building zoo entry 'bicycles.meta' from "
        f"bicycles.meta.stackexchange.com's dump: reading {dump}, parsing 387 questions, "
        f"training a bi-encoder adapter on {tiny} (1 steps); roughly "
    ) in err
    card = adapter_zoo.load("bicycles.meta", build=False).card
    assert card["forums"] == ["bicycles.meta.stackexchange.com"]
    assert card["source"]["dump"] == str(dump) and card["source"]["size"] == 409_506
    # the same build again (after a kill once its entry was in place): nothing to train
    written = (zoo_home() / "bicycles.meta" / "card.json").read_bytes()
    assert main(argv) == 0
    assert "is this build's, written by an earlier run; nothing to train" in (
        capsys.readouterr().err
    )
    assert (zoo_home() / "bicycles.meta" / "card.json").read_bytes() == written
    assert main([*argv[:-1], "2"]) == 2  # another build of the name
    assert "zoo entry 'bicycles.meta' already exists" in capsys.readouterr().err
    assert not stale.exists() and live.is_dir()
    names = {p.name for p in zoo_home().iterdir() if p.name != ".checkpoints"}
    assert names == {live.name, "bicycles.meta"}


def test_evaluate_no_build_refuses_a_forum_name(dump_mirror, capsys):
    fixtures = Path(__file__).parents[1] / "benchmarks" / "fixtures"
    argv = ["evaluate", "--model", "beer", "--benchmark", "wikiqa", "--data-dir", str(fixtures)]
    assert main([*argv, "--no-build"]) == 2
    err = capsys.readouterr().err
    assert "whose entry can be built from its dump" in err and len(err.strip().splitlines()) == 1
    assert dump_mirror.requests == []


def test_build_entry_refuses_a_name_outside_the_catalog():
    with pytest.raises(
        ZooError, match=r"^cannot build 'no-such-forum': unknown forum 'no-such-forum'"
    ):
        build_entry("no-such-forum")


def test_the_estimate_grows_with_the_forum():
    assert estimate_seconds(catalog_forum("beer")) < estimate_seconds(catalog_forum("travel"))
