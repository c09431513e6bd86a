"""int8 files of an exported graph: ONNX Runtime's dynamic quantization, kept to quality.

The quantizer is ``onnxruntime.quantization.quantize_dynamic`` called directly: the
sentence-transformers route (``export_dynamic_quantized_onnx_model`` through optimum's
``AutoQuantizationConfig``) quantizes every MatMul, Gather and Attention with per-tensor
activations and no way to leave single layers in fp32, which is what costs quality
(docs/guides/onnx.md; ``benchmarks/speed/int8.py`` runs that route as the peer). Here:

- weights int8 per output channel (``per_channel``), activations uint8 per tensor, computed
  at run time (dynamic: no calibration set);
- ``reduce_range`` (7-bit weights) only where the CPU lacks VNNI (``avx2``, ``avx512``): there
  the u8*s8 kernels add pairs of products in 16 bits, which 8-bit weights can saturate; on
  VNNI and ARM it only costs precision;
- only ``MatMul`` nodes with a weight (the encoder's linear layers and adapters), never the
  embeddings' ``Gather`` nor attention's products of two activations;
- the feed-forward's down-projections (``ffn_output_fp32``: their input is the GELU's output,
  whose long tail one uint8 scale per tensor cannot hold), the last ``keep_last_fp32``
  transformer layers, the pooler and the heads stay fp32.

Measured on WikiQA candidates, all-MiniLM-L6-v2, cosine of each text's int8 embedding to its
fp32 one (``benchmarks/speed/int8.py``'s ``int8_settings``): every MatMul per tensor 0.963
mean / 0.919 worst; per channel 0.994 / 0.988; with the down-projections and the last
layer in fp32 0.997 / 0.993 (the default, at about 0.9x the speed of quantizing them).

The file is named as sentence-transformers names its own: ``onnx/model_qint8_<arch>.onnx``,
``arch`` one of :data:`ARCHS` (this CPU's by default, :func:`cpu_arch`).

Example:
    >>> quantize_graph("onnx/model.onnx", "onnx/model_qint8_avx2.onnx")  # doctest: +SKIP
"""

from __future__ import annotations

import platform
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from adapter_zoo.errors import ZooError
from adapter_zoo.precision import cpuinfo_flags
from stackexchange.errors import unknown_name

ARCHS = ("arm64", "avx2", "avx512", "avx512_vnni")


@dataclass(frozen=True)
class Int8Config:
    """How a graph is quantized (see the module docstring)."""

    per_channel: bool = True
    reduce_range: bool = False
    keep_last_fp32: int = 1
    ffn_output_fp32: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULT = Int8Config()


def config_for(arch: str | None = None) -> Int8Config:
    """The default settings for ``arch`` (this CPU's by default): ``reduce_range`` where
    the CPU has no VNNI.

    Example:
        >>> config_for("avx2").reduce_range, config_for("avx512_vnni").reduce_range
        (True, False)
    """
    return Int8Config(reduce_range=(arch or cpu_arch()) in ("avx2", "avx512"))


def cpu_arch() -> str:
    """sentence-transformers' quantization name for this CPU: ``arm64`` on ARM, else
    ``avx512_vnni``, ``avx512`` or ``avx2`` by ``/proc/cpuinfo``'s flags.

    Example:
        >>> cpu_arch() in ARCHS
        True
    """
    if platform.machine().lower() in ("arm64", "aarch64"):
        return "arm64"
    flags = cpuinfo_flags() or frozenset()
    if "avx512_vnni" in flags:
        return "avx512_vnni"
    return "avx512" if "avx512f" in flags else "avx2"


def int8_file(arch: str | None = None) -> str:
    """The folder-relative name of the int8 graph for ``arch`` (default: this CPU's)."""
    arch = arch or cpu_arch()
    if arch not in ARCHS:
        raise unknown_name("arch", arch, ARCHS, ZooError)
    return f"onnx/model_qint8_{arch}.onnx"


_LAYER = re.compile(r"layers?\.(\d+)/")


def fp32_nodes(model, keep_last: int, ffn_output: bool = False) -> list[str]:
    """Names of ``model``'s MatMul nodes to keep in fp32: those of the last ``keep_last``
    transformer layers (with ``ffn_output`` every layer's feed-forward down-projection), every
    one outside the layers (pooler, heads) and attention's
    products of two activations (query x key, weights x value), which have no weight to
    quantize ahead and lose most as 8-bit."""
    weights = {init.name for init in model.graph.initializer}
    nodes = [n for n in model.graph.node if n.op_type == "MatMul"]
    keep = {n.name for n in nodes if not any(i in weights for i in n.input)}
    matmuls = [n.name for n in nodes if n.name not in keep]
    layers = {n: int(m.group(1)) for n in matmuls if (m := _LAYER.search(n))}
    last = max(layers.values(), default=-1)
    keep.update(n for n, i in layers.items() if i > last - keep_last)
    if ffn_output:  # BERT's down-projection: <layer>/output/dense (not attention/output/dense)
        keep.update(n for n in layers if n.endswith("/output/dense/MatMul")
                    and "/attention/" not in n)  # fmt: skip
    keep.update(n for n in matmuls if n not in layers)
    return sorted(keep)


def quantize_graph(
    source: str | Path, target: str | Path, config: Int8Config | None = None
) -> Path:
    """Write ``source``'s int8 version to ``target`` as ``config`` says.

    Args:
        source: an fp32 ONNX file (:func:`adapter_zoo.onnx.graph.export_graph`).
        target: the int8 file to write.
        config: the quantization settings (default: :func:`config_for` this CPU).

    Returns:
        ``target``.

    Example:
        >>> quantize_graph("model.onnx", "model_qint8_avx2.onnx", Int8Config(keep_last_fp32=0))
        ... # doctest: +SKIP
    """
    # onnx, onnxruntime on first use: the CLI starts without them
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    config = config or config_for()
    model = onnx.load(str(source))
    quantize_dynamic(
        str(source), str(target), per_channel=config.per_channel,
        reduce_range=config.reduce_range, weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul"],
        nodes_to_exclude=fp32_nodes(model, config.keep_last_fp32, config.ffn_output_fp32),
    )  # fmt: skip
    return Path(target)


__all__ = [
    "ARCHS",
    "DEFAULT",
    "Int8Config",
    "cpu_arch",
    "fp32_nodes",
    "int8_file",
    "quantize_graph",
]
