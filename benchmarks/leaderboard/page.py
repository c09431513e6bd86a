"""The leaderboard as one self-contained HTML page.

Everything is inside the file: figures as inline SVG or PNG data URIs, the styles, and a few
lines of script (sort by a column, filter by role and setting), so the page works copied
alone, offline. Accessible table markup: ``lang``, ``caption``, ``thead`` with
``scope="col"`` headers that are buttons and carry ``aria-sort``, ``scope="row"`` row
headers; numbers right-aligned in tabular figures, each column's best in bold with a title.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass

from adapter_zoo.names import ZERO_SHOT_MODEL
from benchmarks.leaderboard.table import MARKS, Table

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem;color:#1a1a1a}
h1{font-size:1.5rem;margin:0 0 .5rem}h2{font-size:1.2rem;margin:2rem 0 .5rem}
.filters{display:flex;gap:1.5rem;margin:.75rem 0}.filters label{font-size:.9rem}
.filters select{margin-left:.4rem;font:inherit}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:.85rem}
caption{text-align:left;font-weight:bold;padding:.3rem 0;caption-side:top}
.intro{font-size:.9rem;color:#333;max-width:60rem}
th,td{border:1px solid #ccc;padding:3px 7px}
thead th{background:#f2f2f2;vertical-align:bottom;position:sticky;top:0;max-width:9rem;
  overflow-wrap:break-word}
thead th[data-type=number]{text-align:right}
thead th button{all:unset;cursor:pointer;display:block}
thead th button:focus-visible{outline:2px solid #0b62c4}
thead th[aria-sort=ascending] button::after{content:" \\25B2" / ""}
thead th[aria-sort=descending] button::after{content:" \\25BC" / ""}
tbody th{text-align:left;font-weight:normal;min-width:11rem;max-width:19rem}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.best{font-weight:bold;background:#e8f1fb}
td.muted{opacity:.3}
tr.published{font-style:italic;color:#555}
tr.reference{background:#fff8e1}tr.reference th{font-weight:600}
sup.mark{font-weight:normal;color:#8a4b00;margin-left:1px}
.legend{font-size:.8rem;color:#444;margin:.4rem 0}
figure{margin:1rem 0}figure img,figure svg{max-width:100%;height:auto}
figcaption{font-size:.85rem;color:#444}
"""

# a click on a column's header sorts by it (numbers best first, names A-Z; a second click
# reverses; empty cells last); the selects show the rows of a role / with cells in a setting
SCRIPT = """
(function () {
  var table = document.getElementById("leaderboard"), body = table.tBodies[0];
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  heads.forEach(function (th, i) {
    th.querySelector("button").addEventListener("click", function () {
      var numeric = th.dataset.type === "number", now = th.getAttribute("aria-sort");
      var order = now === "descending" ? "ascending" : now === "ascending" ? "descending"
        : numeric ? "descending" : "ascending";
      heads.forEach(function (h) { h.setAttribute("aria-sort", "none"); });
      th.setAttribute("aria-sort", order);
      var sign = order === "ascending" ? 1 : -1;
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[i], y = b.cells[i];
        if (numeric) {
          var u = x.dataset.value, v = y.dataset.value;
          if (u === undefined || v === undefined) return (u === undefined) - (v === undefined);
          return sign * (Number(u) - Number(v));
        }
        return sign * x.textContent.localeCompare(y.textContent, undefined, {numeric: true});
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  var role = document.getElementById("role"), setting = document.getElementById("setting");
  function filter() {
    Array.prototype.forEach.call(body.rows, function (row) {
      var settings = row.dataset.settings.split(" ");
      row.hidden = (role.value && row.dataset.role !== role.value) ||
        (setting.value && settings.indexOf(setting.value) < 0);
      Array.prototype.forEach.call(row.querySelectorAll("td[data-setting]"), function (td) {
        td.classList.toggle("muted", !!setting.value && td.dataset.setting !== setting.value);
      });
    });
  }
  role.addEventListener("change", filter);
  setting.addEventListener("change", filter);
})();
"""


