"""The frozen lower layers' outputs, computed once per distinct text and reused.

With AdapterDrop (``drop_lower`` = k) the embeddings and the lowest k layers hold no trainable
weight, so their output for a text is a function of its token ids alone. Autograd already
stops below the first adapter; what a step still repeats is their *forward* pass, every
time a text comes back: each evaluation of the selection lists (the same few thousand texts
at every evaluation), the no-grad pass of the cached in-batch loss, a second epoch over a
small target. :class:`PrefixCache` keeps that output per distinct text (its token ids, so a
changed text or another truncation is another key) and runs only the layers above on the
batch.

Why by hand: neither transformers, adapters nor sentence-transformers can start a forward
pass at layer k from stored hidden states (adapters' AdapterDrop skips the adapters of the
lower layers, not the layers).

The frozen layers run in eval mode (no dropout) whether their output is cached or not, so a
cached and an uncached step compute the same loss (``tests/adapter_zoo/training/
test_prefix_cache.py``: to 1e-6 on a tiny model). A change of any frozen weight (another
base, an in-place edit) empties the cache: each weight's version counter is checked before
every use. Memory is bounded: past ``max_bytes`` new texts are computed but not kept.

Example:
    >>> cache = PrefixCache(transformer, layers=4, max_bytes=1 << 30)  # doctest: +SKIP
    >>> with cache.installed():  # doctest: +SKIP
    ...     model.encode(texts)  # the lowest 4 layers run once per distinct text
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from transformers.modeling_outputs import BaseModelOutput

from adapter_zoo.errors import ZooError
from adapter_zoo.training.models import transformer_layers

# Bytes the cache may hold when the run names none: a target's training texts at 128 tokens
# and its selection lists at 256 (ArguAna: about 0.6 GB in fp32 at hidden size 384).
DEFAULT_MAX_BYTES = 1_500_000_000


class PrefixCache:
    """Hidden states after the lowest ``layers`` layers of ``transformer``, per distinct
    token-id sequence.

    Attributes:
        layers: how many of the lowest layers (with the embeddings) are cached.
        max_bytes: the most the kept hidden states may take.
        hits: texts whose prefix came from the cache.
        misses: texts whose prefix was computed.
        stored_bytes: what the kept hidden states take now.
    """

    def __init__(self, transformer, layers: int, *, max_bytes: int = DEFAULT_MAX_BYTES):
        all_layers = transformer_layers(transformer)
        if not 0 < layers < len(all_layers):
            raise ZooError(
                f"prefix cache: {layers} layers of {len(all_layers)}; cache 1 to "
                f"{len(all_layers) - 1}"
            )
        self.transformer = transformer
        self.layers = layers
        self.max_bytes = max_bytes
        self._frozen = [transformer.embeddings, *all_layers[:layers]]
        self._upper = list(all_layers[layers:])
        below = {id(p) for m in self._frozen for p in m.parameters()}
        trainable = [n for n, p in transformer.named_parameters()
                     if id(p) in below and p.requires_grad]  # fmt: skip
        if trainable:
            raise ZooError(
                f"prefix cache: the lowest {layers} layers must be frozen, but "
                f"{trainable[0]} trains"
            )
        self._states: dict[bytes, torch.Tensor] = {}
        self._versions = self._frozen_versions()
        self.hits = self.misses = self.stored_bytes = 0

    def _frozen_versions(self) -> tuple[int, ...]:
        return tuple(p._version for m in self._frozen for p in m.parameters())

    def clear(self) -> None:
        """Forget every kept state."""
        self._states.clear()
        self.stored_bytes = 0
        self._versions = self._frozen_versions()

    def record(self) -> dict:
        """What the cache did, for the card."""
        return {
            "layers": self.layers,
            "texts": len(self._states),
            "hits": self.hits,
            "misses": self.misses,
            "megabytes": round(self.stored_bytes / 1e6, 1),
        }

    @contextlib.contextmanager
    def installed(self) -> Iterator[PrefixCache]:
        """Within the block the transformer's forward reads the lower layers from the cache
        (sentence-transformers calls ``auto_model.forward`` by attribute)."""
        self.transformer.forward = self.forward
        try:
            yield self
        finally:
            del self.transformer.forward

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, **_ignored):
        """The transformer's ``last_hidden_state`` for a right-padded batch of token ids."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        hidden = self.prefix(input_ids, attention_mask, token_type_ids)
        return BaseModelOutput(last_hidden_state=self._run(self._upper, hidden, attention_mask))

    def _run(self, layers, hidden, attention_mask) -> torch.Tensor:
        """``layers`` in turn on ``hidden`` (B, L, H) under a 0/1 ``attention_mask``."""
        extended = self.transformer.get_extended_attention_mask(attention_mask, hidden.shape[:2])
        for layer in layers:
            # positional: the adapters library's layer hooks read the mask as args[1]
            out = layer(hidden, extended)
            hidden = out[0] if isinstance(out, tuple) else out
        return hidden

    def prefix(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        """The lower layers' output (B, L, H) for the batch: kept rows from the cache, the
        others computed (in one pass) and kept while there is room."""
        if self._frozen_versions() != self._versions:
            self.clear()
        lengths = attention_mask.sum(dim=1).tolist()
        ids = input_ids.cpu().numpy()
        keys = [ids[i, :n].tobytes() for i, n in enumerate(lengths)]
        if token_type_ids is not None:
            types = token_type_ids.cpu().numpy()
            keys = [k + types[i, :n].tobytes() for i, (k, n) in enumerate(zip(keys, lengths))]
        missing = [i for i, k in enumerate(keys) if k not in self._states]
        computed = self._compute(input_ids, attention_mask, token_type_ids, missing)
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        rows = [computed[i] if i in computed else self._states[k] for i, k in enumerate(keys)]
        hidden = rows[0].new_zeros(len(keys), input_ids.shape[1], rows[0].shape[-1])
        for i, (key, n, state) in enumerate(zip(keys, lengths, rows)):
            room = self.stored_bytes + state.nbytes <= self.max_bytes
            if i in computed and key not in self._states and room:
                self._states[key] = state
                self.stored_bytes += state.nbytes
            hidden[i, :n] = state
        return hidden

    @torch.no_grad()
    def _compute(self, input_ids, attention_mask, token_type_ids, rows) -> dict:
        """Row -> its lower layers' output (length, H), for ``rows`` of the batch."""
        if not rows:
            return {}
        index = torch.tensor(rows)
        lengths = attention_mask[index].sum(dim=1)
        width = int(lengths.max())
        ids, mask = input_ids[index, :width], attention_mask[index, :width]
        types = None if token_type_ids is None else token_type_ids[index, :width]
        # eval mode: no dropout, so a state is the same whenever it is computed
        modes = [m.training for m in self._frozen]
        for module in self._frozen:
            module.eval()
        try:
            hidden = self.transformer.embeddings(input_ids=ids, token_type_ids=types)
            hidden = self._run(self._frozen[1:], hidden, mask)
        finally:
            for module, mode in zip(self._frozen, modes):
                module.train(mode)
        return {row: hidden[j, : int(lengths[j])].clone() for j, row in enumerate(rows)}
