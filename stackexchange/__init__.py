"""StackExchange dumps → per-forum training pairs (torch-free).

Example:
    >>> import stackexchange
    >>> forum_dir = stackexchange.parse_forum("beer.stackexchange.com.7z", "parsed")  # doctest: +SKIP
"""

from stackexchange.catalog import Forum, catalog, forum_set, shipped_data
from stackexchange.download import download_dump
from stackexchange.dump import parse_dump
from stackexchange.errors import AdapterZooError, DumpError
from stackexchange.parse import is_complete, parse_forum, read_stats
from stackexchange.text import html_to_text, parse_tags, question_text

__all__ = [
    "AdapterZooError",
    "DumpError",
    "Forum",
    "catalog",
    "download_dump",
    "forum_set",
    "html_to_text",
    "is_complete",
    "parse_dump",
    "parse_forum",
    "parse_tags",
    "question_text",
    "read_stats",
    "shipped_data",
]
