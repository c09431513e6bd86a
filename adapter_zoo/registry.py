"""The registry of model kinds: one registered class per kind of model the zoo opens.

In the manner of the adapters library's config map and MTEB's model metadata, each kind (a
cross-encoder or bi-encoder adapter, full model, fusion or multi-task adapter, a soup, a
composite, a cascade, a published MultiCQA file, ``bm25``/``tfidf``, ``sbert:``, ``base:``)
is one :class:`ModelKind` subclass, registered by name with :func:`register_kind`. A kind
says how its name or card is recognised, how it loads, how its card renders (the lines that
open it), its default ``max_length``, whether it exports and whether it is a baseline.
``load``, ``evaluate``, the sweep, the leaderboard, the recipes, ``export`` and the cards ask
this registry instead of comparing kind strings.

The built-in kinds live in the modules of :data:`BUILTIN_KIND_MODULES` (the package
:mod:`adapter_zoo.kinds`, near the top of ``adapter_zoo``), imported by name on the first
lookup: their loaders reach the whole package, while this registry sits near the bottom,
below the zoo, which asks it about every card. A new kind is one new module with a registered
class (and its test); a plug-in registers its own by importing :func:`register_kind`.

Example:
    >>> kind_for_name("sbert:minilm-l6").name, kind_for_name("bm25").baseline
    ('sbert', True)
    >>> kind_for_card({"mode": "multitask", "encoder": "bi"}).name
    'bi-multitask'
    >>> kind_for_card({"mode": "adapter"}).default_max_length
    300
    >>> card_max_length({"mode": "full", "layout": "full"})
    300
    >>> card_max_length({"mode": "adapter", "encoder": "bi", "max_length": 128})
    128
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, ClassVar

from adapter_zoo.errors import ZooError
from adapter_zoo.lengths import default_max_length
from adapter_zoo.names import ENTRY, ModelName, parse_model_name
from stackexchange.errors import unknown_name

BUILTIN_KIND_MODULES = (
    "adapter_zoo.kinds.cross",
    "adapter_zoo.kinds.bi",
    "adapter_zoo.kinds.composite",
    "adapter_zoo.kinds.cascade",
    "adapter_zoo.kinds.named",
)
_KINDS: dict[str, ModelKind] = {}
_builtins_loaded = False


class ModelKind:
    """One kind of model. Subclasses set the class attributes and override what differs.

    Attributes:
        name: the registry key (``cross-adapter``, ``bi-full``, ``bm25``...).
        encoder: ``cross`` (reads a pair), ``bi`` (embeds each text), None (scores through
            its members, or without a network).
        baseline: a scorer nothing was trained for (no adapter goes on it, nothing
            fine-tunes it, it reads no zoo entry).
        card_modes: the card ``mode`` values of its entries (training modes, ``cascade``,
            ``composite``); empty for kinds that are no zoo entry.
        role: on the leaderboard, ``ours`` (a zoo model), ``peer`` (an off-the-shelf
            model a user already has) or ``baseline`` (lexical scores, an untrained base).
        summary: what it is, in a few words (the cards, the docs).
        takes_base_model: a name of this kind is loaded onto the base ``load`` is given
            (a published adapter file names none); the others refuse ``base_model``.
        layout: how its entries store trained weights (``adapter``, ``full``, ``fusion``:
            :class:`adapter_zoo.kinds.entry.EntryKind`); None for kinds that store none.
    """

    name: ClassVar[str] = ""
    encoder: ClassVar[str | None] = None
    baseline: ClassVar[bool] = False
    role: ClassVar[str] = "ours"
    summary: ClassVar[str] = ""
    card_modes: ClassVar[tuple[str, ...]] = ()
    takes_base_model: ClassVar[bool] = False
    layout: ClassVar[str | None] = None

    @property
    def default_max_length(self) -> int:
        """The token limit of an entry of this kind whose card records none."""
        return default_max_length(self.encoder)

    def recognises_name(self, name: ModelName) -> bool:
        """Whether the name alone (nothing read) means this kind; entries say no here and
        are recognised by their card."""
        return False

    def recognises_card(self, card: dict) -> bool:
        """Whether the zoo entry of ``card`` is of this kind (by default: its ``mode``)."""
        return card.get("mode") in self.card_modes

    def check_card(self, card: dict, card_file: Path | str) -> None:
        """Refuse, in one line naming ``card_file`` and the field, a card whose fields this
        kind reads are wrong (the fields every card has are checked before)."""

    def load_name(
        self, name: ModelName, *, device: str | None = None, base_model: str | None = None
    ) -> Any:
        """The model a name of this kind means (kinds recognised by their name); ``base_model``
        only for kinds that take it."""
        raise ZooError(f"{name.text!r}: a {self.name} is opened from its entry folder")

    def load_entry(self, path: Path, card: dict, *, device: str | None = None) -> Any:
        """The model of the verified entry at ``path`` (kinds recognised by their card)."""
        raise ZooError(f"{path}: {self.name} models are not zoo entries")

    def max_length(self, card: dict) -> int:
        """The token limit the entry of ``card`` was trained and selected at."""
        return int(card.get("max_length", self.default_max_length))

    def set_max_length(self, model: Any, max_length: int, name: str) -> None:
        """Make ``model`` (of this kind) score at ``max_length`` tokens instead of its own.

        Raises:
            ZooError: the kind has no token limit (lexical scores, compositions).
        """
        if self.encoder is None:
            raise ZooError(
                f"{name}: a {self.name} model has no token limit of its own; max_length is "
                "for encoders (its members keep theirs)"
            )
        model.max_length = max_length

    def export_refusal(self, card: dict, path: Path | None = None) -> str | None:
        """Why the entry cannot be exported as a plain sentence-transformers folder
        (``adapter-zoo export``); None when it can."""
        return f"it is a {self.name} entry, which no plain sentence-transformers folder holds"

    def python_lines(self, card: dict, source: str) -> list[str]:
        """The lines that open the entry with adapter-zoo; ``source`` is the Python
        expression of its name (a zoo name, or ``pull(repo)`` for a Hub card)."""
        return ["import adapter_zoo", "", f"ranker = adapter_zoo.load({source})"]

    def library_lines(
        self, card: dict, folder: tuple[str, list[str]], head_type: str | None
    ) -> list[str]:
        """Markdown lines that open the entry without adapter-zoo (none by default)."""
        return []

    def describe(self, card: dict) -> str:
        """One sentence for the entry's cards."""
        return f"A `{card.get('mode')}` {self.summary} from the adapter zoo"

    def __repr__(self) -> str:
        return f"<model kind {self.name}>"


