"""Zoo models as ONNX graphs: sentence-transformers' ONNX layout, int8, a cache per weights.

- :mod:`adapter_zoo.onnx.graph`: a BiEncoder (base with its bottleneck adapter active, or a
  plain base) or a Ranker (base, adapter, head) traced to ``onnx/model.onnx``.
- :mod:`adapter_zoo.onnx.quantize`: the int8 files (``onnx/model_qint8_<arch>.onnx``) and
  their agreement with fp32.
- :mod:`adapter_zoo.onnx.layout`: the folder plain sentence-transformers opens with
  ``backend="onnx"``.
- :mod:`adapter_zoo.onnx.cache`: exports kept per model, keyed by its weights' hash.
- :mod:`adapter_zoo.onnx.scorer`: a BiEncoder or Ranker scoring through ONNX Runtime
  (``precision="int8"``).
"""

from __future__ import annotations
