"""The fixed drop schedule, exit sampling for training, and analytic FLOPs of encoder layers."""

from __future__ import annotations

import math
import random


def keep_schedule(n_candidates: int, alpha: float, n_exits: int) -> list[int]:
    """How many candidates of one query are scored at each exit.

    Every exit but the last drops ``round(n * alpha)`` of the ``n`` candidates it scored
    (halves rounded up; at least 1 is kept), so batch sizes are known before the forward
    pass. Rounding to nearest, not keeping ``ceil(n * (1 - alpha))``: answer-selection
    lists are short (WikiQA: 10 candidates on average, a quarter of them 2 to 5), and
    always rounding the kept count up dropped a fraction well below alpha (at alpha = 0.4,
    31% of WikiQA's pair-layers saved instead of the nominal 35%).

    Example:
        >>> keep_schedule(10, 0.3, 3)
        [10, 7, 5]
        >>> keep_schedule(7, 0.4, 3)
        [7, 4, 2]
        >>> keep_schedule(1, 0.5, 3)
        [1, 1, 1]
    """
    if n_candidates < 0 or n_exits < 1:
        raise ValueError(f"keep_schedule: bad n_candidates={n_candidates} or n_exits={n_exits}")
    counts = [n_candidates]
    for _ in range(n_exits - 1):
        previous = counts[-1]
        # round(.., 9) guards floor against float noise such as 90 * 0.35 = 31.499999999999996
        dropped = math.floor(round(previous * alpha, 9) + 0.5)
        counts.append(max(min(previous, 1), previous - dropped))
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
