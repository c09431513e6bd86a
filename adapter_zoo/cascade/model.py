"""``CascadeRanker``: one cross-encoder with a small classifier at several exit layers.

The encoder is a plain ``transformers.AutoModel`` (optionally with one adapters-library
bottleneck adapter); the cascade runs its layers one by one so that inference can stop
spending compute on candidates an early exit has already ranked low.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import adapters
import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer, BatchEncoding, PreTrainedModel
from transformers.tokenization_utils_base import PreTrainedTokenizerBase

from adapter_zoo.cascade.config import ADAPTER_NAME, CascadeConfig
from adapter_zoo.cascade.inference import QueryLists, run_cascade
from adapter_zoo.cascade.schedule import head_flops, layer_flops
from adapter_zoo.cascade.storage import read_cascade, save_cascade
from adapter_zoo.errors import ZooError
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.ranker import resolve_base_model
from adapter_zoo.ranker.heads import INITIAL_BIAS, INITIAL_SCALE, SEGMENTS_KEY, pair_cosine_logits
from adapter_zoo.ranker.inputs import check_max_length, check_ranking, text_pairs
from adapter_zoo.ranker.model import mean_pooling_base, quiet_adapter_activation
from adapter_zoo.ranker.ranker import encode_pairs


def exit_head(hidden: int, head_hidden: int, dropout: float) -> nn.Sequential:
    """The feed-forward classifier of one exit: CLS vector -> one relevance logit."""
    return nn.Sequential(
        nn.Dropout(dropout),
        nn.Linear(hidden, head_hidden),
        nn.GELU(),
        nn.Dropout(dropout),
        nn.Linear(head_hidden, 1),
    )


class PairCosineExit(nn.Module):
    """An exit that scores a pair by the scaled cosine of its two texts' mean token states."""

    def __init__(self):
        super().__init__()

        self.scale = nn.Parameter(torch.tensor(INITIAL_SCALE))
        self.bias = nn.Parameter(torch.tensor(INITIAL_BIAS))

    def forward(self, hidden: torch.Tensor, segments: torch.Tensor) -> torch.Tensor:
        return pair_cosine_logits(hidden, segments, self.scale, self.bias)


def default_exit_head(encoder: PreTrainedModel) -> str:
    """``pair_cosine`` for a mean-pooling sentence encoder (MiniLM), else ``cls``."""

    return "pair_cosine" if mean_pooling_base(encoder.config.name_or_path) else "cls"


