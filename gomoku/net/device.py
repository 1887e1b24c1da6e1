"""Where Paddle runs: the CPU or the GPU, in which precision, and a report of what this Paddle build sees."""

from __future__ import annotations

import functools

from gomoku.net.backend import paddle
from gomoku.net.flags import DEVICES, PRECISIONS
from gomoku.util import paddle_gpu_hint

# CPU flags (Linux /proc/cpuinfo) of native bfloat16 arithmetic: AVX-512 BF16 (Cooper Lake, Zen 4
# and later) or AMX (Sapphire Rapids and later). Without them oneDNN emulates bf16, slower than fp32.
BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def visible_gpus() -> list[str]:
    """The names of the GPUs this Paddle build can use (none for a CPU build)."""
    if not paddle.device.is_compiled_with_cuda():
        return []
    return [paddle.device.cuda.get_device_name(i) for i in range(paddle.device.cuda.device_count())]


def resolve_device(device: str) -> str:
    """'cpu', 'gpu' or 'auto' (the GPU when this Paddle build has one) -> 'cpu' or 'gpu'.

    Raises:
        ValueError: an unknown device, or 'gpu' where Paddle sees none.
    """
    if device not in DEVICES:
        raise ValueError(f"device must be cpu, gpu or auto, got {device!r}")
    has_gpu = paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
    if device == "gpu" and not has_gpu:
        raise ValueError("--device gpu was asked for, but this Paddle build sees no GPU "
                         f"({describe_build()})")
    return "gpu" if device == "gpu" or (device == "auto" and has_gpu) else "cpu"


def describe_build() -> str:
    """What Paddle was built for: ``CPU build`` or ``CUDA 12.6 build``, with its version."""
    if not paddle.device.is_compiled_with_cuda():
        return f"Paddle {paddle.__version__}, a CPU build (for a GPU: {paddle_gpu_hint()})"
    cuda = paddle.version.cuda() if hasattr(paddle.version, "cuda") else "?"
    return f"Paddle {paddle.__version__}, a CUDA {cuda} build"


def device_report(requested: str) -> str:
    """One line for the start of a run: the build, the GPUs it sees, and why ``requested`` chose
    the device it did."""
    gpus = visible_gpus()
    chosen = resolve_device(requested)
    seen = f"{len(gpus)} GPU(s): {', '.join(gpus)}" if gpus else "no GPU"
    if requested == "auto":
        why = "auto chose the GPU" if chosen == "gpu" else "auto chose the CPU because Paddle sees no GPU"
    else:
        why = f"--device {requested} asked for it"
    return f"device {chosen}: {describe_build()}; {seen}; {why}"


@functools.lru_cache(maxsize=None)
def cpu_flags() -> frozenset:
    """The CPU's feature flags as Linux reports them (empty where /proc/cpuinfo is not there)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_has_bf16() -> bool:
    """Whether the CPU does bfloat16 arithmetic natively."""
    return any(flag in cpu_flags() for flag in BF16_FLAGS)


def resolve_precision(precision: str, device: str) -> str:
    """'auto', 'fp32' or 'bf16' -> the precision an inference predictor on ``device`` uses.

    'auto' is bf16 on a CPU that does bf16 natively and fp32 everywhere else (a GPU
    included: the predictor's bf16 path is oneDNN's, for CPUs). Training is always fp32.

    Raises:
        ValueError: an unknown precision, or bf16 asked for on a GPU.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "bf16" and device == "gpu":
        raise ValueError("--precision bf16 is for the CPU (oneDNN); on a GPU use fp32 or auto")
    if precision == "auto":
        return "bf16" if device == "cpu" and cpu_has_bf16() else "fp32"
    return precision


def precision_report(precision: str, device: str) -> str:
    """One line: the inference precision ``precision`` resolves to on ``device``, and why."""
    chosen = resolve_precision(precision, device)
    if precision != "auto":
        return f"inference in {chosen}: --precision {precision} asked for it"
    if device != "cpu":
        return "inference in fp32: auto keeps fp32 on a GPU"
    have = [flag for flag in BF16_FLAGS if flag in cpu_flags()]
    if have:
        return f"inference in bf16: auto chose it because the CPU has {' and '.join(have)}"
    return "inference in fp32: auto chose it because the CPU has no native bf16 (avx512_bf16 or amx_bf16)"