@dataclass
class Figure:
    """A figure for the page: PNG bytes (shown as a data URI) or SVG text (inlined)."""

    name: str
    caption: str
    png: bytes | None = None
    svg: str | None = None

    def html(self) -> str:
        if self.svg is not None:
            svg = self.svg[self.svg.index("<svg") :]  # no XML prolog inside HTML
            svg = svg.replace(
                "<svg ", f'<svg role="img" aria-label="{html.escape(self.caption)}" ', 1
            )
            body = svg
        else:
            data = base64.b64encode(self.png or b"").decode("ascii")
            body = f'<img src="data:image/png;base64,{data}" alt="{html.escape(self.caption)}">'
        return f"<figure>{body}<figcaption>{html.escape(self.caption)}</figcaption></figure>"


def _breakable(title: str) -> str:
    """``title`` escaped, with line-break opportunities after dots and hyphens (long set
    names such as ``bicycles.meta.stackexchange.com-las`` wrap between their words)."""
    return html.escape(title).replace(".", ".<wbr>").replace("-", "-<wbr>")


def _options(values: list[str]) -> str:
    return '<option value="">all</option>' + "".join(
        f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values
    )


def _cell_html(cell) -> str:
    if cell.value is None:
        return '<td class="num">–</td>'
    classes = "num best" if cell.best else "num"
    attributes = f' data-value="{cell.value!r}"'
    if cell.setting:
        attributes += f' data-setting="{html.escape(cell.setting)}"'
    if cell.best:
        attributes += ' title="best in this column"'
    mark = ""
    if cell.mark:
        words = html.escape(cell.setting)
        mark = f'<sup class="mark" title="{words}" aria-label="{words}">{cell.mark}</sup>'
    return f'<td class="{classes}"{attributes}>{html.escape(cell.text)}{mark}</td>'


def to_html(table: Table, figures: list[Figure], transfer: Figure | str) -> str:
    """The page: filters, the sortable table, its legend, the transfer matrix (or the note
    why it is absent) and the figures."""
    roles = sorted({r.role for r in table.rows})
    settings = sorted({s for r in table.rows for s in r.settings})
    head = "".join(
        f'<th scope="col" aria-sort="none" data-type="{"text" if i in (0, len(table.header) - 1) else "number"}">'
        f'<button type="button">{_breakable(h)}</button></th>'
        for i, h in enumerate(table.header)
    )
    body = "".join(
        f'<tr class="{html.escape(r.role)}{" reference" if r.label == ZERO_SHOT_MODEL else ""}" '
        f'data-role="{html.escape(r.role)}" '
        f'data-settings="{html.escape(" ".join(r.settings))}">'
        f'<th scope="row">{html.escape(r.label)}</th>'
        + "".join(_cell_html(c) for c in r.cells)
        + f"<td>{html.escape(r.role)}</td></tr>"
        for r in table.rows
    )
    used = sorted({c.setting for r in table.rows for c in r.cells if c.mark})
    legend = "".join(
        f'<p class="legend"><sup class="mark">{MARKS[s][0]}</sup> {html.escape(MARKS[s][1])}.</p>'
        for s in used
    )
    if any(r.label == ZERO_SHOT_MODEL for r in table.rows):
        legend += (
            f'<p class="legend">Highlighted: {ZERO_SHOT_MODEL}, the zero-shot bi-encoder a user '
            "already has; the transfer matrix compares the zoo models with it.</p>"
        )
    measured = sum(r.role != "published" for r in table.rows)
    transfer_html = (
        f'<p class="note">{html.escape(transfer)}</p>' if isinstance(transfer, str)
        else transfer.html()
    )  # fmt: skip
    figures_html = "".join(f.html() for f in figures)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>adapter-zoo leaderboard</title><style>{STYLE}</style></head><body><main>"
        "<h1>adapter-zoo leaderboard</h1>"
        '<form class="filters" aria-label="filters">'
        f'<label>Role<select id="role">{_options(roles)}</select></label>'
        f'<label>Setting<select id="setting">{_options(settings)}</select></label></form>'
        f'<p class="intro">{measured} models measured here, best first: those scored on more '
        "sets first, then by the mean of each set's main metric; published reference rows "
        "follow. Scores ×100; Σ: the mean over the sets a model was scored on; the best of "
        "each column in bold. Click a column header to sort by it.</p>"
        '<div class="scroll"><table id="leaderboard">'
        "<caption>Scores of each model on each set</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{legend}"
        f"<h2>Transfer matrix</h2>{transfer_html}"
        f"<h2>Figures</h2>{figures_html}"
        f"</main><script>{SCRIPT}</script></body></html>\n"
    )
