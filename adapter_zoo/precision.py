"""The one precision decision: which dtype a model's weights are in when it scores.

``resolve_precision("auto" | "fp32" | "bf16", device)`` gives a torch dtype. ``auto`` (the
default of ``adapter_zoo.load`` and of the commands that score) is bfloat16 on a CUDA device
whose compute capability supports bf16 (``torch.cuda.is_bf16_supported``) and float32 on
every CPU, because bf16 was measured outside the ±0.003 MAP that ``auto`` allows itself on
the CPU it was meant for (``benchmarks/speed/precision.py``, all-MiniLM-L6-v2):

- An Intel Xeon with AMX-BF16 (a lent GPU machine's host): bf16 scoring ran 1.60x fp32's
  pairs/s on 2 cores and 1.55x on 16, while beer's LAS-style test set lost 0.011 MAP, as
  two of its 59 lists had near-tied candidates change places (WikiQA: -0.0002).
- An AMD EPYC with AVX512-BF16 and no AMX (the 2-core machines here): 0.88x on WikiQA's
  short texts and 1.46x on beer's long ones (per-layer casts and small matmuls dominate).
- An H100 (``--device cuda``): 0.92x at 64 pairs a batch and 1.10x at 256, with the same
  MAP to within 0.003 on both sets: MiniLM is too small to keep a GPU busy. ``auto`` is
  bf16 there, where quality held, for the larger bases that fill a GPU's bf16 tensor
  cores (not measured here) and for half the memory.

``int8`` (scoring only) runs the model's ONNX export, quantized to int8, in ONNX Runtime on
the CPU (:mod:`adapter_zoo.onnx`): bi-encoder and cross-encoder entries (adapter, LoRA, full)
and ``sbert:`` bases, and a composition's members; BM25 alone and cascades are refused in one line.
``resolve_precision`` gives float32 for it, the dtype of the PyTorch model the export is
made from, and training asked for int8 (``adapt`` passes its precision on) trains in fp32.
``auto`` does not pick int8: on the measured sets (``benchmarks/speed/int8.py``,
``benchmarks/results/int8.json``, an AVX512-VNNI Xeon) int8 kept MAP within the ±0.003
that ``auto`` allows itself on WikiQA and SemEval 2016 but lost 0.033 on beer's long texts,
so int8 is the user's to ask for, a speed-for-exactness trade like bf16.

On those CPUs ``bf16`` is the user's to ask for, a speed-for-exactness trade. Without either
flag oneDNN emulates bf16 with fp32 arithmetic plus conversions, slower than fp32 and less
exact: an explicit ``bf16`` there is refused in one line (``PrecisionError``), as an
explicit request that silently ran slower or in another precision would mislead a timing or
a quality comparison.

Scoring in bf16 casts the weights of the model's linear layers (the base's and its adapters':
inference only) once, at load (:func:`cast_for_inference`); they multiply in bf16 and hand
float32 on, so the residual stream, LayerNorms, softmax, pooling, heads and cosines run in
float32 and scores are float32 numpy arrays as before.

Training decides once too (:func:`training_precision`, recorded in the run's log and the
card's ``training.precision``): in bf16 the frozen base's linear layers are cast the same
way (:func:`cast_frozen_for_training`), while every trainable weight (adapters, LoRA, fusion,
the head) and the optimizer's state stay float32. Full fine-tuning trains every weight, so
it runs in float32. ``auto`` trains as it scores, fp32 on every CPU: on the AVX512-BF16 CPU
bf16 training ran 1.76x fp32's speed but moved dev selection's step on small forums, and test
MAP with it by up to 0.034 (``benchmarks/speed/precision_training.py``); on the AMX-BF16 CPU
(16 cores) it ran 1.20x (``benchmarks/speed/training_peak.py``). On the H100 two bi-encoder
adapters trained in bf16 kept their selected step and their MAP (within 0.0001 on three sets).

Example:
    >>> resolve_precision("fp32", "cpu")
    torch.float32
    >>> precision_name(resolve_precision("fp32", "cpu"))
    'fp32'
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
from pathlib import Path

from adapter_zoo.devices import pick_device
from adapter_zoo.errors import ZooError
from stackexchange.errors import unknown_name

logger = logging.getLogger(__name__)

AUTO, FP32, BF16, INT8 = "auto", "fp32", "bf16", "int8"
PRECISIONS = (AUTO, FP32, BF16, INT8)
# what training and building take (int8 is a scoring precision: ONNX Runtime, no gradients)
TRAINING_PRECISIONS = (AUTO, FP32, BF16)
# the CPU flags (Linux /proc/cpuinfo spelling) of native bf16 matrix multiplication: an
# explicit bf16 runs with either; auto never picks it on a CPU (see the module docstring)
CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")


# the precision a long run (``adapt``) scores its candidates in, for code it calls
_SCORING = contextvars.ContextVar("adapter_zoo_scoring_precision", default=AUTO)


class PrecisionError(ZooError):
    """A precision that is not one of :data:`PRECISIONS`, or bf16 asked for on hardware
    without it."""


@functools.cache
def cpuinfo_flags() -> frozenset[str] | None:
    """The CPU's flags as ``/proc/cpuinfo`` spells them (Linux: what the kernel enabled);
    None where there is no ``/proc/cpuinfo``."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        return None
    flags: set[str] = set()
    for line in cpuinfo.read_text(errors="replace").splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
    return frozenset(flags)


