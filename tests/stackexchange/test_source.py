"""A forum's names from its dump: its host from the path, its short name from the host."""

from __future__ import annotations

from stackexchange.source import forum_short_name


def test_forum_short_names():
    assert forum_short_name("beer.stackexchange.com") == "beer"
    assert forum_short_name("bicycles.meta.stackexchange.com") == "bicycles-meta"
    assert forum_short_name("askubuntu.com") == "askubuntu"
    assert forum_short_name("mathoverflow.net") == "mathoverflow"
