"""int8 scoring through ONNX Runtime against torch fp32, ONNX fp32 and the peer.

In one run, on one machine, the zero-shot all-MiniLM-L6-v2 bi-encoder (``sbert:minilm-l6``)
scores the (question, candidate) pairs of WikiQA test, SemEval 2016 test and the beer
forum's LAS-style test lists (the real dump, parsed and built as ``precision.py`` builds it)
four ways, each through a BiEncoder (texts cut and embedded once each, the same way):

- ``torch_fp32``: ``adapter_zoo.load(..., precision="fp32")``, today's path;
- ``onnx_fp32``: its export (``adapter_zoo.onnx``), the fp32 graph in ONNX Runtime;
- ``onnx_int8``: ``precision="int8"``: the int8 file (per-channel weights; the feed-forward
  down-projections, the last layer and attention's activation products in fp32;
  ``adapter_zoo.onnx.quantize``);
- ``peer_int8``: sentence-transformers' own route on the same base:
  ``SentenceTransformer(base, backend="onnx")`` and
  ``export_dynamic_quantized_onnx_model(model, <this CPU's arch>, ...)``.

Reported: pairs/s of each (best of ``--repeats``, taking turns), the ratios to torch fp32 and
to the peer, MAP of each, how many lists' AP moved against torch fp32, and the int8 settings
tried (cosine of each text's int8 embedding to its fp32 one, mean and worst, on WikiQA's
candidates). ``--limit`` takes the first N lists of each set (recorded in the JSON).

Run: ``nice -n 15 python benchmarks/speed/int8.py --limit 60`` (``--work`` keeps the parsed
beer forum between runs). Results: ``results/int8.json``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.speed.precision import SHARED, dataset_map, las_set, lists_moved  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
MODEL = "sbert:minilm-l6"
VARIANTS = ("torch_fp32", "onnx_fp32", "onnx_int8", "peer_int8")
MAP_TOLERANCE = 0.003  # auto's rule (adapter_zoo.precision)
TARGET_SPEEDUP = 2.0


def limited(dataset, limit: int | None):
    return dataset if limit is None else dataset.select(range(min(limit, len(dataset))))


def sets(work: Path, limit: int | None) -> dict:
    import benchmarks

    root = SHARED / "benchmarks"
    return {
        "wikiqa": limited(benchmarks.get("wikiqa").load("test", root), limit),
        "semeval2016": limited(benchmarks.get("semeval2016").load("test", root), limit),
        "beer-las": limited(las_set(work), limit),
    }


def pairs_of(dataset) -> list[tuple[str, str]]:
    return [(q, c) for q, cands in zip(dataset["query"], dataset["candidates"]) for c in cands]


def peer_folder(base: Path, work: Path, arch: str) -> tuple[Path, str]:
    """sentence-transformers' own ONNX export of ``base`` and its int8 file for ``arch``."""
    from sentence_transformers import SentenceTransformer, export_dynamic_quantized_onnx_model

    folder = work / "peer"
    shutil.rmtree(folder, ignore_errors=True)
    model = SentenceTransformer(str(base), backend="onnx", device="cpu")
    model.save_pretrained(str(folder))
    export_dynamic_quantized_onnx_model(model, arch, str(folder))
    return folder, f"onnx/model_qint8_{arch}.onnx"


def open_folder(folder: Path, file_name: str, like):
    from sentence_transformers import SentenceTransformer

    from adapter_zoo.biencoder import BiEncoder
    from adapter_zoo.onnx.scorer import session_options

    model = SentenceTransformer(
        str(folder), backend="onnx", device="cpu", local_files_only=True,
        model_kwargs={"file_name": file_name, "provider": "CPUExecutionProvider",
                      "session_options": session_options()},
    )  # fmt: skip
    return BiEncoder(model, base_model=like.base_model, device="cpu", max_length=like.max_length)


