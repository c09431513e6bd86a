"""Ship the ``shipped_zoo`` recipe's trained entries inside the package, with their cards.

After ``adapter-zoo run shipped_zoo`` (its parse, held-out sets and training steps at least),
this scores every trained entry on the test split of each forum it learnt from, beside BM25,
the zero-shot MiniLM and MiniLM fused with BM25 (the paired bootstrap over the set's
questions), and copies the entry into ``adapter_zoo/shipped/<name>/`` (package data) with its
card naming the dumps and their dates, the recipe, the commit, the chip, those test scores,
the licence and the attribution line. The files are copied as trained (the card's hashes
stand; the card and README are the entry's own, not hashed). The rows go to
``results/shipped_zoo.json`` (the README's table of the zoo a user gets).

Run: ``ADAPTER_ZOO_HOME=<the run's zoo> python benchmarks/studies/shipped_zoo.py
[--work outputs/shipped-zoo] [--names ai beer ...]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from adapter_zoo.fusion_defaults import base_fused_spec  # noqa: E402
from adapter_zoo.zoo.cards import FORUM_LICENSE, attribution  # noqa: E402
from adapter_zoo.zoo.store import (  # noqa: E402
    CARD_FILE,
    PACKAGE_SHIPPED,
    README_FILE,
    local_entry,
    read_card,
    render_readme,
    verify_entry,
)
from benchmarks.machine import machine_info  # noqa: E402
from stackexchange.catalog import shipped_data  # noqa: E402
from stackexchange.io import (  # noqa: E402
    atomic_directory,
    atomic_write_json,
    atomic_write_text,
    sha256_file,
)
from stackexchange.jsontext import read_json_object  # noqa: E402
from stackexchange.source import forum_short_name  # noqa: E402

RECIPE = "shipped_zoo"
RESULTS = Path(__file__).resolve().parents[1] / "results"
BASE = "minilm-l6"
ZERO_SHOT = f"sbert:{BASE}"
FUSED = base_fused_spec(ZERO_SHOT)  # the quickstart's fused base
MODELS = ("bm25", ZERO_SHOT, FUSED)


def dump_rows() -> dict[str, str]:
    """Each shipped archive's dump (source and date), as ``ATTRIBUTION.md`` names it."""
    text = (shipped_data() / "ATTRIBUTION.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)\.7z` \| [^|]+ \| ([^|]+) \|", text, flags=re.M)
    return {host: dump.strip() for host, dump in rows}


def commit() -> str:
    """The checkout's commit (the recipe and the code that trained the entries)."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()  # fmt: skip


def recipe_entries() -> list[tuple[str, list[str]]]:
    """``(entry, forums)`` of each entry the recipe trains, in its order."""
    # the recipe file read as data (its [vars]): this script sits a floor below recipes
    path = ROOT / "recipes" / "toml" / f"{RECIPE}.toml"
    variables = tomllib.loads(path.read_text(encoding="utf-8"))["vars"]
    forums = list(variables["forums"])
    return [(forum_short_name(f), [f]) for f in forums] + [(variables["multitask"], forums)]


def test_scores(name: str, forums: list[str], work: Path, scored_sets: dict) -> dict:
    """The entry ``name`` on each forum's held-out test split (``work/bench/<forum>``) beside
    the baselines, each gain with its paired-bootstrap interval over the set's questions."""
    # the models on first use: the script's --help starts without them
    from benchmarks.evaluate import ScoredModels
    from benchmarks.paired import query_average_precisions, rounded_gain

    rows = {}
    for host in forums:
        bench = f"local:{work / 'bench' / forum_short_name(host)}"
        scored, done = scored_sets.setdefault(bench, (ScoredModels(), set()))
        # the baselines once a set, before the fusion needs them
        aps = query_average_precisions((*MODELS, name), bench, scored=scored, done=done)
        gains = {label: rounded_gain(aps[name], aps[against])
                 for label, against in (("zero_shot", ZERO_SHOT), ("fused", FUSED))}  # fmt: skip
        rows[host] = {
            "questions": len(aps[name]),
            "map": round(float(aps[name].mean()), 4),
            "zero_shot_map": round(float(aps[ZERO_SHOT].mean()), 4),
            "fused_map": round(float(aps[FUSED].mean()), 4),
            "bm25_map": round(float(aps["bm25"].mean()), 4),
            "gain": gains,
        }
    return rows


