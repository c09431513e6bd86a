"""The fixed drop schedule, exit sampling for training, and analytic FLOPs of encoder layers."""

from __future__ import annotations

import math
import random


def keep_schedule(n_candidates: int, alpha: float, n_exits: int) -> list[int]:
    """How many candidates of one query are scored at each exit.

    Every exit but the last keeps ``ceil(n * (1 - alpha))`` of the ``n`` candidates it
    scored (never fewer than 1), so batch sizes are known before the forward pass.

    Example:
        >>> keep_schedule(10, 0.3, 3)
        [10, 7, 5]
        >>> keep_schedule(1, 0.5, 3)
        [1, 1, 1]
    """
    if n_candidates < 0 or n_exits < 1:
        raise ValueError(f"keep_schedule: bad n_candidates={n_candidates} or n_exits={n_exits}")
    counts = [n_candidates]
    for _ in range(n_exits - 1):
        previous = counts[-1]
        # round() guards ceil against float noise such as 10 * 0.7 = 7.000000000000001
        kept = max(1, math.ceil(round(previous * (1 - alpha), 9)))
        counts.append(min(previous, kept))
    return counts


def sample_exits(n_steps: int, n_exits: int, seed: int) -> list[int]:
    """The exit index (0-based) trained at each minibatch: uniform, reproducible from ``seed``.

    Example:
        >>> sample_exits(5, 3, seed=0) == sample_exits(5, 3, seed=0)
        True
    """
    rng = random.Random(seed)
    return [rng.randrange(n_exits) for _ in range(n_steps)]


def layer_flops(seq_len: int, hidden: int, intermediate: int, adapter_bottleneck: int = 0) -> int:
    """Multiply-add FLOPs (2 per MAC) of one transformer encoder layer on one sequence.

    Q, K, V and output projections (4 L H^2 MACs), attention scores and the weighted sum
    (2 L^2 H MACs), the feed-forward block (2 L H I MACs) and, if present, a bottleneck
    adapter (2 L H r MACs). Layer norms, softmax and biases are left out (lower order).

    Example:
        >>> layer_flops(10, 4, 8)
        4160
    """
    macs = 4 * seq_len * hidden * hidden + 2 * seq_len * seq_len * hidden
    macs += 2 * seq_len * hidden * intermediate + 2 * seq_len * hidden * adapter_bottleneck
    return 2 * macs


def head_flops(hidden: int, head_hidden: int) -> int:
    """FLOPs of one exit classifier on one CLS vector (2 per MAC)."""
    return 2 * (hidden * head_hidden + head_hidden)