def register_kind(cls: type[ModelKind]) -> type[ModelKind]:
    """Register a :class:`ModelKind` subclass under its ``name`` (a class decorator).

    Raises:
        ZooError: a kind of that name is registered already.
    """
    if not cls.name:
        raise ZooError(f"{cls.__name__}: a model kind needs a name")
    if cls.name in _KINDS and type(_KINDS[cls.name]) is not cls:
        raise ZooError(f"model kind {cls.name!r} is registered already ({_KINDS[cls.name]!r})")
    _KINDS[cls.name] = cls()
    return cls


def registered_kinds() -> dict[str, ModelKind]:
    """Every registered kind by name, the built-in ones included."""
    global _builtins_loaded
    if not _builtins_loaded:
        # Up the package, by name, on purpose (CONTRIBUTING, "Inside adapter_zoo"): the
        # built-in kinds' loaders reach the whole package, this registry sits below the zoo.
        for module in BUILTIN_KIND_MODULES:
            importlib.import_module(module)
        _builtins_loaded = True
    return dict(_KINDS)


def get_kind(name: str) -> ModelKind:
    """The kind registered as ``name``."""
    kinds = registered_kinds()
    if name not in kinds:
        raise unknown_name("model kind", name, sorted(kinds), ZooError)
    return kinds[name]


def kind_for_name(name: str | os.PathLike | ModelName) -> ModelKind | None:
    """The kind a model name means by its spelling (``sbert:...``, ``bm25``, a spec, a
    MultiCQA weights file...); None for a name that is resolved to a zoo entry."""
    parsed = name if isinstance(name, ModelName) else parse_model_name(name)
    for kind in registered_kinds().values():
        if kind.recognises_name(parsed):
            return kind
    if parsed.category != ENTRY:
        raise ZooError(f"no model kind recognises {parsed.text!r} ({parsed.category})")
    return None


def kind_for_card(card: dict, card_file: Path | str | None = None) -> ModelKind:
    """The kind of the zoo entry whose card is ``card``.

    Raises:
        ZooError: no registered kind recognises the card (naming ``card_file`` when given).
    """
    kinds = registered_kinds()
    for kind in kinds.values():
        if kind.recognises_card(card):
            return kind
    where = f"{card_file}: " if card_file is not None else ""
    setting = ", ".join(f"{k} {card[k]!r}" for k in ("encoder", "layout") if k in card)
    known = ", ".join(sorted({value for k in kinds.values() for value in k.card_modes}))
    raise ZooError(
        f"{where}field 'mode' names no registered model kind ({card.get('mode')!r}"
        + (f" with {setting}" if setting else "")
        + f"; entry cards say one of {known})"
    )


def is_baseline(name: object) -> bool:
    """Whether ``name`` (a model name; anything else is a model object) is a baseline: a
    scorer nothing was trained for (``bm25``, ``tfidf``, ``sbert:``): no adapter goes on it,
    nothing fine-tunes it, it reads no zoo entry. Its kind says (the one place the baselines
    are listed).

    Example:
        >>> is_baseline("bm25"), is_baseline("sbert:minilm-l6"), is_baseline("beer")
        (True, True, False)
    """
    if not isinstance(name, str):
        return False
    kind = kind_for_name(parse_model_name(name))
    return kind is not None and kind.baseline


def card_max_length(card: dict) -> int:
    """The token limit of an entry: what it was trained with, and what every scorer of it
    uses (``load``, the sweep, the recommender's probe, the card's code snippets); a card
    without ``max_length`` has its kind's default (its encoder's,
    :func:`adapter_zoo.lengths.default_max_length`).

    Example:
        >>> card_max_length({"mode": "adapter", "encoder": "bi"})
        256
    """
    return kind_for_card(card).max_length(card)