@functools.cache
def cpu_bf16_flags() -> tuple[str, ...]:
    """Which of :data:`CPU_BF16_FLAGS` this CPU has.

    Read from ``/proc/cpuinfo``'s ``flags`` (Linux: what the kernel enabled, so also right
    in a VM that hides AMX). Elsewhere torch's own CPUID probes (``torch._C._cpu``, private
    but present since torch 2.1) answer; ``torch.backends.cpu.get_cpu_capability()`` is not
    used: it says AVX512 for Skylake-X too, which has no bf16.
    """
    flags = cpuinfo_flags()
    if flags is not None:
        return tuple(flag for flag in CPU_BF16_FLAGS if flag in flags)
    try:
        # torch on first use: the CLI starts without it
        import torch

        probes = {"amx_bf16": torch._C._cpu._is_amx_tile_supported,
                  "avx512_bf16": torch._C._cpu._is_avx512_bf16_supported}  # fmt: skip
        return tuple(flag for flag, probe in probes.items() if probe())
    except (AttributeError, RuntimeError):
        return ()


def device_has_bf16(device) -> bool:
    """Whether ``device`` (a torch.device or its name) multiplies bf16 natively."""
    # torch on first use: the CLI starts without it
    import torch

    device = torch.device(device)
    if device.type == "cpu":
        return bool(cpu_bf16_flags())
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return False


