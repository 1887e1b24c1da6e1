"""Where a net runs and in what arithmetic, as every command's flags say it.

The choices live here, apart from ``device`` (which imports Paddle), so that a command builds
its parser and checks its flags before Paddle starts.
"""

from __future__ import annotations

import argparse
from typing import Optional, Union

DEVICES = ("cpu", "gpu", "auto")
"""'auto' is the GPU when this Paddle build sees one (``device.resolve_device``)."""
PRECISIONS = ("auto", "fp32", "bf16")
"""'auto' is bf16 on a CPU that does it natively, else fp32 (``device.resolve_precision``)."""

Default = Union[str, None, bool]


def add_device_flags(parser: argparse.ArgumentParser, what: str = "the model",
                     device: Default = "auto", precision: Default = "auto",
                     device_help: Optional[str] = None) -> None:
    """Adds ``--device`` (one of ``DEVICES``) and ``--precision`` (``PRECISIONS``) to ``parser`` (a parser
    or one of its argument groups).

    ``device`` and ``precision`` are the flags' defaults: None leaves a flag unset unless it is
    given (a command that passes it on only then), False leaves the flag out. ``what`` names what
    runs, for the help; ``device_help`` replaces the device's help.
    """
    if device is not False:
        parser.add_argument("--device", choices=DEVICES, default=device,
                            help=(device_help or f"where {what} runs: cpu, gpu, or auto (the GPU when Paddle sees one)")
                            + _shown(device))
    if precision is not False:
        parser.add_argument("--precision", choices=PRECISIONS, default=precision,
                            help=f"the inference arithmetic of {what}: auto is bf16 on a CPU that does it natively "
                                 f"(AVX-512 BF16 or AMX), else fp32" + _shown(precision))


def _shown(default: Default) -> str:
    return "" if default is None else f" (default: {default})"
