"""Fixtures for the stackexchange tests: the real dump files, parsed once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lxml import etree

BEER = "stackexchange/beer.stackexchange.com.7z"
BICYCLES_META = "stackexchange/bicycles.meta.stackexchange.com"


@pytest.fixture(scope="session")
def beer_archive(shared_file) -> Path:
    return shared_file(BEER)


@pytest.fixture(scope="session")
def bicycles_meta_dir(shared_file) -> Path:
    return shared_file(BICYCLES_META)


@pytest.fixture(scope="session")
def shared_sites(shared_file) -> Path:
    return shared_file("stackexchange/sites/Sites_2018-12-02.xml")


@pytest.fixture(scope="session")
def beer_xml(beer_archive, tmp_path_factory) -> Path:
    """The beer archive's Posts.xml and PostLinks.xml, extracted once (by py7zr, as a user would)."""
    import py7zr

    folder = tmp_path_factory.mktemp("beer-xml")
    with py7zr.SevenZipFile(beer_archive) as archive:
        archive.extract(path=folder, targets=["Posts.xml", "PostLinks.xml"])
    return folder


@pytest.fixture(scope="session")
def beer_parsed(beer_archive, tmp_path_factory) -> Path:
    """The beer archive parsed once per session: the forum folder."""
    import stackexchange

    return stackexchange.parse_forum(beer_archive, tmp_path_factory.mktemp("parsed"))


@pytest.fixture(scope="session")
def bicycles_meta_parsed(bicycles_meta_dir, tmp_path_factory) -> Path:
    import stackexchange

    return stackexchange.parse_forum(bicycles_meta_dir, tmp_path_factory.mktemp("parsed"))


def _copy_forum(folder: Path, target: Path, posts_text: str | None = None) -> Path:
    """Copy a forum folder's Posts.xml and PostLinks.xml, optionally replacing Posts.xml."""
    target.mkdir(parents=True)
    shutil.copy(folder / "PostLinks.xml", target / "PostLinks.xml")
    if posts_text is None:
        shutil.copy(folder / "Posts.xml", target / "Posts.xml")
    else:
        (target / "Posts.xml").write_text(posts_text, encoding="utf-8")
    return target


def _count_forum(folder: Path) -> dict:
    """Questions, answers, resolvable accepted answers and duplicate links of a forum folder."""
    question_ids, answer_ids, accepted = set(), set(), {}
    for _, row in etree.iterparse(str(folder / "Posts.xml"), tag="row"):
        kind, post_id = row.get("PostTypeId"), int(row.get("Id"))
        if kind == "1":
            question_ids.add(post_id)
            if row.get("AcceptedAnswerId"):
                accepted[post_id] = int(row.get("AcceptedAnswerId"))
        elif kind == "2":
            answer_ids.add(post_id)
        row.clear()
    links = set()
    for _, row in etree.iterparse(str(folder / "PostLinks.xml"), tag="row"):
        if row.get("LinkTypeId") == "3":
            links.add((int(row.get("PostId")), int(row.get("RelatedPostId"))))
    resolvable = {(d, c) for d, c in links if d in question_ids and c in question_ids}
    return {
        "questions": len(question_ids),
        "answers": len(answer_ids),
        "with_accepted": len(accepted),
        "accepted_found": sum(a in answer_ids for a in accepted.values()),
        "duplicate_links": len(links),
        "duplicates_resolvable": len(resolvable),
        "resolvable": resolvable,
    }


@pytest.fixture(scope="session")
def count_forum():
    """Independent counts of a forum folder's XML with a plain lxml pass (no package code)."""
    return _count_forum


@pytest.fixture(scope="session")
def copy_forum():
    """Copy a forum folder's Posts.xml and PostLinks.xml, optionally replacing Posts.xml."""
    return _copy_forum
