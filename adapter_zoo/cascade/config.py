"""Configuration of a Cascade Transformer ranker (exit layers, drop ratio, exit heads)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import CROSS_MAX_LENGTH
from stackexchange.errors import unknown_name
from stackexchange.numbers import MAX_LAYERS, MAX_TOKENS, MAX_WIDTH, check_number

# Exit layers used by the Cascade Transformer paper for 12-layer encoders; a 6-layer
# encoder (MiniLM) gets an exit every 2 layers.
DEFAULT_EXITS = {6: (2, 4, 6), 12: (4, 6, 8, 10, 12)}
EXIT_HEADS = (None, "cls", "pair_cosine")
# The name the cascade's one bottleneck adapter has in the encoder and in its saved folder.
ADAPTER_NAME = "cascade"


def default_exits(num_layers: int) -> tuple[int, ...]:
    """Exit layers (1-based) for an encoder with ``num_layers`` layers.

    Example:
        >>> default_exits(6), default_exits(12), default_exits(2)
        ((2, 4, 6), (4, 6, 8, 10, 12), (2,))
    """
    if num_layers in DEFAULT_EXITS:
        return DEFAULT_EXITS[num_layers]
    return tuple(range(2, num_layers + 1, 2)) or (num_layers,)


@dataclass(frozen=True)
class CascadeConfig:
    """How a cascade ranker is built and how it drops candidates.

    Attributes:
        exits: 1-based encoder layers with a classifier; ``None`` takes ``default_exits``.
        alpha: fraction of the remaining candidates of a query dropped at each exit
            (but the last); 0 keeps every candidate (the monolithic model).
        head_hidden: hidden size of each exit's feed-forward classifier.
        head_dropout: dropout inside the exit classifiers (training only).
        adapter: ``None`` for full fine-tuning, or an adapters-library config name
            (``"seq_bn"``) to train one bottleneck adapter with a frozen encoder.
        max_length: token limit of a (query, candidate) pair.
        head: the exits' kind: ``"cls"`` (a feed-forward classifier on CLS, the paper's) or
            ``"pair_cosine"`` (scaled cosine of the query's and the candidate's mean token
            states at that layer, see ``adapter_zoo.ranker.heads``); ``None`` picks
            ``pair_cosine`` for a mean-pooling sentence encoder such as MiniLM.

    Example:
        >>> CascadeConfig(exits=(1, 2), alpha=0.3).resolved(2).exits
        (1, 2)
    """

    exits: tuple[int, ...] | None = None
    alpha: float = 0.3
    head_hidden: int = 256
    head_dropout: float = 0.1
    adapter: str | None = None
    max_length: int = CROSS_MAX_LENGTH
    head: str | None = None

    def __post_init__(self):
        if self.head not in EXIT_HEADS:
            raise ZooError(f"cascade config: head must be one of {EXIT_HEADS}, got {self.head!r}")
        check_number(
            "cascade config: alpha", self.alpha, low=0, high=1, high_open=True, error=ZooError
        )
        if self.exits is not None:
            if not isinstance(self.exits, (list, tuple)):
                raise ZooError(
                    f"cascade config: exits must be a list of layer numbers, not {self.exits!r}"
                )
            for exit_ in self.exits:  # int() would cut 2.5 to 2 and end "x" in a traceback
                check_number(
                    "cascade config: exit layer", exit_, integer=True, low=1, high=MAX_LAYERS,
                    error=ZooError,
                )  # fmt: skip
            object.__setattr__(self, "exits", tuple(int(e) for e in self.exits))
            if not self.exits or list(self.exits) != sorted(set(self.exits)):
                raise ZooError(
                    f"cascade config: exits must be increasing layer numbers >= 1, got {self.exits}"
                )
        check_number(
            "cascade config: head_hidden", self.head_hidden, integer=True, low=1, high=MAX_WIDTH,
            error=ZooError,
        )  # fmt: skip
        check_number(
            "cascade config: max_length", self.max_length, integer=True, low=8, high=MAX_TOKENS,
            error=ZooError,
        )  # fmt: skip
        check_number(
            "cascade config: head_dropout", self.head_dropout, low=0, high=1, high_open=True,
            error=ZooError,
        )  # fmt: skip

    def resolved(self, num_layers: int) -> CascadeConfig:
        """This config with ``exits`` filled in and checked against the encoder depth."""
        exits = self.exits or default_exits(num_layers)
        if exits[-1] > num_layers:
            raise ZooError(
                f"cascade config: exit layer {exits[-1]} beyond the encoder's {num_layers} layers"
            )
        return dataclasses.replace(self, exits=exits)

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["exits"] = list(self.exits) if self.exits is not None else None
        return data

    @classmethod
    def from_dict(cls, data: dict) -> CascadeConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ZooError(f"cascade config: unknown fields {unknown}")
        data = dict(data)
        data.setdefault("head", "cls")  # entries saved before exit kinds existed had CLS exits
        if data.get("exits") is not None:
            data["exits"] = tuple(data["exits"])
        return cls(**data)


# Named presets, so recipes and the CLI can say ``--cascade adapter``.
CASCADE_CONFIGS: dict[str, CascadeConfig] = {
    "full": CascadeConfig(),
    "adapter": CascadeConfig(adapter="seq_bn"),
}


def get_config(name: str) -> CascadeConfig:
    """A registered cascade preset by name."""
    if name not in CASCADE_CONFIGS:
        raise unknown_name("cascade config", name, sorted(CASCADE_CONFIGS), ZooError)
    return CASCADE_CONFIGS[name]
