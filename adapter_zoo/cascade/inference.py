"""Cascade inference: score candidates exit by exit, drop a fixed fraction, reuse encodings.

Candidates of a chunk of queries travel together. Between two exits the surviving pairs
are batched by length; their partial encodings (trimmed to each pair's own length) are
kept so the next segment of layers starts where the previous one stopped.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from tqdm.auto import tqdm

from adapter_zoo.cascade.schedule import keep_schedule
from adapter_zoo.errors import ZooError
from adapter_zoo.ranker.inputs import check_ranking
from adapter_zoo.ranker.ranker import pair_segments
from stackexchange.numbers import MAX_BATCH, check_number

if TYPE_CHECKING:
    from adapter_zoo.cascade.model import CascadeRanker

# (query, its candidates), one per query
QueryLists = Sequence[tuple[str, Sequence[str]]]


@dataclass
class CascadeOutput:
    """Everything one cascade run produced.

    Attributes:
        scores: per query, float32 scores in input order (``depth + sigmoid(logit)``).
        exit_logits: per query, (exits, candidates) logits, NaN where not reached.
        depth: per query, the 0-based index of the last exit each candidate reached.
        flops: analytic FLOPs spent (actual sequence lengths, no padding).
        padded_flops: FLOPs including batch padding (what the hardware really ran).
        pairs: number of (query, candidate) pairs ranked.
        seconds: wall time of the run, tokenization included.
    """

    scores: list[np.ndarray]
    exit_logits: list[np.ndarray]
    depth: list[np.ndarray]
    flops: int = 0
    padded_flops: int = 0
    pairs: int = 0
    seconds: float = 0.0
    kept: list[list[int]] = field(default_factory=list)

    @property
    def pairs_per_second(self) -> float:
        return self.pairs / self.seconds if self.seconds else float("nan")


def _chunks(queries_with_candidates: QueryLists, chunk_pairs: int) -> Iterator[list[int]]:
    chunk, size = [], 0
    for index, (_, candidates) in enumerate(queries_with_candidates):
        chunk.append(index)
        size += len(candidates)
        if size >= chunk_pairs:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


@torch.inference_mode()
def run_cascade(
    ranker: CascadeRanker,
    queries_with_candidates: QueryLists,
    *,
    alpha: float | None = None,
    batch_size: int = 64,
    chunk_pairs: int = 512,
    progress: bool = False,
) -> CascadeOutput:
    """Rank each query's candidates with the cascade of ``ranker``.

    Args:
        ranker: a ``CascadeRanker``.
        queries_with_candidates: a sequence of ``(query, [candidate, ...])``.
        alpha: drop ratio per exit; ``None`` takes ``ranker.config.alpha``.
        batch_size: pairs per forward batch of a layer segment.
        chunk_pairs: about how many pairs are in flight at once (bounds memory).
        progress: show a tqdm bar over queries.
    """

    alpha = ranker.config.alpha if alpha is None else alpha
    if not 0.0 <= alpha < 1.0:
        raise ZooError(f"cascade: alpha must be in [0, 1), got {alpha}")
    check_number(
        "cascade: batch_size", batch_size, integer=True, low=1, high=MAX_BATCH, error=ZooError
    )
    check_number("cascade: chunk_pairs", chunk_pairs, integer=True, low=1, error=ZooError)
    items = [check_ranking(q, c, caller="cascade") for q, c in queries_with_candidates]
    n_exits = len(ranker.exits)
    out = CascadeOutput(
        scores=[np.zeros(len(c), np.float32) for _, c in items],
        exit_logits=[np.full((n_exits, len(c)), np.nan, np.float32) for _, c in items],
        depth=[np.zeros(len(c), np.int64) for _, c in items],
        kept=[keep_schedule(len(c), alpha, n_exits) for _, c in items],
        pairs=sum(len(c) for _, c in items),
    )
    ranker.eval()
    started = time.perf_counter()
    bar = tqdm(total=len(items), disable=not progress, desc="cascade")
    for chunk in _chunks(items, chunk_pairs):
        _run_chunk(ranker, items, chunk, out, batch_size)
        bar.update(len(chunk))
    bar.close()
    out.seconds = time.perf_counter() - started
    return out


def _run_chunk(
    ranker: CascadeRanker, items: QueryLists, chunk: list[int], out: CascadeOutput, batch_size: int
) -> None:
    owners = [(q, c) for q in chunk for c in range(len(items[q][1]))]
    if not owners:
        return
    encoded = ranker.tokenize(
        [items[q][0] for q, _ in owners], [items[q][1][c] for q, c in owners], padding=False
    )
    ids = [torch.tensor(x) for x in encoded["input_ids"]]
    types = (
        [torch.tensor(x) for x in encoded["token_type_ids"]]
        if "token_type_ids" in encoded
        else None
    )
    segments = [torch.tensor(x) for x in pair_segments(encoded)]
    lengths = np.array([len(x) for x in ids])
    owner_query = np.array([q for q, _ in owners])
    states: list[torch.Tensor | None] = [None] * len(owners)  # partial encodings (L_i, H)
    alive = np.arange(len(owners))
    n_exits = len(ranker.exits)
    for k in range(n_exits):
        start = ranker.exits[k - 1] if k else 0
        logits = np.zeros(len(owners), np.float32)
        ordered = alive[np.argsort(lengths[alive], kind="stable")]
        for b in range(0, len(ordered), batch_size):
            idx = ordered[b : b + batch_size]
            mask = pad_sequence([torch.ones(lengths[i], dtype=torch.long) for i in idx], True)
            if k == 0:
                hidden = ranker.embed(
                    pad_sequence([ids[i] for i in idx], True, ranker.tokenizer.pad_token_id or 0),
                    pad_sequence([types[i] for i in idx], True) if types is not None else None,
                )
            else:
                hidden = pad_sequence([states[i] for i in idx], True)
            hidden = ranker.run_layers(hidden, mask, start, ranker.exits[k])
            batch_segments = pad_sequence([segments[i] for i in idx], True)
            logits[idx] = ranker.exit_logits(hidden, k, batch_segments).float().cpu().numpy()
            if k < n_exits - 1:
                for row, i in enumerate(idx):
                    states[i] = hidden[row, : lengths[i]]
            out.padded_flops += len(idx) * ranker.segment_flops(int(mask.shape[1]), k)
        out.flops += sum(ranker.segment_flops(int(lengths[i]), k) for i in alive)
        survivors = []
        for q in chunk:
            mine = alive[owner_query[alive] == q]
            positions = [owners[i][1] for i in mine]
            out.exit_logits[q][k, positions] = logits[mine]
            out.depth[q][positions] = k
            out.scores[q][positions] = k + 1.0 / (1.0 + np.exp(-logits[mine].astype(np.float64)))
            if k < n_exits - 1:
                keep = out.kept[q][k + 1]
                # stable: among equal logits the earlier candidate survives
                best = np.argsort(-logits[mine], kind="stable")[:keep]
                survivors.extend(int(mine[j]) for j in best)
        dropped = set(alive.tolist()) - set(survivors)
        for i in dropped:
            states[i] = None  # free encodings of dropped candidates
        alive = np.array(sorted(survivors), dtype=np.int64)
