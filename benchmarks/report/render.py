"""One renderer: a table's description and its recorded JSON give the Markdown table.

A description (:class:`Table`) says which record the table reads, which rows it walks and,
per column, the header and the cell. A cell is a template formatted against the row: the
record's keys, and each item the rows' path walks (``<name>`` in the path), its key as
``{name.key}`` and its fields as ``{name[field]}``. Besides Python's format specs a template
may name one of :data:`FORMATS` (``{pick[gain]:delta}``). A cell may instead be a function of
the row, for what a template cannot say (a sum, a choice).

Example:
    >>> table = Table(
    ...     marker="example",
    ...     source=lambda: {"runs": {"a": {"map": 0.51234, "gain": -0.01}}},
    ...     rows="runs.<run>",
    ...     columns=(
    ...         Column("run", "`{run.key}`"),
    ...         Column("MAP", "{run[map]:.3f}", align="--:"),
    ...         Column("gain", "{run[gain]:delta}"),
    ...     ),
    ... )
    >>> print(render(table))
    | run | MAP | gain |
    |---|--:|---|
    | `a` | 0.512 | −0.010 |
"""

from __future__ import annotations

import json
import re
import string
from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.report import paths

# the three held-out sets of the quality run, by their key in its record
SETS = {"beer": "beer", "bicycles": "bicycles.meta", "wikiqa": "WikiQA"}
# the forums whose names the tables shorten
SHORT = {"bicycles-meta": "bicycles.meta", "music-meta": "music.meta",
         "raspberrypi-meta": "raspberrypi.meta"}  # fmt: skip


def load(name: str) -> dict:
    """``results/NAME.json``."""
    return json.loads((paths.RESULTS / f"{name}.json").read_text(encoding="utf-8"))


def row(*cells) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def map_(value: float | None, best: float | None = None) -> str:
    """A MAP to three places, bold when it is the column's ``best``; ``—`` for none."""
    if value is None:
        return "—"
    text = f"{value:.3f}"
    return f"**{text}**" if best is not None and round(value, 3) == round(best, 3) else text


def delta(value: float, digits: int = 3) -> str:
    """A signed difference with a typographic minus."""
    return f"{value:+.{digits}f}".replace("-", "−")


def interval(vs: Mapping) -> str:
    """A paired difference and its 95% interval: ``+0.012 [−0.003, +0.027]``."""
    low, high = vs["interval"]
    return f"{delta(vs['delta'])} [{delta(low)}, {delta(high)}]"


def forum(name: str) -> str:
    return SHORT.get(name, name)


FORMATS: dict[str, Callable[[Any], str]] = {
    "map": map_,
    "delta": delta,
    "delta4": lambda value: delta(value, 4),
    "interval": interval,
    "met": met,
    "set": SETS.__getitem__,
    "forum": forum,
}

Cell = str | Callable[[Mapping], Any]


@dataclass(frozen=True)
class Column:
    """A column: its header (a template of the record, or a function of it), its cell and
    its alignment rule (``---``, ``--:``, ``---:``).

    With ``over`` (a path in the record, or a function of it, giving keys) the column is one
    column per key: ``$`` in the header and the cell stands for the key (``{key}`` in the
    header is the key, ``column`` in a function's row).
    """

    header: str | Callable[[Mapping], str]
    cell: Cell | None = None
    align: str = "---"
    over: str | Callable[[Mapping], Iterable[str]] | None = None


@dataclass(frozen=True)
class Rows:
    """A group of rows: one per item ``path`` walks from the record (or from the enclosing
    group's item), or one row when the path is empty.

    A path is keys joined by dots; ``<name>`` walks each item there (a mapping's or a list's),
    in the record's order, ``<name:field>`` sorted by the items' ``field``. ``where`` keeps
    the rows it is true of. ``cells`` are the row's (``None``: the table's columns' cells;
    ``()``: no row of its own), and the ``then`` groups are walked under each item, after its
    own row.
    """

    path: str = ""
    cells: tuple[Cell, ...] | None = None
    where: Callable[[Mapping], bool] | None = None
    then: tuple[Rows, ...] = ()


@dataclass(frozen=True)
class Table:
    """A marked table: ``marker`` names it on a page (``<!-- table: marker -->``).

    ``source`` is the results JSON's stem (or a function giving the record, for a table of
    the code's constants); ``rows`` a path (see :class:`Rows`), groups of rows, or a row
    function of the record returning each row's cells, for a table whose rows no path walks;
    ``note`` a template (or a function) of the record, written after the table.
    """

    marker: str
    source: str | Callable[[], Mapping]
    columns: tuple[Column, ...]
    rows: str | tuple[Rows, ...] | Callable[[Mapping], Iterable[Sequence]] = ""
    note: str | Callable[[Mapping], str] | None = None


