"""Downloading a forum's dump from a mirror laid out as archive.org's collection (loopback)."""

from __future__ import annotations

import hashlib
import shutil
import socket

import pytest

from stackexchange.catalog import find_forum, shipped_data
from stackexchange.download import (
    DEFAULT_MIRROR,
    LISTING_FILE,
    NoNetwork,
    archive_name,
    download_dump,
    dump_mirror,
)
from stackexchange.errors import DumpError

BEER = "beer.stackexchange.com.7z"
# ATTRIBUTION.md of stackexchange/samples: the archive as archive.org distributed it in 2020
BEER_SHA256 = "d573263dcfa9e08944e02fc28d6c62dbfa3110981f9658236d276036e2154596"
BEER_BYTES = 3_337_659


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_default_mirror_is_archive_orgs_collection(monkeypatch):
    monkeypatch.delenv("ADAPTER_ZOO_DUMP_MIRROR", raising=False)
    assert dump_mirror() == DEFAULT_MIRROR == "https://archive.org/download/stackexchange"
    assert archive_name(find_forum("travel")) == "travel.stackexchange.com.7z"


def test_download_is_checked_against_the_mirrors_listing(dump_mirror, monkeypatch, tmp_path):
    dump = download_dump("beer", tmp_path / "dumps")
    assert dump.path == tmp_path / "dumps" / BEER
    assert (dump.size, dump.sha256) == (BEER_BYTES, BEER_SHA256)
    assert dump.url == f"{dump_mirror.url}/{BEER}"
    assert dump.checked == f"the mirror's listing {dump_mirror.url}/{LISTING_FILE}"
    assert [p for p, _ in dump_mirror.requests] == [
        f"/download/stackexchange/{LISTING_FILE}",
        f"/download/stackexchange/{BEER}",
    ]
    assert sorted(p.name for p in (tmp_path / "dumps").iterdir()) == [BEER]
    # a checked archive is reused without asking the mirror, even offline
    monkeypatch.setenv("ADAPTER_ZOO_OFFLINE", "1")
    again = download_dump("beer.stackexchange.com", tmp_path / "dumps")
    assert (again.sha256, again.checked) == (BEER_SHA256, "an earlier download, checked then")
    assert len(dump_mirror.requests) == 2


def test_a_size_unlike_the_listing_is_refused_and_nothing_is_kept(dump_mirror, tmp_path):
    dump_mirror.listing[BEER] = BEER_BYTES + 1
    with pytest.raises(DumpError) as error:
        download_dump("beer", tmp_path / "dumps")
    message = str(error.value)
    assert message == (
        f"{dump_mirror.url}/{BEER}: 3,337,659 bytes, but the mirror's listing "
        f"{dump_mirror.url}/{LISTING_FILE} says 3,337,660; refused (a different or damaged dump)"
    )
    assert list((tmp_path / "dumps").iterdir()) == []


def test_without_a_listing_the_catalogs_size_is_checked(dump_mirror, tmp_path):
    # the shipped archive is the 2020-06 dump; the catalog records the 2018-12-02 one
    dump_mirror.listing = None
    with pytest.raises(
        DumpError,
        match=r"3,337,659 bytes, but the catalog's size \(2018-12-02 dump\) says 2,853,097; refused",
    ):
        download_dump("beer", tmp_path / "dumps")
    assert list((tmp_path / "dumps").iterdir()) == []


def test_a_checksum_unlike_the_listing_is_refused(dump_mirror, tmp_path):
    real = dump_mirror.files[BEER]
    listing = dump_mirror.listing_xml()
    dump_mirror.files[BEER] = real[:-1] + bytes([real[-1] ^ 1])  # same size, one bit off
    dump_mirror.listing_xml = lambda: listing
    with pytest.raises(
        DumpError, match=r"sha1 [0-9a-f]{40} does not match [0-9a-f]{40} in the mirror's listing"
    ):
        download_dump("beer", tmp_path / "dumps")
    assert list((tmp_path / "dumps").iterdir()) == []


def test_a_cut_short_download_never_looks_complete_and_resumes(dump_mirror, tmp_path):
    dump_mirror.cut_after[BEER] = 1_000_000
    with pytest.raises(DumpError, match="download cut short at 1,000,000 of 3,337,659 bytes"):
        download_dump("beer", tmp_path / "dumps")
    assert [p.name for p in (tmp_path / "dumps").iterdir()] == [f"{BEER}.part"]
    del dump_mirror.cut_after[BEER]
    dump = download_dump("beer", tmp_path / "dumps")
    assert dump.sha256 == BEER_SHA256
    assert dump_mirror.archive_requests()[-1] == (
        f"/download/stackexchange/{BEER}",
        "bytes=1000000-",
    )
    assert sorted(p.name for p in (tmp_path / "dumps").iterdir()) == [BEER]


def test_a_mirror_that_refuses_connections_is_no_network(monkeypatch, tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/download/stackexchange"
    monkeypatch.setenv("ADAPTER_ZOO_DUMP_MIRROR", url)
    with pytest.raises(NoNetwork) as error:
        download_dump("beer", tmp_path)
    assert (
        str(error.value) == f"no network: cannot download {url}/{LISTING_FILE} (connection refused)"
    )
    assert "\n" not in str(error.value)


def test_the_offline_switch_stops_the_download_before_any_request(
    dump_mirror, monkeypatch, tmp_path
):
    monkeypatch.setenv("ADAPTER_ZOO_OFFLINE", "1")
    with pytest.raises(NoNetwork, match="ADAPTER_ZOO_OFFLINE is set"):
        download_dump("beer", tmp_path)
    assert dump_mirror.requests == []


def test_hf_hub_offline_stops_archive_org_but_not_a_named_mirror(
    dump_mirror, monkeypatch, tmp_path
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert download_dump("beer", tmp_path).sha256 == BEER_SHA256  # the mirror the user named
    monkeypatch.delenv("ADAPTER_ZOO_DUMP_MIRROR")
    with pytest.raises(
        NoNetwork,
        match=r"archive.org/download/stackexchange/beer.stackexchange.com.7z \(HF_HUB_OFFLINE is set\)",
    ):
        download_dump("beer", tmp_path / "other")


def test_a_local_folder_can_be_the_mirror(monkeypatch, tmp_path):
    folder = tmp_path / "mirror"
    folder.mkdir()
    shutil.copy(shipped_data() / BEER, folder / BEER)
    data = (folder / BEER).read_bytes()
    (folder / LISTING_FILE).write_text(
        f'<files><file name="{BEER}"><size>{len(data)}</size>'
        f"<sha1>{hashlib.sha1(data).hexdigest()}</sha1></file></files>"
    )
    monkeypatch.setenv("ADAPTER_ZOO_DUMP_MIRROR", str(folder))
    assert download_dump("beer.stackexchange.com", tmp_path / "dumps").sha256 == BEER_SHA256


def test_a_forum_missing_from_the_mirror_says_so(dump_mirror, tmp_path):
    with pytest.raises(
        DumpError, match=r"stackexchange_files.xml: does not list travel.stackexchange.com.7z"
    ):
        download_dump("travel", tmp_path)
    dump_mirror.listing = None
    with pytest.raises(
        DumpError, match=r"travel.stackexchange.com.7z: not on the mirror \(HTTP 404\)"
    ):
        download_dump("travel", tmp_path)


def test_a_dump_of_several_archives_is_refused():
    with pytest.raises(DumpError, match=r"stackoverflow.com: its dump is 8 archives \(43.7 GB\)"):
        archive_name(find_forum("stackoverflow"))
