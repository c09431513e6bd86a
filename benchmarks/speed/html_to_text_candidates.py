"""HTML → text candidates vs ``stackexchange.html_to_text`` on every body of the shipped forums.

For each candidate library: CPU seconds (``time.process_time``, best of ``--rounds``, one
process: the machine is shared, so wall time measures the neighbours) over all bodies, and
its text compared with today's function on every body, after the same blank-line collapse and
strip ``html_to_text`` applies; differences are classified (line breaks or spacing only,
words split or joined differently, other text). The bodies are those of beer.stackexchange.com (the 7z archive) and
bicycles.meta.stackexchange.com in ``../shared/data/stackexchange``, questions and answers.

The candidates are not project dependencies; install the measured versions first
(``pip install selectolax==1.0.2 resiliparse==2.0.0 inscriptis==2.7.6 html2text==2025.4.15``);
one that does not import is left out. Rounds interleave the candidates; the best round counts.

Run: ``python benchmarks/speed/html_to_text_candidates.py [--rounds 10]``
Output: ``results/html_to_text_candidates.json``.
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import re
import sys
import time
from importlib import metadata
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
FORUMS = SHARED / "stackexchange"
RESULTS = Path(__file__).resolve().parents[1] / "results"

from stackexchange.text import BLANK_LINES, LINE_ENDING_TAGS, html_to_text  # noqa: E402

_SELECTOR = ", ".join(sorted(LINE_ENDING_TAGS))
# a line break after each closing line-ending tag and each <br>/<hr>, in the HTML string itself
_MARKS = re.compile(
    r"(</(?:{})\s*>|<(?:br|hr)\b[^>]*>)".format("|".join(sorted(LINE_ENDING_TAGS))), re.I
)


def bodies(source: bytes) -> list[str]:
    out = []
    for _, row in etree.iterparse(io.BytesIO(source), tag="row"):
        if row.get("PostTypeId") in ("1", "2"):
            out.append(row.get("Body") or "")
        row.clear()
    return out


def load() -> dict[str, list[str]]:
    import tempfile

    import py7zr

    with tempfile.TemporaryDirectory() as tmp:
        with py7zr.SevenZipFile(FORUMS / "beer.stackexchange.com.7z") as archive:
            archive.extract(path=tmp, targets=["Posts.xml"])
        beer = (Path(tmp) / "Posts.xml").read_bytes()
    meta = (FORUMS / "bicycles.meta.stackexchange.com" / "Posts.xml").read_bytes()
    return {"beer.stackexchange.com": bodies(beer), "bicycles.meta.stackexchange.com": bodies(meta)}


def _finish(text: str) -> str:
    return BLANK_LINES.sub("\n", text).strip()


def candidates() -> dict:
    """name -> (version, function); libraries that do not import are left out."""
    found = {"lxml (today: stackexchange.html_to_text)": (metadata.version("lxml"), html_to_text)}
    try:
        from selectolax.lexbor import LexborHTMLParser

        def lexbor_marked(body):
            # the same rule as today's: a line break after every line-ending element
            if not body:
                return ""
            tree = LexborHTMLParser(body)
            for node in tree.css(_SELECTOR):
                node.insert_after("\n")
            return _finish(tree.body.text(deep=True) if tree.body else "")

        def lexbor_regex(body):
            # marks put into the HTML string before parsing: no walk over the tree
            if not body:
                return ""
            tree = LexborHTMLParser(_MARKS.sub(r"\1\n", body))
            return _finish(tree.body.text(deep=True) if tree.body else "")

        def lexbor_plain(body):
            tree = LexborHTMLParser(body or "")
            return _finish(tree.body.text(deep=True) if tree.body else "")

        version = metadata.version("selectolax")
        found["selectolax lexbor + line-break marks"] = (version, lexbor_marked)
        found["selectolax lexbor, marks by regex before parsing"] = (version, lexbor_regex)
        found["selectolax lexbor text() (no marks)"] = (version, lexbor_plain)
    except ImportError:
        pass
    try:
        from resiliparse.extract.html2text import extract_plain_text

        def resiliparse(body):
            return _finish(
                extract_plain_text(
                    body or "", preserve_formatting=True, main_content=False,
                    list_bullets=False, alt_texts=False, links=False, form_fields=False,
                    noscript=True, comments=False,
                )
            )  # fmt: skip

        found["resiliparse extract_plain_text"] = (metadata.version("resiliparse"), resiliparse)
    except ImportError:
        pass
    try:
        from inscriptis import get_text

        found["inscriptis get_text"] = (
            metadata.version("inscriptis"),
            lambda body: _finish(get_text(body)) if body else "",
        )
    except ImportError:
        pass
    try:
        import html2text as h2t

        converter = h2t.HTML2Text()
        converter.body_width = 0
        found["html2text (Markdown)"] = (
            metadata.version("html2text"),
            lambda body: _finish(converter.handle(body or "")),
        )
    except ImportError:
        pass
    return found


def classify(ours: str, theirs: str) -> str:
    if "".join(ours.split()) == "".join(theirs.split()):
        if ours.replace("\n", " ").split() == theirs.replace("\n", " ").split():
            return "line breaks or spacing only"
        return "words split or joined differently (e.g. list items run together)"
    return "other (text differs)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--output", type=Path, default=RESULTS / "html_to_text_candidates.json")
    parser.add_argument("--examples", type=int, default=3, help="differing bodies kept per forum")
    args = parser.parse_args()
    forums = load()
    found = candidates()
    reference = {name: [html_to_text(b) for b in bs] for name, bs in forums.items()}
    # rounds interleave the candidates, so a burst of load on the shared machine hits all alike
    seconds = {(name, forum): float("inf") for name in found for forum in forums}
    texts = {}
    for _ in range(args.rounds):
        for name, (_, function) in found.items():
            for forum, bs in forums.items():
                start = time.process_time()
                texts[name, forum] = [function(b) for b in bs]
                elapsed = time.process_time() - start
                seconds[name, forum] = min(seconds[name, forum], elapsed)
    results = {}
    for name, (version, _) in found.items():
        record = {"version": version, "forums": {}}
        for forum, bs in forums.items():
            kinds, examples = {}, []
            for ours, theirs in zip(reference[forum], texts[name, forum], strict=True):
                if ours != theirs:
                    kind = classify(ours, theirs)
                    kinds[kind] = kinds.get(kind, 0) + 1
                    if len(examples) < args.examples:
                        at = next(
                            (i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                            min(len(ours), len(theirs)),
                        )
                        window = slice(max(0, at - 60), at + 120)
                        examples.append(
                            {"first_difference_at": at, "today": ours[window], "it": theirs[window]}
                        )
            best = seconds[name, forum]
            record["forums"][forum] = {
                "bodies": len(bs),
                "html_mb": sum(len(b.encode()) for b in bs) / 1e6,
                "seconds": best,
                "us_per_body": best / len(bs) * 1e6,
                "identical": len(bs) - sum(kinds.values()),
                "differences": kinds,
                "examples": examples,
            }
            print(f"{name:50} {forum:32} {best / len(bs) * 1e6:6.1f} µs/body  identical "
                  f"{record['forums'][forum]['identical']}/{len(bs)}  {kinds}")  # fmt: skip
        results[name] = record
    base = results["lxml (today: stackexchange.html_to_text)"]["forums"]
    for record in results.values():
        for forum, entry in record["forums"].items():
            entry["speed_vs_today"] = base[forum]["seconds"] / entry["seconds"]
    out = {
        "benchmark": "html_to_text_candidates",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "load_average_at_start": os.getloadavg(),
        "rounds": args.rounds,
        "clock": "time.process_time (CPU seconds of this process)",
        "candidates": results,
    }
    from stackexchange.io import atomic_write_json

    atomic_write_json(args.output, out)
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
