"""A SentenceTransformer that refuses to save what a sentence-transformers folder cannot hold.

``SentenceTransformer.save`` of a model with bottleneck adapters writes the adapter tensors
into ``model.safetensors``, and ``SentenceTransformer(folder)`` then drops them ("weights not
used") and silently opens the bare base (an entry reopened that way scores as the base, not as
itself). Bottleneck adapters (a ReLU between two projections) cannot be
merged into the base's weights (the adapters library's ``merge_adapter`` merges LoRA only),
so no plain folder reproduces the model: saving one is refused, with the way that works.
"""

from __future__ import annotations

from sentence_transformers import SentenceTransformer

from adapter_zoo.errors import ZooError


class AdapterSentenceTransformer(SentenceTransformer):
    """``SentenceTransformer`` whose transformer may hold adapters (``adapters.init``).

    Saving works as usual while no adapter is added; with adapters it raises
    :class:`~adapter_zoo.ZooError` saying how to keep or open the model instead.

    Example:
        >>> adapter_zoo.load("beer-bi").model.save("out")  # doctest: +SKIP
        Traceback (most recent call last):
        adapter_zoo.errors.ZooError: cannot save ... as a sentence-transformers folder: ...
    """

    def save(self, path, *args, **kwargs):
        names = list(self[0].auto_model.adapters_config.adapters)
        if names:
            raise ZooError(
                f"cannot save this model to {str(path)!r} as a sentence-transformers folder: "
                f"it holds bottleneck adapters ({', '.join(names)}), which "
                "SentenceTransformer(folder) would drop, silently reopening the bare base (they "
                "do not merge into the weights). Keep the zoo entry itself (its README.md shows "
                "the lines that open it with sentence-transformers and adapters), or save the "
                "adapter with model[0].auto_model.save_adapter(folder, name, "
                "use_safetensors=True)"
            )
        return super().save(path, *args, **kwargs)


__all__ = ["AdapterSentenceTransformer"]
