"""Domain similarity as MultiCQA measured it: centroids of sentence embeddings.

A domain's centroid is the normalised mean of the normalised all-MiniLM-L6-v2 sentence
embeddings of its questions (a seeded sample of at most :data:`MAX_TEXTS` distinct texts).
Two domains are as similar as the cosine of their centroids.

Every trained zoo entry stores the centroid of its training forums' train-split question
titles in ``domain.safetensors`` (tensor ``centroid``, float32) and says so in its card
(``domain``), so similarity works for an entry pulled from the Hub, whose card names no local
forum folder; :func:`folder_centroid` reads it, verified against the card's hashes
(:func:`adapter_zoo.adapt.domain.entry_centroid` finds the entry of a name first).

This module sits below training (every trainer writes a centroid through :func:`with_domain`)
and above :mod:`adapter_zoo.ranker` (the embedder's base): it reads folders, never names.

Example:
    >>> from adapter_zoo.zoo.domain import domain_centroid, folder_centroid
    >>> target = domain_centroid(["Which glass for a stout?", "Is IPA bitter?"])  # doctest: +SKIP
    >>> float(target @ folder_centroid(zoo_home() / "beer"))  # doctest: +SKIP
    0.83
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file, save_file

from adapter_zoo.errors import ZooError
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.ranker import resolve_base_model
from adapter_zoo.zoo.store import read_card
from stackexchange.io import sha256_file

logger = logging.getLogger(__name__)

EMBEDDER = "all-MiniLM-L6-v2"
DOMAIN_FILE = "domain.safetensors"
CENTROID_TENSOR = "centroid"
# Texts embedded per domain (a seeded sample), as benchmarks.recommend always did: 500
# titles settle a forum's centroid (a second sample of 500 moves the cosine by < 0.01).
MAX_TEXTS = 500


def load_embedder(device=None):
    """all-MiniLM-L6-v2 from the offline package, as a SentenceTransformer.

    Example:
        >>> load_embedder().encode(["a stout"]).shape  # doctest: +SKIP
        (1, 384)
    """
    # sentence-transformers on first use: the CLI starts without it
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(
        resolve_base_model(DEFAULT_BASE), device=device or "cpu", trust_remote_code=False
    )


@functools.cache
def default_embedder():
    """One :func:`load_embedder` per process (CPU): training writes a centroid per entry,
    and a recipe trains many entries in one process."""
    return load_embedder()


def sample_texts(texts: Sequence[str], limit: int | None = None, seed: int = 0) -> list[str]:
    """Distinct non-blank ``texts`` (first occurrence order), a seeded sample of ``limit``
    (default :data:`MAX_TEXTS`).

    Example:
        >>> sample_texts(["a", "b", "a", " "], limit=5)
        ['a', 'b']
    """
    texts = [t for t in dict.fromkeys(texts) if t and t.strip()]
    limit = MAX_TEXTS if limit is None else limit
    if len(texts) > limit:
        texts = random.Random(seed).sample(texts, limit)
    return texts


def mean_embedding(model, texts: Sequence[str]) -> np.ndarray:
    """The normalised mean (float64) of the normalised sentence embeddings of ``texts``."""
    if not texts:
        raise ZooError("domain similarity: no questions to embed")
    vectors = model.encode(list(texts), batch_size=64, normalize_embeddings=True)
    mean = np.asarray(vectors, dtype=np.float64).mean(axis=0)
    return mean / np.linalg.norm(mean)


def domain_centroid(
    texts: Sequence[str], embedder=None, *, max_texts: int | None = None, seed: int = 0
) -> np.ndarray:
    """The centroid (float32, unit length) of a seeded sample of ``texts``.

    Args:
        texts: the domain's questions (or candidate texts); duplicates and blanks dropped.
        embedder: a SentenceTransformer (default: all-MiniLM-L6-v2, loaded once).
        max_texts: at most this many texts are embedded (a seeded sample; default
            :data:`MAX_TEXTS`).
        seed: the sample's seed.

    Example:
        >>> domain_centroid(["Which glass for a stout?"]).shape  # doctest: +SKIP
        (384,)
    """
    chosen = sample_texts(texts, max_texts, seed)
    if not chosen:
        raise ZooError("domain similarity: no non-blank text to embed")
    mean = mean_embedding(embedder or default_embedder(), chosen)
    return mean.astype(np.float32)


def forum_questions(forum_dir, *, split: str | None = "train") -> list[str]:
    """Question titles of one parsed forum (``DIR/<host>/questions``), of ``split`` if given."""
    # stackexchange.store loads pyarrow: the CLI starts without it
    from stackexchange.store import read_dataset

    folder = Path(forum_dir) / "questions"
    if not folder.is_dir():
        raise ZooError(f"{forum_dir}: no questions/ folder (not a parsed forum)")
    questions = read_dataset(folder, ZooError)
    titles = questions["title"]
    if split is None or "split" not in questions.column_names:
        return list(titles)
    # the columns, not Dataset.filter: that writes a cache file into the parsed forum, an
    # input (a shared, read-only one fails), and a run killed mid-way leaves its temporary
    return [title for title, part in zip(titles, questions["split"]) if part == split]


def training_texts(data, hosts: Sequence[str]) -> list[str]:
    """The train-split question titles of the forums ``hosts`` of the parse output ``data``."""
    texts: list[str] = []
    for host in hosts:
        forum = Path(data) / host
        if not forum.is_dir():
            raise ZooError(f"training forum {host!r} not found at {forum}")
        texts += forum_questions(forum, split="train")
    return texts


def write_centroid(folder: Path, centroid: np.ndarray) -> None:
    """``folder/domain.safetensors`` holding ``centroid`` as float32."""

    vector = np.ascontiguousarray(np.asarray(centroid, dtype=np.float32).reshape(-1))
    save_file({CENTROID_TENSOR: vector}, str(folder / DOMAIN_FILE))


def domain_card(texts: int) -> dict:
    """The card's ``domain`` field for a centroid of ``texts`` texts."""
    return {"embedder": EMBEDDER, "texts": int(texts), "file": DOMAIN_FILE}


