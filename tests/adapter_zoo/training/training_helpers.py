"""What the training tests share: the fixture run's config, its CLI argv, its loss."""

from __future__ import annotations

from adapter_zoo.training import TrainingConfig
from adapter_zoo.training.data import example_columns

FAST = {"epochs": 1, "batch_size": 8, "max_length": 32}


def config(parsed, base, mode, name, forums=("beer",), **extra):
    return TrainingConfig(
        mode=mode,
        data=str(parsed),
        forums=forums,
        name=name,
        base_model=str(base),
        **{**FAST, **extra},
    )


def cli_train_argv(parsed, base) -> list[str]:
    """``adapter-zoo train`` of the beer adapter on the fixture, with FAST's settings."""
    return ["train", "--mode", "adapter", "--data", str(parsed), "--forums", "beer",
            "--name", "beer", "--base", str(base), "--epochs", "1", "--batch-size", "8",
            "--max-length", "32"]  # fmt: skip


def loss_on(cfg, model, tokenizer, examples):
    """The registered loss ``cfg.loss`` of ``model`` (inside a CrossEncoder) on ``examples``."""
    import torch

    from adapter_zoo.losses import build_loss
    from adapter_zoo.ranker.cross_encoder import as_cross_encoder

    cross = as_cross_encoder(model, tokenizer, cfg.max_length)
    loss = build_loss(cfg.loss, "cross", cross, margin=cfg.margin)
    columns = example_columns(examples, cfg.loss, cfg.negatives)
    labels = torch.tensor(columns.pop("label")) if "label" in columns else None
    return loss(list(columns.values()), labels)


DROP_PAIRS = [("why is my stout flat", "dead yeast"), ("what are hops", "flowers"), ("a", "b c")]
