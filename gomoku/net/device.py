"""Where Paddle runs: the CPU or the GPU, and a report of what this Paddle build sees."""

from __future__ import annotations

import paddle


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
    if device not in ("cpu", "gpu", "auto"):
        raise ValueError(f"device must be cpu, gpu or auto, got {device!r}")
    has_gpu = paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
    if device == "gpu" and not has_gpu:
        raise ValueError("--device gpu was asked for, but this Paddle build sees no GPU "
                         f"({describe_build()})")
    return "gpu" if device == "gpu" or (device == "auto" and has_gpu) else "cpu"


def describe_build() -> str:
    """What Paddle was built for: ``CPU build`` or ``CUDA 12.6 build``, with its version."""
    if not paddle.device.is_compiled_with_cuda():
        return f"Paddle {paddle.__version__}, a CPU build (for a GPU: pip install -r requirements-gpu.txt)"
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