def int8_settings(fp32_model, folder: Path, texts: list[str], work: Path) -> list[dict]:
    """Cosine of int8 embeddings to fp32's for each int8 setting tried."""
    import numpy as np

    from adapter_zoo.onnx.quantize import Int8Config, quantize_graph

    reference = fp32_model.encode(texts)
    scratch = work / "settings"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(folder, scratch)
    rows = []
    tried = [Int8Config(False, False, 0, False), Int8Config(True, False, 0, False),
             Int8Config(True, True, 0, False), Int8Config(True, True, 2, False),
             Int8Config(True, False, 0, True), Int8Config(True, True, 1, True),
             Int8Config(True, False, 1, True)]  # fmt: skip
    for index, config in enumerate(tried):
        name = f"onnx/try{index}.onnx"
        quantize_graph(scratch / "onnx/model.onnx", scratch / name, config)
        vectors = open_folder(scratch, name, fp32_model).encode(texts)
        cosines = np.einsum("ij,ij->i", reference, vectors)
        rows.append({**config.as_dict(), "mean_cosine": float(cosines.mean()),
                     "worst_cosine": float(cosines.min())})  # fmt: skip
        print(f"int8 setting {config}: cosine mean {cosines.mean():.4f} worst {cosines.min():.4f}")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/int8-bench"))
    parser.add_argument("--limit", type=int, default=None, help="the first N lists of each set")
    parser.add_argument("--repeats", type=int, default=2, help="rounds of each (best counts)")
    parser.add_argument("--settings-texts", type=int, default=512)
    parser.add_argument("--out", type=Path, default=RESULTS / "int8.json")
    args = parser.parse_args()

    import adapter_zoo
    from adapter_zoo.onnx.quantize import config_for, cpu_arch, int8_file
    from adapter_zoo.onnx.scorer import onnx_scorer
    from adapter_zoo.ranker.model import resolve_base_model
    from stackexchange.io import atomic_write_json

    args.work.mkdir(parents=True, exist_ok=True)
    data = sets(args.work, args.limit)
    torch_fp32 = adapter_zoo.load(MODEL, precision="fp32", device="cpu")
    onnx_int8 = onnx_scorer(torch_fp32, "int8")
    onnx_fp32 = onnx_scorer(torch_fp32, "fp32")
    arch = cpu_arch()
    folder, peer_file = peer_folder(Path(resolve_base_model("minilm-l6")), args.work, arch)
    models = {"torch_fp32": torch_fp32, "onnx_fp32": onnx_fp32, "onnx_int8": onnx_int8,
              "peer_int8": open_folder(folder, peer_file, torch_fp32)}  # fmt: skip
    results = {}
    for set_name, dataset in data.items():
        pairs = pairs_of(dataset)
        seconds = {v: float("inf") for v in VARIANTS}
        scores = {}
        for _ in range(args.repeats):
            for variant in VARIANTS:
                began = time.perf_counter()
                scores[variant] = models[variant].score(pairs)
                seconds[variant] = min(seconds[variant], time.perf_counter() - began)
        row = {"lists": len(dataset), "pairs": len(pairs)}
        for variant in VARIANTS:
            row[variant] = {"pairs_per_s": len(pairs) / seconds[variant],
                            "map": dataset_map(scores[variant], dataset)}  # fmt: skip
            if variant != "torch_fp32":
                row[variant].update(lists_moved(scores["torch_fp32"], scores[variant], dataset))
                row[variant]["map_delta"] = row[variant]["map"] - row["torch_fp32"]["map"]
        speed = {v: row[v]["pairs_per_s"] for v in VARIANTS}
        row["int8_vs_torch_fp32"] = speed["onnx_int8"] / speed["torch_fp32"]
        row["int8_vs_peer"] = speed["onnx_int8"] / speed["peer_int8"]
        row["onnx_fp32_vs_torch_fp32"] = speed["onnx_fp32"] / speed["torch_fp32"]
        row["peer_vs_torch_fp32"] = speed["peer_int8"] / speed["torch_fp32"]
        row["int8_within_tolerance"] = abs(row["onnx_int8"]["map_delta"]) <= MAP_TOLERANCE
        results[set_name] = row
        print(f"{set_name}: {len(dataset)} lists, {len(pairs)} pairs; pairs/s "
              + ", ".join(f"{v} {speed[v]:.0f}" for v in VARIANTS)
              + f"; int8/torch {row['int8_vs_torch_fp32']:.2f}x, int8/peer "
              f"{row['int8_vs_peer']:.2f}x; MAP "
              + ", ".join(f"{v} {row[v]['map']:.4f}" for v in VARIANTS)
              + f"; int8 moved {row['onnx_int8']['lists_moved']} of "
              f"{row['onnx_int8']['lists']} lists", flush=True)  # fmt: skip
    wikiqa = data["wikiqa"]
    texts = list(dict.fromkeys(c for cands in wikiqa["candidates"] for c in cands))
    settings = int8_settings(torch_fp32, onnx_int8.onnx_folder, texts[: args.settings_texts],
                             args.work)  # fmt: skip
    within = all(row["int8_within_tolerance"] for row in results.values())
    record = {
        "machine": {**machine_info(), "int8_arch": arch},
        "args": {
            "model": MODEL,
            "limit": args.limit,
            "repeats": args.repeats,
            "settings_texts": min(args.settings_texts, len(texts)),
            "int8_file": int8_file(arch),
            "peer_file": peer_file,
            "int8": config_for(arch).as_dict(),
        },  # fmt: skip
        "targets": {
            "int8_vs_torch_fp32": TARGET_SPEEDUP,
            "int8_vs_peer": 1.0,
            "map_tolerance": MAP_TOLERANCE,
        },  # fmt: skip
        "sets": results,
        "int8_settings": settings,
        "auto_picks_int8": within,
        "note": "the machine ran another long benchmark at the same time (this one at nice 15)",
    }
    atomic_write_json(args.out, record)
    print(f"auto picks int8: {within} (MAP within {MAP_TOLERANCE} of fp32 on every set)")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
