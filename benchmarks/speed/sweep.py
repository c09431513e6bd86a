"""The zoo sweep: N adapters in one shared ``Parallel`` pass vs N independent passes.

Both sides score the same WikiQA test pairs with the same N SeqBn adapters (with their
one-logit heads) over MiniLM, in one run:

* independent: what ``benchmarks.sweep`` / N ``adapter-zoo evaluate`` runs do in-process —
  per adapter, build the base model, load the adapter, tokenize and score every pair;
* shared: ``adapter_zoo.sweep.sweep`` — one model with all N adapters under ``Parallel``;
  the pairs are tokenized and length-sorted once, and the embeddings and first layer's
  attention and feed-forward block (everything below the first adapter) run once per batch.

The adapters are random (made non-identity) because the zoo's trained adapters are not
available offline here; neither the timing nor the equality check depends on the weights.
Times include model loading. Scores must be identical (max |difference| is reported).

``--drop-lower K`` gives every adapter AdapterDrop's ``leave_out=[0..K-1]`` (what
``adapter-zoo train --drop-lower K`` writes): the shared pass then runs the lowest K + 1
layers once for all N adapters, the independent passes are unchanged in kind.

Run: ``python benchmarks/speed/sweep.py [--adapters 8] [--queries 80] [--drop-lower K]
[--out results/sweep_k2.json]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine_info  # noqa: E402

SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"


def make_adapters(
    base: str, folder: Path, count: int, seed: int = 0, drop_lower: int = 0
) -> list[str]:
    """``count`` random SeqBn adapters with one-logit heads, saved as adapter folders;
    ``drop_lower``: none in the lowest layers (``train --drop-lower``)."""
    import torch
    from adapters import SeqBnConfig

    from adapter_zoo.ranker.model import add_ranking_head, build_model

    paths = []
    model, _ = build_model(base)
    for i in range(count):
        torch.manual_seed(seed + i)
        model.add_adapter(f"a{i}", config=SeqBnConfig(leave_out=list(range(drop_lower))))
        add_ranking_head(model, f"a{i}")
        with torch.no_grad():  # away from the identity, so the adapters really differ
            for name, param in model.named_parameters():
                if f"adapters.a{i}." in name:
                    param.add_(torch.randn_like(param) * 0.05)
        path = folder / f"adapter-{i}"
        model.save_adapter(str(path), f"a{i}", with_head=True)
        paths.append(str(path))
    return paths


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapters", type=int, default=8)
    parser.add_argument("--queries", type=int, default=80, help="WikiQA test questions scored")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--drop-lower",
        type=int,
        default=0,
        metavar="K",
        help="AdapterDrop: no adapter in the lowest K layers of every entry (default 0)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "sweep.json")
    args = parser.parse_args(argv)

    import numpy as np

    import benchmarks
    from adapter_zoo.sweep import independent_scores, sweep
    from stackexchange.io import atomic_write_json

    test = benchmarks.get("wikiqa").load("test", data_dir=SHARED / "benchmarks")
    test = test.select(range(min(args.queries, len(test))))
    pairs = [(q, c) for q, cands in zip(test["query"], test["candidates"]) for c in cands]
    with tempfile.TemporaryDirectory() as work:
        adapters = make_adapters("minilm-l6", Path(work), args.adapters, drop_lower=args.drop_lower)
        started = time.perf_counter()
        separate = independent_scores("minilm-l6", adapters, pairs, args.batch_size, device="cpu")
        independent_s = time.perf_counter() - started
        started = time.perf_counter()
        shared = sweep("minilm-l6", adapters, pairs, args.batch_size, device="cpu")
        shared_s = time.perf_counter() - started
    difference = max(float(np.abs(shared[a] - separate[a]).max()) for a in adapters)
    spread = min(float(np.abs(shared[a] - shared[b]).max()) for a, b in zip(adapters, adapters[1:]))
    record = {
        "benchmark": "sweep",
        "machine": machine_info(),
        "data": "wikiqa test",
        "queries": len(test),
        "pairs": len(pairs),
        "adapters": args.adapters,
        "drop_lower": args.drop_lower,
        "batch_size": args.batch_size,
        "independent_s": independent_s,
        "shared_s": shared_s,
        "speedup": independent_s / shared_s,
        "independent_pairs_per_s": len(pairs) * args.adapters / independent_s,
        "shared_pairs_per_s": len(pairs) * args.adapters / shared_s,
        "max_abs_score_difference": difference,
        "min_difference_between_adapters": spread,
        "target_speedup": 1.5,
    }
    print(
        f"{args.adapters} adapters x {len(pairs)} pairs (WikiQA test, {len(test)} questions), "
        f"drop lower {args.drop_lower}"
    )
    print(f"{'method':<12} {'seconds':>8} {'pairs/s':>8} {'ratio':>6}")
    print(
        f"{'independent':<12} {independent_s:8.1f} {record['independent_pairs_per_s']:8.1f} 1.00x"
    )
    print(
        f"{'shared':<12} {shared_s:8.1f} {record['shared_pairs_per_s']:8.1f} "
        f"{record['speedup']:5.2f}x"
    )
    print(f"max |score difference| = {difference:.2e} (adapters differ by >= {spread:.2e})")
    atomic_write_json(args.out, record)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
