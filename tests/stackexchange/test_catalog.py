"""The shipped forum catalog, a dump's Sites.xml, and MultiCQA's source sets."""

from __future__ import annotations

import pytest

from stackexchange import DumpError
from stackexchange.catalog import CATEGORIES, EVAL_FORUMS, catalog, find_forum, forum_set


def test_shipped_catalog():
    forums = catalog()
    assert len(forums) == 344  # sites of the 2018-12-02 dump, main and meta
    assert forums[0].host == "stackoverflow.com" and forums[0].questions == 16845942
    assert {f.category for f in forums} <= set(CATEGORIES)
    beer = find_forum("beer")
    assert (beer.host, beer.english, beer.meta) == ("beer.stackexchange.com", True, False)
    assert find_forum("ru.stackoverflow.com").english is False
    assert sum(f.used_by_multicqa for f in forums) == 135


def test_sites_xml_agrees_with_the_shipped_list(shared_sites):
    from_xml = {f.host: f.questions for f in catalog(shared_sites)}
    assert from_xml == {f.host: f.questions for f in catalog()}


def test_sets():
    every = forum_set("all")
    assert len(every) == 155  # English main sites with > 1,000 questions in Dec 2018
    zero_shot = forum_set("all", exclude_eval=True)
    assert len(zero_shot) == 149
    assert not {h.split(".")[0] for h in zero_shot} & set(EVAL_FORUMS)
    balanced = forum_set("balanced")
    assert len(balanced) == 18 and balanced[:3] == [
        "ell.stackexchange.com", "gaming.stackexchange.com", "english.stackexchange.com",
    ]  # fmt: skip
    assert {find_forum(h).category for h in balanced} == set(CATEGORIES)
    largest = forum_set("largest", exclude_eval=True)
    assert len(largest) == 18 and "askubuntu.com" not in largest
    assert "askubuntu.com" in forum_set("largest")


def test_unknown_names():
    with pytest.raises(DumpError) as error:
        find_forum("cookin")
    assert (
        str(error.value) == "unknown forum 'cookin'; did you mean cooking, cooking.meta, bitcoin?"
    )
    with pytest.raises(DumpError, match="unknown forum set 'huge'"):
        forum_set("huge")
