"""The machine facts every script of ``benchmarks/speed``, ``benchmarks/studies`` and
``benchmarks/reliability`` saves beside its numbers: a time means little without its chip."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path

from adapter_zoo.precision import cpuinfo_flags

# The instruction sets that decide CPU speed here (int8 and bf16 kernels).
CPU_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8", "amx_bf16", "avx512_bf16")


def cpu_flags() -> list[str]:
    """Which of :data:`CPU_FLAGS` this CPU has (``/proc/cpuinfo``)."""
    have = cpuinfo_flags() or frozenset()
    return [flag for flag in CPU_FLAGS if flag in have]


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else ``platform.processor()``."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text(errors="replace").splitlines() if cpuinfo.is_file() else []
    for line in lines:
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return platform.processor()


def gpu_name(device) -> str | None:
    """The name of the CUDA GPU ``device`` is (a torch.device or its name); None for a CPU."""
    import torch  # torch on first use: a script's --help starts without it

    device = str(device)
    return torch.cuda.get_device_name(device) if device.startswith("cuda") else None


def machine_info() -> dict:
    """The chip and its flags, CPU count, torch threads and version, Python, CUDA, and when
    it ran."""
    import torch

    return {
        "cpu": cpu_name(),
        "cpu_flags": cpu_flags(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cuda": torch.cuda.is_available(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
