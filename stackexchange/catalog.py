"""The forum catalog: every site of a dump, and MultiCQA's source sets ``all``, ``balanced``, ``largest``.

The catalog ships with the package (``data/stackexchange_sites_2018-12.csv``, the 2018-12-02
dump's site list); a dump's own ``Sites.xml`` can be read instead.

Categories are Stack Exchange's six site categories that MultiCQA uses (technology,
culture/recreation, life/arts, science, professional, business). Neither Sites.xml nor the
CSV records them, so the mapping below is best effort: the named sites come from Stack
Exchange's own category pages as known to us (and the 18 forums of ``balanced``, three per
category in MultiCQA's released config), every other site counts as technology, the category
holding most sites.

Example:
    >>> hosts = forum_set("balanced")
    >>> len(hosts), hosts[0]
    (18, 'ell.stackexchange.com')
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from stackexchange.errors import DumpError, closest_names, one_line, unknown_name

CATEGORIES = (
    "technology",
    "culture/recreation",
    "life/arts",
    "science",
    "professional",
    "business",
)
EVAL_FORUMS = ("askubuntu", "travel", "cooking", "academia", "apple", "aviation")
SETS = ("all", "balanced", "largest")
MIN_QUESTIONS_ALL = 1_000
# MultiCQA's ``balanced`` set, exactly as in its released config
# (UKPLab/emnlp2020-multicqa bert-ranker/configs/example_fusion_balanced.yaml), three per category.
BALANCED = (
    "ell", "gaming", "english",  # culture/recreation
    "serverfault", "superuser", "stackoverflow",  # technology
    "writers", "opensource", "workplace",  # professional
    "physics", "stats", "math",  # science
    "scifi", "graphicdesign", "diy",  # life/arts
    "quant", "pm", "patents",  # business
)  # fmt: skip
LARGEST_SIZE = 18
_NAMED_CATEGORIES = {
    "culture/recreation": (
        "english ell gaming scifi movies music rpg boardgames bicycles travel history skeptics "
        "christianity judaism islam buddhism hinduism hermeneutics philosophy linguistics literature "
        "anime politics sports outdoors chess puzzling worldbuilding mythology french german spanish "
        "japanese chinese russian italian portuguese latin korean esperanto ukrainian poker "
        "rpg bricks lifehacks boardgames martialarts expatriates hsm mythology interpersonal "
        "fitness law"
    ),
    "life/arts": (
        "diy graphicdesign photo cooking gardening pets parenting money beer homebrew coffee "
        "crafts woodworking sustainability health fitness musicfans sound avp video skeptics "
        "mechanics travel aviation outdoors sewing vegetarianism lifehacks interpersonal tea "
        "scifi"
    ),
    "science": (
        "math physics stats mathoverflow.net chemistry biology astronomy cstheory cs "
        "earthscience psychology cogsci economics matheducators space bioinformatics "
        "datascience ai quantumcomputing mathematica hsm engineering electronics"
    ),
    "professional": "writers opensource workplace academia law ux freelancing",
    "business": "quant pm patents money startups productivity personalfinance economics",
}


def _category_of(short_name: str) -> str:
    for category in ("professional", "business", "science", "life/arts", "culture/recreation"):
        if short_name in _NAMED_CATEGORIES[category].split():
            return category
    return "technology"


@dataclass(frozen=True)
class Forum:
    """One site of the network.

    Attributes:
        host: e.g. ``beer.stackexchange.com``.
        short_name: e.g. ``beer`` (``bicycles.meta`` for a meta site, ``mathoverflow.net``).
        questions: total questions at the catalog's dump date.
        english: False for the non-English sites (ru/es/pt/ja Stack Overflow, rus, ukrainian).
        meta: a meta site.
        category: one of ``CATEGORIES`` (best effort, see the module docstring).
        used_by_multicqa: listed in MultiCQA's released training config.
        archive_files: the dump's archive files (one ``<host>.7z`` for all but the largest
            sites; empty for a catalog read from a ``Sites.xml``).
        archive_bytes: their total size in the catalog's dump (0 when unknown).
    """

    host: str
    short_name: str
    questions: int
    english: bool
    meta: bool
    category: str
    used_by_multicqa: bool
    archive_files: tuple[str, ...] = ()
    archive_bytes: int = 0


def short_name(host: str) -> str:
    """``beer.stackexchange.com`` → ``beer``; ``superuser.com`` → ``superuser``.

    Example:
        >>> short_name("bicycles.meta.stackexchange.com"), short_name("mathoverflow.net")
        ('bicycles.meta', 'mathoverflow.net')
    """
    for suffix in (".stackexchange.com", ".com"):
        if host.endswith(suffix) and host != suffix.lstrip("."):
            return host[: -len(suffix)]
    return host


def shipped_data() -> Path:
    """The folder of the two small forum archives shipped with the package (beer and
    bicycles.meta, CC BY-SA, see its ``ATTRIBUTION.md``): the quickstart's and the tests' data,
    kept here, on the lowest floor, so that every package may read them."""
    return Path(__file__).resolve().parent / "samples"


@cache
def _shipped() -> tuple[Forum, ...]:
    text = resources.files("stackexchange").joinpath("data/stackexchange_sites_2018-12.csv")
    with text.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return tuple(
        Forum(
            host=row["host"],
            short_name=short_name(row["host"]),
            questions=int(row["total_questions"] or 0),
            english=row["non_english_language"] == "0",
            meta=row["is_meta"] == "1",
            category=_category_of(short_name(row["host"])),
            used_by_multicqa=row["in_multicqa_config"] == "1",
            archive_files=tuple(name for name in row["archive_files"].split(";") if name),
            archive_bytes=int(row["archive_bytes_7z"] or 0),
        )
        for row in rows
    )


def _from_sites_xml(path: Path) -> tuple[Forum, ...]:
    from lxml import etree

    multicqa = {forum.host for forum in _shipped() if forum.used_by_multicqa}
    non_english = {forum.host for forum in _shipped() if not forum.english}
    forums = []
    try:
        for _, row in etree.iterparse(str(path), tag="row"):
            url = row.get("Url") or ""
            host = url.split("://", 1)[-1].strip("/")
            if host:
                name = short_name(host)
                forums.append(
                    Forum(
                        host,
                        name,
                        int(row.get("TotalQuestions") or 0),
                        host not in non_english,
                        ".meta." in f".{host}" or host.startswith("meta."),
                        _category_of(name),
                        host in multicqa,
                    )  # fmt: skip
                )
            row.clear()
    except etree.XMLSyntaxError as error:
        raise DumpError(
            f"{path}: malformed XML at line {error.lineno}: {one_line(error.msg)}"
        ) from None
    except OSError as error:
        raise DumpError(f"{path}: cannot read Sites.xml ({error})") from None
    return tuple(forums)


def catalog(sites_xml: str | os.PathLike | None = None) -> list[Forum]:
    """Every site, largest first: from a dump's ``Sites.xml`` or the shipped 2018-12 list.

    Example:
        >>> catalog()[0].host
        'stackoverflow.com'
    """
    forums = _from_sites_xml(Path(sites_xml)) if sites_xml else _shipped()
    return sorted(forums, key=lambda forum: (-forum.questions, forum.host))


def find_forum(name: str, forums: list[Forum] | None = None) -> Forum:
    """The forum named by host or short name; an unknown name suggests close ones.

    Example:
        >>> find_forum("beer").host
        'beer.stackexchange.com'
    """
    forums = catalog() if forums is None else forums
    for forum in forums:
        if name in (forum.host, forum.short_name):
            return forum
    raise unknown_forum(name, [f.host for f in forums] + [f.short_name for f in forums])


def unknown_forum(name: str, known: list[str]) -> DumpError:
    """The error for an unknown forum name, naming the closest known names."""
    close = closest_names(name, known)  # not every choice: the catalog has hundreds
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return DumpError(f"unknown forum {name!r}{hint}")


def forum_set(name: str, *, exclude_eval: bool = False) -> list[str]:
    """Hosts of a MultiCQA source set.

    * ``all``: English main sites with more than 1,000 questions (2018-12 counts).
    * ``balanced``: the 18 forums of MultiCQA's released fusion config, 3 per category.
    * ``largest``: DERIVED, not the paper's list (appendix A.5 was not available offline):
      the 18 largest English main sites by question count (after the exclusion below).

    Args:
        name: ``all``, ``balanced`` or ``largest``.
        exclude_eval: leave out the evaluation forums (askubuntu, travel, cooking, academia,
            apple, aviation) for zero-shot experiments.

    Example:
        >>> "askubuntu.com" in forum_set("all", exclude_eval=True)
        False
    """
    if name not in SETS:
        raise unknown_name("forum set", name, SETS, DumpError)
    forums = [f for f in catalog() if f.english and not f.meta]
    if exclude_eval:
        forums = [f for f in forums if f.short_name not in EVAL_FORUMS]
    if name == "balanced":
        by_name = {f.short_name: f.host for f in forums}
        return [by_name[n] for n in BALANCED if n in by_name]
    if name == "largest":
        return [f.host for f in forums[:LARGEST_SIZE]]
    return [f.host for f in forums if f.questions > MIN_QUESTIONS_ALL]