def check_precision(precision: str) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else a one-line PrecisionError."""
    if precision not in PRECISIONS:
        raise unknown_name("precision", precision, PRECISIONS, PrecisionError)
    return precision


def resolve_precision(precision: str, device=None):
    """The torch dtype a model scores in on ``device`` (None: CUDA when available, else CPU).

    ``auto``: bfloat16 on a CUDA device with bf16, else float32 (every CPU);
    ``fp32`` and ``int8`` (scored by :mod:`adapter_zoo.onnx` from the fp32 model): float32;
    ``bf16``: bfloat16, refused (PrecisionError) where the device lacks
    it (:func:`device_has_bf16`).
    """
    # torch on first use: the CLI starts without it
    import torch

    check_precision(precision)
    if precision in (FP32, INT8):  # int8: the fp32 model its ONNX export is made from
        return torch.float32
    device = pick_device(device)
    if precision == AUTO:
        on_gpu = device.type == "cuda" and device_has_bf16(device)
        return torch.bfloat16 if on_gpu else torch.float32
    if device_has_bf16(device):
        return torch.bfloat16
    if precision == BF16:
        what = "CPU has neither AMX-BF16 nor AVX512-BF16" if device.type == "cpu" else (
            f"device {device} has no native bf16"
        )  # fmt: skip
        raise PrecisionError(f"precision bf16: this {what}; use --precision auto or fp32")
    return torch.float32


def precision_name(dtype) -> str:
    """``"bf16"`` or ``"fp32"`` for a torch dtype."""
    # torch on first use: the CLI starts without it
    import torch

    return BF16 if dtype == torch.bfloat16 else FP32


def _to_dtype_input(module, inputs):
    dtype = module.weight.dtype
    return tuple(
        x.to(dtype) if getattr(x, "is_floating_point", lambda: False)() else x for x in inputs
    )


def _float_output(module, inputs, output):
    return output.float()


def _cast_linears(linears, dtype) -> None:
    """Each of ``linears`` (``torch.nn.Linear``) in ``dtype``: weights cast once, in place;
    each call casts its input to ``dtype`` and its output back to float32."""
    # torch on first use: the CLI starts without it
    import torch

    for sub in linears:
        if sub.weight.dtype == torch.float32 and dtype != torch.float32:
            sub.to(dtype)
            if not getattr(sub, "_adapter_zoo_cast", False):
                sub.register_forward_pre_hook(_to_dtype_input)
                sub.register_forward_hook(_float_output)
                sub._adapter_zoo_cast = True


def cast_for_inference(module, dtype, *, keep_float=()):
    """``module``'s linear layers (``torch.nn.Linear``: the attention projections, the
    feed-forward, the adapters' bottlenecks; all but a few percent of an encoder's FLOPs) in
    ``dtype`` for inference: weights cast once, in place; each call casts its input to
    ``dtype`` and its output back to float32. Embeddings, LayerNorms, the residual stream,
    attention softmax, pooling and the modules in ``keep_float`` (prediction heads) stay
    float32.

    Casting the whole model instead (every activation in bf16) was 2.0x fp32's speed on the
    beer forum's LAS set but lost 0.011 MAP (near-tied candidates swapped by the bf16
    residual stream); linear layers alone lose 0.003 at 1.5x (``benchmarks/speed/precision.py``).
    Returns ``module``.
    """
    # torch on first use: the CLI starts without it
    import torch

    kept = {id(sub) for part in keep_float for sub in part.modules()}
    _cast_linears(
        [
            sub
            for sub in module.modules()
            if isinstance(sub, torch.nn.Linear) and id(sub) not in kept
        ],
        dtype,
    )
    return module


# Module-dict names under which the adapters library keeps what it adds to a base model.
# Frozen modules in them (the members of a fusion, a continued entry's adapter) stay float32:
# a fusion entry writes its members back from the model, and they must stay bit-identical.
ADAPTER_MODULE_KEYS = frozenset(
    {"adapters", "adapter_fusion_layer", "loras", "prefix_tunings", "refts", "heads"}
)


def frozen_base_linears(module) -> list:
    """The linear layers of ``module``'s base model that training leaves as they are: no
    trainable parameter in them, and not inside a module the adapters library added."""
    # torch on first use: the CLI starts without it
    import torch

    return [
        sub
        for name, sub in module.named_modules()
        if isinstance(sub, torch.nn.Linear)
        and not ADAPTER_MODULE_KEYS.intersection(name.split("."))
        and not any(p.requires_grad for p in sub.parameters())
    ]


def cast_frozen_for_training(module, precision: str):
    """``module`` set to train in ``precision`` (``fp32`` or ``bf16``, as
    :func:`training_precision` resolved it): in bf16 the frozen base's linear layers
    (:func:`frozen_base_linears`) multiply in bf16 and hand float32 on, as at inference;
    gradients flow through them to the float32 trainable weights below. Returns ``module``.

    Example:
        >>> cast_frozen_for_training(model, "bf16")  # doctest: +SKIP
    """
    # torch on first use: the CLI starts without it
    import torch

    if precision == BF16:
        _cast_linears(frozen_base_linears(module), torch.bfloat16)
    return module


def training_precision(precision: str, *, trains_base: bool, device=None) -> str:
    """The precision a training run trains in, ``fp32`` or ``bf16``, decided once.

    ``auto`` is :func:`resolve_precision`'s choice for ``device`` (bf16 on CUDA GPUs with
    bf16, fp32 on every CPU). Full fine-tuning (``trains_base``) trains the base's own weights,
    which stay float32, so ``auto`` is fp32 there and an explicit ``bf16`` is refused.

    Example:
        >>> training_precision("auto", trains_base=True)
        'fp32'

    Raises:
        PrecisionError: an unknown precision; bf16 where the hardware lacks it or for full
            fine-tuning.
    """
    if trains_base:
        if check_precision(precision) == BF16:
            raise PrecisionError(
                "precision bf16: full fine-tuning trains the base's own weights, which stay "
                "float32 (bf16 casts only a frozen base); use --precision auto or fp32"
            )
        return FP32
    return precision_name(resolve_precision(precision, device))


def apply_precision(scorer, dtype) -> str:
    """``scorer`` set to score in ``dtype`` (its ``set_precision``, which compositions pass
    on to their members); a scorer without one (BM25, TF-IDF, a cascade, a plug-in kind)
    stays as it is. Returns the precision name the scorer now runs at (``fp32`` for those)."""
    setter = getattr(scorer, "set_precision", None)
    if setter is None:
        return FP32
    setter(dtype)
    return getattr(scorer, "precision", precision_name(dtype))


def add_precision_option(parser, *, scoring: bool = False) -> None:
    """``--precision {auto,fp32,bf16}`` (default auto), for the commands that run a model;
    ``scoring`` (commands that only score, or score what they train on: evaluate, adapt)
    adds ``int8``."""
    int8 = (
        "; int8 scores through the model's ONNX export quantized to int8 on the CPU (ONNX "
        "Runtime; bi- and cross-encoder entries; faster, not bit-faithful)" if scoring else ""
    )  # fmt: skip
    parser.add_argument(
        "--precision", choices=PRECISIONS if scoring else TRAINING_PRECISIONS, default=AUTO,
        help="the dtype the model's frozen weights run in: auto (default) is bf16 on a CUDA "
        "GPU with bf16, else fp32; bf16 also runs on a CPU with AMX-BF16 or AVX512-BF16 "
        "(faster, not bit-faithful) and is refused where the hardware has neither" + int8 +
        ". Scores, trained weights and the optimizer's state are float32 either way",
    )  # fmt: skip


@contextlib.contextmanager
def scoring_precision(precision: str):
    """Within the block, :func:`current_precision` is ``precision`` (for code a run calls
    that loads its own scorers, as ``adapt``'s decision lists do)."""
    token = _SCORING.set(check_precision(precision))
    try:
        yield
    finally:
        _SCORING.reset(token)


def current_precision() -> str:
    """The precision :func:`scoring_precision` set (``auto`` outside one)."""
    return _SCORING.get()