def shipped_card(card: dict, rows: dict, work: Path, dumps: dict, sha: str, chip: str) -> dict:
    """The trained card with what a shipped entry says: where its data came from, how it was
    made, its test scores, the licence; no path of the machine that trained it."""
    text = json.dumps(card, ensure_ascii=False).replace(str(work), "{work}")
    card = {k: v for k, v in json.loads(text).items() if k not in ("path", "source")}
    archives = {f: shipped_data() / f"{f}.7z" for f in card["forums"]}
    return {
        **card,
        "license": FORUM_LICENSE,
        "attribution": attribution(card),
        "dumps": {
            f: {"file": p.name, "sha256": sha256_file(p), "dump": dumps[f]}
            for f, p in archives.items()
        },  # fmt: skip
        "shipped": {
            "recipe": RECIPE,
            "recipe_file": f"recipes/toml/{RECIPE}.toml",
            "commit": sha,
            "chip": chip,
            "trained": card.get("created"),
        },  # fmt: skip
        "test_scores": rows,
    }


def ship(name: str, card: dict, out: Path) -> Path:
    """Copy the entry ``name`` (its card's files) into ``out/name`` with ``card``, verified."""
    source = local_entry(name)
    with atomic_directory(out / name, overwrite=True) as tmp:
        for relative in card["files"]:
            (tmp / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / relative, tmp / relative)
        atomic_write_text(tmp / CARD_FILE, json.dumps(card, indent=2, ensure_ascii=False) + "\n")
        # no folder: the lines that open it without adapter-zoo would name this machine's path
        atomic_write_text(tmp / README_FILE, render_readme(card))
    verify_entry(out / name)
    return out / name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=ROOT / "outputs" / "shipped-zoo")
    parser.add_argument("--names", nargs="*", help="entries to ship (default: every one trained)")
    parser.add_argument("--out", type=Path, default=PACKAGE_SHIPPED)
    parser.add_argument("--json", type=Path, default=RESULTS / "shipped_zoo.json")
    parser.add_argument(
        "--commit", default=None, help="the commit the recipe ran from (default: this checkout's)"
    )
    args = parser.parse_args(argv)
    work, started = args.work.resolve(), time.perf_counter()
    dumps, sha, machine = dump_rows(), args.commit or commit(), machine_info()
    entries = [(n, f) for n, f in recipe_entries() if not args.names or n in args.names]
    scored_sets, rows = {}, {}
    for name, forums in entries:
        folder = local_entry(name)
        if folder is None or folder.parent == args.out.resolve():
            print(f"{name}: not trained in this zoo, not shipped", flush=True)
            continue
        card = read_card(folder)
        scores = test_scores(name, forums, work, scored_sets)
        card = shipped_card(card, scores, work, dumps, sha, machine["cpu"])
        ship(name, card, args.out)
        rows[name] = {"forums": forums, "test_scores": scores}
        print(f"{name}: shipped; " + json.dumps(scores), flush=True)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    # an earlier run's rows of the entries still shipped and not shipped again here
    earlier = (
        read_json_object(args.json, ValueError).get("entries", {}) if args.json.is_file() else {}
    )
    shipped = {name for name, _ in recipe_entries() if (args.out / name / CARD_FILE).is_file()}
    rows = {n: rows.get(n) or earlier[n] for n, _ in recipe_entries() if n in shipped and
            (n in rows or n in earlier)}  # fmt: skip
    record = {"benchmark": "shipped_zoo", "recipe": RECIPE, "commit": sha, "base": BASE,
              "entries": rows, "package_bytes": size, "machine": machine,
              "wall_time_s": round(time.perf_counter() - started, 1)}  # fmt: skip
    atomic_write_json(args.json, record)
    print(f"wrote {args.json}; the shipped zoo is {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
