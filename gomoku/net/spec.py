"""``NetSpec``: what a model file records to rebuild its net (no Paddle needed to read it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NetSpec:
    """What a model file must record to rebuild its net."""

    width: int = 8
    height: int = 8
    n_in_row: int = 5
    arch: str = "reference"
    """'reference' (SPEC section 3) or 'resnet' (residual blocks)"""
    res_blocks: int = 0
    """residual blocks, for arch='resnet'"""
    res_filters: int = 64
    """channels of the residual trunk, for arch='resnet'"""

    @classmethod
    def for_config(cls, config) -> "NetSpec":
        """The net a ``TrainConfig`` asks for."""
        return cls(config.width, config.height, config.n_in_row, config.arch,
                   config.res_blocks if config.arch == "resnet" else 0, config.res_filters)

    @property
    def size(self) -> int:
        return self.width * self.height

    def board_name(self) -> str:
        return f"{self.width}x{self.height}, {self.n_in_row} in a row"
