"""Where Paddle runs: the CPU or the GPU."""

from __future__ import annotations

import paddle


def resolve_device(device: str) -> str:
    """'cpu', 'gpu' or 'auto' (the GPU when this Paddle build has one) -> 'cpu' or 'gpu'."""
    if device not in ("cpu", "gpu", "auto"):
        raise ValueError(f"device must be cpu, gpu or auto, got {device!r}")
    has_gpu = paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
    if device == "gpu" and not has_gpu:
        raise ValueError("--device gpu was asked for, but this Paddle build sees no GPU")
    return "gpu" if device == "gpu" or (device == "auto" and has_gpu) else "cpu"


