"""Deterministic train/dev/test assignment by hashed question id (80/10/10)."""

from __future__ import annotations

SPLITS = ("train", "dev", "test")
_MASK = (1 << 64) - 1


def split_of(key: int) -> str:
    """The split of a question (or duplicate cluster) id: splitmix64 hash, then 8/1/1 of 10.

    A fixed integer hash rather than Python's ``hash`` (salted for str, identity for int), so
    splits are the same on every machine and Python version.

    Example:
        >>> [split_of(i) for i in (1, 2, 3)] == [split_of(i) for i in (1, 2, 3)]
        True
    """
    x = (key + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    bucket = (x ^ (x >> 31)) % 10
    return "train" if bucket < 8 else ("dev" if bucket == 8 else "test")
