"""The kinds a name means by its spelling: baselines, the untrained base, composition
specs, and the published MultiCQA weight files (a path, recognised by the file it names)."""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.biencoder import BiEncoder
from adapter_zoo.compose.bm25 import BM25Scorer
from adapter_zoo.compose.spec import load_spec
from adapter_zoo.compose.tfidf import TfidfScorer
from adapter_zoo.errors import ZooError
from adapter_zoo.names import BASE, BM25, COMPOSITION, ENTRY, TFIDF, ZERO_SHOT, ModelName
from adapter_zoo.ranker import Ranker
from adapter_zoo.registry import ModelKind, register_kind
from adapter_zoo.zoo import multicqa
from adapter_zoo.zoo.store import CARD_FILE, is_entry_name, shipped_home, zoo_home


@register_kind
class ZeroShotBiEncoder(ModelKind):
    """``sbert:<base>``: the base as a zero-shot bi-encoder (cosine of its embeddings)."""

    name = "sbert"
    summary = "zero-shot bi-encoder"
    encoder = "bi"
    baseline = True
    role = "peer"

    def export_refusal(self, card, path=None):
        return "it is a bi-encoder (the base used zero-shot), a sentence-transformers model"

    def recognises_name(self, name: ModelName) -> bool:
        return name.category == ZERO_SHOT

    def load_name(self, name: ModelName, *, device=None, base_model=None):
        return BiEncoder.from_base(name.base, device=device)


@register_kind
class UntrainedBase(ModelKind):
    """``base:<base>``: the base with a fresh cross-encoder head seeded with 0 (what
    fine-tuning starts from; its scores are a floor, not a ranker)."""

    name = "base"
    summary = "untrained base"
    encoder = "cross"
    role = "baseline"

    def recognises_name(self, name: ModelName) -> bool:
        return name.category == BASE

    def load_name(self, name: ModelName, *, device=None, base_model=None):
        return Ranker.from_base(name.base, device=device)


@register_kind
class CompositionSpec(ModelKind):
    """``fusion:A+B*0.2`` and ``rerank:A>B@K``: a composition of members named inline."""

    name = "spec"
    summary = "composition"

    def export_refusal(self, card, path=None):
        return "it is a composition; export its members instead"

    def recognises_name(self, name: ModelName) -> bool:
        return name.category == COMPOSITION

    def load_name(self, name: ModelName, *, device=None, base_model=None):
        return load_spec(name.text, device=device)


@register_kind
class BM25Baseline(ModelKind):
    """``bm25``: BM25 over each query's own candidates (bm25s, Lucene variant)."""

    name = BM25
    summary = "lexical baseline"
    baseline = True
    role = "baseline"

    def export_refusal(self, card, path=None):
        return "it is a composition member without weights (BM25)"

    def recognises_name(self, name: ModelName) -> bool:
        return name.category != ENTRY and name.text == BM25

    def load_name(self, name: ModelName, *, device=None, base_model=None):
        return BM25Scorer()


@register_kind
class TfidfBaseline(ModelKind):
    """``tfidf``: cosine of TF-IDF vectors fitted on each query's own candidates."""

    name = TFIDF
    summary = "lexical baseline"
    baseline = True
    role = "baseline"

    def recognises_name(self, name: ModelName) -> bool:
        return name.category != ENTRY and name.text == TFIDF

    def load_name(self, name: ModelName, *, device=None, base_model=None):
        return TfidfScorer()


@register_kind
class MultiCQAFile(ModelKind):
    """A published MultiCQA adapter (``pytorch_adapter.bin`` or its folder): pickled
    weights of the early adapter-transformers, read ``weights_only`` and renamed."""

    name = "multicqa"
    summary = "published MultiCQA adapter"
    encoder = "cross"
    takes_base_model = True  # its file names no base: bert-base unless told

    def recognises_name(self, name: ModelName) -> bool:
        if name.category != ENTRY:
            return False
        local = Path(name.text).expanduser()
        zoos = (zoo_home(), shipped_home())
        if is_entry_name(name.text) and any((home / name.text).is_dir() for home in zoos):
            return False  # a zoo name, even if a folder of that name is here
        try:
            return not (local / CARD_FILE).exists() and bool(multicqa.find_legacy_weights(local))
        except (OSError, ValueError):  # a name no file can have (too long, a NUL byte)
            return False

    def load_name(self, name: ModelName, *, device=None, base_model=None):
        base = base_model or multicqa.LEGACY_BASE
        return multicqa.load_legacy(Path(name.text).expanduser(), base_model=base, device=device)

    def load_entry(self, path, card, *, device=None):
        raise ZooError(f"{path}: a MultiCQA file is no zoo entry; import it with import_legacy")