def training_domain(data, hosts: Sequence[str]):
    """``(centroid, number of texts)`` of the training forums, or None when a forum has no
    ``questions/`` folder to take titles from (the entry then has no stored centroid)."""
    try:
        texts = sample_texts(training_texts(data, hosts))
    except ZooError as error:
        logger.warning("no domain centroid for the entry: %s", error)
        return None
    if not texts:
        logger.warning("no domain centroid for the entry: %s has no train question", data)
        return None
    return _cached_centroid(tuple(texts)), len(texts)


def with_domain(writer, card: dict, data, hosts: Sequence[str]):
    """``writer`` that also writes the training forums' centroid (``domain.safetensors``),
    and ``card["domain"]`` set to say so: what every trainer passes to ``save_entry``.
    Without titles to embed (no ``questions/``), ``writer`` and ``card`` stay as they are.

    Example:
        >>> save_entry(with_domain(writer, card, "parsed", ["beer.stackexchange.com"]),
        ...            "beer", card)  # doctest: +SKIP
    """
    domain = training_domain(data, hosts)
    if domain is None:
        return writer
    centroid, texts = domain
    card["domain"] = domain_card(texts)

    def write(folder: Path) -> None:
        writer(folder)
        write_centroid(folder, centroid)

    return write


@functools.lru_cache(maxsize=16)
def _cached_centroid(texts: tuple[str, ...]) -> np.ndarray:
    # Several entries trained on the same forums in one process (a recipe, a sweep of
    # settings) embed the same titles once.
    return domain_centroid(list(texts))


def _stored_centroid(path: Path, card: dict) -> np.ndarray:
    relative = card["domain"].get("file") if isinstance(card["domain"], dict) else None
    if relative not in card["files"]:
        raise ZooError(f"{path}: the card's domain file {relative!r} is not among its files")
    file = path / relative
    if not file.is_file() or sha256_file(file) != card["files"][relative]:
        raise ZooError(f"{file}: missing or corrupted (sha256 differs from the card)")
    try:
        tensors = load_file(str(file))
    except (SafetensorError, OSError) as error:
        raise ZooError(f"{file}: not a readable safetensors file ({error})") from None
    vector = tensors.get(CENTROID_TENSOR)
    if vector is None or vector.ndim != 1 or not np.all(np.isfinite(vector)) or not vector.size:
        raise ZooError(f"{file}: no finite 1-d tensor {CENTROID_TENSOR!r}")
    return vector.astype(np.float32)


def folder_centroid(path, *, forums_dir=None, embedder=None) -> np.ndarray:
    """The domain centroid of the zoo entry in folder ``path``.

    The entry's own ``domain.safetensors`` when its card has ``domain``; for an older entry
    the centroid of its training forums' train-split titles, found through the card
    (``training.data`` or ``forums_dir``, and ``forums``).

    Args:
        path: an entry folder.
        forums_dir: where an older entry's training forums are parsed (default: its card's
            ``training.data``).
        embedder: embeds an older entry's titles (default all-MiniLM-L6-v2).

    Raises:
        ZooError: neither is available, or the stored file is damaged.
    """

    path = Path(path)
    card = read_card(path)
    if card.get("domain"):
        return _stored_centroid(path, card)
    data = forums_dir or (card.get("training") or {}).get("data")
    if not card.get("forums") or not data:
        raise ZooError(
            f"{path}: zoo entry {card['name']!r} has no domain centroid and the card "
            "names no training forums/data; pass forums_dir"
        )
    try:
        texts = sample_texts(training_texts(data, card["forums"]))
    except ZooError as error:
        raise ZooError(f"{path}: {error}; pass forums_dir") from None
    if embedder is not None:
        return domain_centroid(texts, embedder)
    return _cached_centroid(tuple(texts))