class Item:
    """An item a path walks: its ``key`` (an index in a list), its ``value`` and its
    ``index`` among its siblings."""

    __slots__ = ("index", "key", "value")

    def __init__(self, key: Any, value: Any, index: int) -> None:
        self.key, self.value, self.index = key, value, index

    def __getitem__(self, key: Any) -> Any:
        return self.value[key]

    def get(self, key: Any, default: Any = None) -> Any:
        return self.value.get(key, default)


def _lookup(obj: Any, key: str) -> Any:
    obj = obj.value if isinstance(obj, Item) else obj
    return obj[int(key)] if isinstance(obj, list | tuple) else obj[key]


FIELD = re.compile(r"\.(\w+)|\[([^\]]*)\]")


class _Formatter(string.Formatter):
    """Format fields as ``name[key].attr``, a key taken as text (``[256]`` is the key
    ``"256"``, not the number), and the named :data:`FORMATS`; written here because
    ``str.format`` reads digits in brackets as numbers and knows no named formats."""

    def get_field(self, field_name: str, args, kwargs) -> tuple[Any, str]:
        first = re.match(r"[^.\[]*", field_name)[0]
        obj = kwargs[first]
        for attribute, key in FIELD.findall(field_name[len(first) :]):
            obj = getattr(obj, attribute) if attribute else _lookup(obj, key)
        return obj, first

    def format_field(self, value: Any, format_spec: str) -> str:
        value = value.value if isinstance(value, Item) else value
        if format_spec in FORMATS:
            return FORMATS[format_spec](value)
        return format(value, format_spec)


_FORMATTER = _Formatter()


def fill_in(template: Cell, context: Mapping) -> str:
    """A cell or header: ``template`` formatted against ``context``, or called with it."""
    if callable(template):
        return str(template(context))
    return _FORMATTER.vformat(template, (), context)


def _walk(value: Any, path: list[str], bound: dict) -> Iterator[dict]:
    """Every binding of the path's ``<name>`` segments, in the record's order;
    ``<name:field>`` walks the items sorted by their ``field``."""
    if not path:
        yield bound
        return
    segment, rest = path[0], path[1:]
    if not segment.startswith("<"):
        yield from _walk(_lookup(value, segment), rest, bound)
        return
    name, _, order = segment[1:-1].partition(":")
    items = list(value.items() if isinstance(value, Mapping) else enumerate(value))
    if order:
        items.sort(key=lambda item: item[1][order])
    for index, (key, item) in enumerate(items):
        yield from _walk(item, rest, {**bound, name: Item(key, item, index)})


def _columns(table: Table, record: Mapping) -> list[tuple[str, Cell | None, str]]:
    """(header, cell, alignment) of each column, the ``over`` columns expanded."""
    expanded = []
    for column in table.columns:
        if column.over is None:
            expanded.append((fill_in(column.header, record), column.cell, column.align))
            continue
        keys = column.over(record) if callable(column.over) else _walk_keys(record, column.over)
        for key in keys:
            header = fill_in(_put(column.header, key), ChainMap({"key": key}, record))
            expanded.append((header, _put(column.cell, key), column.align))
    return expanded


def _put(template: Cell | None, key: Any) -> Cell | None:
    """An ``over`` column's template for ``key``: ``$`` replaced by it (a function of the row
    is given it as the row's ``column``)."""
    if isinstance(template, str):
        return template.replace("$", str(key))
    if template is None:
        return None
    return lambda context: template(ChainMap({"column": key}, context))


def _walk_keys(record: Mapping, path: str) -> list[str]:
    value = record
    for segment in path.split("."):
        value = _lookup(value, segment)
    return list(value)


def _rows(groups: Iterable[Rows], cells: list, record: Mapping, bound: dict) -> Iterator[list]:
    for group in groups:
        start = bound[list(bound)[-1]].value if bound else record
        path = group.path.split(".") if group.path else []
        for found in _walk(start, path, bound) if path else [bound]:
            context = ChainMap(found, record)
            if group.where is not None and not group.where(context):
                continue
            own = cells if group.cells is None else group.cells
            if own:
                yield [fill_in(cell, context) for cell in own]
            yield from _rows(group.then, cells, record, found)


def rows_of(groups: Iterable[Rows], record: Mapping) -> list[list[str]]:
    """The cells of the rows ``groups`` give on ``record`` (each group with its own cells):
    for a row function that describes some of its rows."""
    return list(_rows(groups, [], record, {}))


def render(table: Table) -> str:
    """The Markdown of ``table`` from its record."""
    source = table.source
    record = source() if callable(source) else load(source)
    columns = _columns(table, record)
    lines = [row(*(h for h, _, _ in columns)), "|" + "".join(f"{a}|" for _, _, a in columns)]
    if callable(table.rows):
        lines += [row(*cells) for cells in table.rows(record)]
    else:
        groups = (Rows(table.rows),) if isinstance(table.rows, str) else table.rows
        lines += [row(*cells) for cells in _rows(groups, [c for _, c, _ in columns], record, {})]
    text = "\n".join(lines)
    if table.note is not None:
        text += "\n\n" + fill_in(table.note, record)
    return text