class CascadeRanker(nn.Module):
    """A cross-encoder ranker with exits at intermediate layers (Cascade Transformer).

    Args:
        encoder: a ``transformers`` encoder (BERT-like: ``embeddings`` and ``encoder.layer``).
        tokenizer: its tokenizer.
        config: the cascade configuration (exits resolved against the encoder depth).
        base_model: the short name or path the encoder came from (recorded in the card).
        device: ``"cpu"``, ``"cuda"``...; ``None`` picks CUDA when available.

    Example:
        >>> ranker = CascadeRanker.from_base("minilm-l6")  # doctest: +SKIP
        >>> ranker.rank_many([("Is stout strong?", ["No.", "Hops."])], alpha=0.3)  # doctest: +SKIP
    """

    def __init__(
        self,
        encoder: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        config: CascadeConfig,
        *,
        base_model: str,
        device: str | torch.device | None = None,
    ):
        super().__init__()
        self.encoder = encoder
        self.tokenizer = tokenizer
        config = config.resolved(encoder.config.num_hidden_layers)
        check_max_length(config.max_length, encoder.config, model=str(base_model))
        if config.head is None:
            config = dataclasses.replace(config, head=default_exit_head(encoder))
        self.config = config
        self.base_model = base_model
        self.card: dict | None = None
        hidden = encoder.config.hidden_size
        self.heads = nn.ModuleList(
            PairCosineExit()
            if config.head == "pair_cosine"
            else exit_head(hidden, config.head_hidden, config.head_dropout)
            for _ in config.exits
        )
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.to(self.device)
        self.eval()

    # -- construction ------------------------------------------------------------------
    @classmethod
    def from_base(
        cls,
        base: str = DEFAULT_BASE,
        config: CascadeConfig | None = None,
        *,
        device: str | torch.device | None = None,
        seed: int = 0,
    ) -> CascadeRanker:
        """An untrained cascade over a pretrained encoder; heads (and adapter) seeded."""

        config = config or CascadeConfig()
        path = resolve_base_model(base)
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        encoder = AutoModel.from_pretrained(path, add_pooling_layer=False, trust_remote_code=False)
        torch.manual_seed(seed)
        if config.adapter:
            attach_adapter(encoder, config.adapter)
        return cls(encoder, tokenizer, config, base_model=base, device=device)

    @property
    def exits(self) -> tuple[int, ...]:
        return self.config.exits

    @property
    def layers(self) -> nn.ModuleList:
        return self.encoder.encoder.layer

    # -- building blocks ----------------------------------------------------------------
    def tokenize(
        self, queries: Sequence[str], candidates: Sequence[str], *, padding: bool = True
    ) -> BatchEncoding:
        """Tokenized (query, candidate) pairs, truncated to ``config.max_length``."""
        return encode_pairs(
            self.tokenizer, queries, candidates, self.config.max_length, padding=padding
        )

    def embed(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Embedding-layer output (B, L, H)."""
        kwargs = {"input_ids": input_ids.to(self.device)}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids.to(self.device)
        return self.encoder.embeddings(**kwargs)

    def run_layers(
        self, hidden: torch.Tensor, attention_mask: torch.Tensor, start: int, stop: int
    ) -> torch.Tensor:
        """Run encoder layers ``start..stop-1`` (0-based) on ``hidden`` with a 0/1 mask."""
        mask = attention_mask.to(self.device)
        extended = self.encoder.get_extended_attention_mask(mask, mask.shape)
        # A single bottleneck adapter reads its setup from the model's adapters_config, so
        # no adapters ForwardContext is needed (one would demand the raw inputs).
        for layer in self.layers[start:stop]:
            out = layer(hidden, extended)  # positional: adapters hooks read args[1]
            hidden = out[0] if isinstance(out, tuple) else out
        return hidden

    def exit_logits(
        self, hidden: torch.Tensor, exit_index: int, segments: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits (B,) of exit ``exit_index`` (0-based) from hidden states (B, L, H).

        ``segments`` (B, L): the ``pair_segments`` of the batch, which pair-cosine exits read.
        """
        if self.config.head == "pair_cosine":
            return self.heads[exit_index](hidden, segments.to(hidden.device))
        return self.heads[exit_index](hidden[:, 0]).squeeze(-1)

    def forward(self, batch: BatchEncoding | dict, exit_index: int) -> torch.Tensor:
        """Logits of one exit, running only the layers below it (used in training)."""
        hidden = self.embed(batch["input_ids"], batch.get("token_type_ids"))
        hidden = self.run_layers(hidden, batch["attention_mask"], 0, self.exits[exit_index])
        return self.exit_logits(hidden, exit_index, batch.get(SEGMENTS_KEY))

    # -- monolithic scoring --------------------------------------------------------------
    @torch.inference_mode()
    def score(
        self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 64, progress: bool = False
    ) -> np.ndarray:
        """Final-exit logits of (query, candidate) pairs with the encoder's own forward.

        This is the monolithic model (no candidate dropped); pairs are batched by length.
        """

        pairs = text_pairs(pairs)
        scores = np.zeros(len(pairs), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        last = len(self.exits) - 1
        self.eval()
        starts = range(0, len(order), batch_size)
        for start in tqdm(starts, disable=not progress, desc="score"):
            idx = order[start : start + batch_size]
            batch = self.tokenize([pairs[i][0] for i in idx], [pairs[i][1] for i in idx])
            batch = {k: v.to(self.device) for k, v in batch.items()}
            if self.exits[-1] == len(self.layers):
                keys = ("input_ids", "token_type_ids", "attention_mask")
                inputs = {k: batch[k] for k in keys if k in batch}
                hidden = self.encoder(**inputs).last_hidden_state
            else:
                hidden = self.embed(batch["input_ids"], batch.get("token_type_ids"))
                hidden = self.run_layers(hidden, batch["attention_mask"], 0, self.exits[-1])
            logits = self.exit_logits(hidden, last, batch.get(SEGMENTS_KEY))
            scores[idx] = logits.float().cpu().numpy()
        return scores

    # -- cascade inference ---------------------------------------------------------------
    def rank_many(
        self, queries_with_candidates: QueryLists, *, alpha: float | None = None, **kwargs
    ) -> list[np.ndarray]:
        """Cascade scores, one float32 array per query, in the candidates' input order.

        A candidate that reached exit ``k`` (0-based) of ``K`` gets ``k + sigmoid(logit_k)``,
        so candidates dropped earlier always rank below the survivors and, within one
        depth, the order is that exit's. With ``alpha=0`` the order is the monolithic one.
        """

        return run_cascade(self, queries_with_candidates, alpha=alpha, **kwargs).scores

    def exit_scores(
        self, queries_with_candidates: QueryLists, *, alpha: float | None = None, **kwargs
    ) -> list[np.ndarray]:
        """Per query an array (exits, candidates) of logits; NaN where a candidate was dropped."""

        return run_cascade(self, queries_with_candidates, alpha=alpha, **kwargs).exit_logits

    def rank(
        self,
        query: str,
        candidates: Sequence[str],
        *,
        alpha: float | None = None,
        top_k: int | None = None,
    ) -> list[tuple[str, float]]:
        """Candidates sorted best first with their cascade scores."""
        query, candidates = check_ranking(query, candidates, top_k)
        scores = self.rank_many([(query, list(candidates))], alpha=alpha)[0]
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [(candidates[i], float(scores[i])) for i in order]

    # -- compute accounting ---------------------------------------------------------------
    def adapter_bottleneck(self) -> int:
        if not self.config.adapter:
            return 0
        adapter_config = self.encoder.adapters_config.get(ADAPTER_NAME)
        return int(self.encoder.config.hidden_size // adapter_config["reduction_factor"])

    def segment_flops(self, seq_len: int, exit_index: int) -> int:
        """FLOPs for one sequence from the previous exit through exit ``exit_index``'s head."""
        cfg = self.encoder.config
        start = self.exits[exit_index - 1] if exit_index else 0
        n_layers = self.exits[exit_index] - start
        per_layer = layer_flops(
            seq_len, cfg.hidden_size, cfg.intermediate_size, self.adapter_bottleneck()
        )
        if self.config.head == "pair_cosine":  # two masked means and a cosine
            return n_layers * per_layer + 4 * seq_len * cfg.hidden_size
        return n_layers * per_layer + head_flops(cfg.hidden_size, self.config.head_hidden)

    # -- persistence -----------------------------------------------------------------------
    def save(
        self, name_or_path: str | Path, *, card: dict | None = None, overwrite: bool = False
    ) -> Path:
        """Write this ranker as a zoo entry of kind ``cascade``; returns its folder."""

        return save_cascade(self, name_or_path, card=card, overwrite=overwrite)

    @classmethod
    def load(
        cls, name_or_path: str | Path, *, device: str | torch.device | None = None
    ) -> CascadeRanker:
        """Load a cascade zoo entry (checks every file's sha256 first)."""

        return load_cascade(name_or_path, device=device)


def load_cascade(
    name_or_path: str | Path, *, device: str | torch.device | None = None
) -> CascadeRanker:
    """Load a cascade zoo entry written by ``save_cascade`` (every file's sha256 checked
    first)."""

    parts = read_cascade(name_or_path)
    ranker = CascadeRanker(
        parts.encoder,
        parts.tokenizer,
        parts.config,
        base_model=parts.card["base_model"],
        device=device,
    )
    ranker.heads.load_state_dict(parts.exits)
    ranker.card = parts.card
    return ranker.to(ranker.device).eval()


def attach_adapter(encoder: PreTrainedModel, adapter_config: str) -> None:
    """Add one trainable bottleneck adapter to ``encoder`` (frozen otherwise) and activate it."""

    quiet_adapter_activation()
    adapters.init(encoder)
    try:
        encoder.add_adapter(ADAPTER_NAME, config=adapter_config)
    except (KeyError, ValueError) as error:
        raise ZooError(f"cascade: unknown adapter config {adapter_config!r}: {error}") from None
    encoder.train_adapter(ADAPTER_NAME)
    encoder.eval()
