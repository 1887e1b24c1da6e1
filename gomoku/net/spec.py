"""``NetSpec``: what a model file records to rebuild its net (no Paddle needed to read it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gomoku.game.features import check_input_version, input_channels
from gomoku.game.rules import FREESTYLE, check_rule

ARCHS = ("conv3", "resnet", "sizefree")
"""the net architectures: 'conv3' three 3x3 convolutions and dense heads sized to one board
(docs/algorithm.md, section 3), 'resnet' residual blocks, 'sizefree' residual blocks and no layer
sized to the board (docs/algorithm.md, section 7)"""

ARCH_ALIASES = {"reference": "conv3"}
"""other names of an architecture that model files, checkpoints and configs may hold, and the
architecture each one reads as"""

SIZE_FREE_ARCHS = ("sizefree",)
"""architectures with no layer sized to the board: one weight file plays any board size"""

TRUNK_SETTINGS = {
    "resnet": {"res_blocks": "res_blocks", "res_filters": "res_filters"},
    "sizefree": {"sizefree_blocks": "res_blocks", "sizefree_filters": "res_filters",
                 "global_pool": "global_pool"},
}
"""for each architecture with a residual trunk: the ``TrainConfig`` fields that size it, and the
``NetSpec`` field each one fills (the 'conv3' net has no trunk to size)"""

NET_SETTINGS = ("arch", *(name for names in TRUNK_SETTINGS.values() for name in names))
"""the ``TrainConfig`` fields that choose and size a net's layers (its board and input version aside)"""


def spec_field(setting: str) -> str:
    """The ``NetSpec`` field a ``TrainConfig`` net setting fills (``sizefree_filters`` -> ``res_filters``)."""
    for names in TRUNK_SETTINGS.values():
        if setting in names:
            return names[setting]
    return setting


def arch_name(arch: str) -> str:
    """The architecture ``arch`` names: itself, or the one an alias in ``ARCH_ALIASES`` stands for."""
    return ARCH_ALIASES.get(arch, arch)


def trunk_of(config, arch: str) -> dict:
    """The ``NetSpec`` trunk fields the settings of ``config`` give a net of ``arch`` (none for 'conv3')."""
    return {field: getattr(config, name) for name, field in TRUNK_SETTINGS.get(arch, {}).items()}


def trunk_settings(spec: "NetSpec") -> dict:
    """The ``TrainConfig`` settings that rebuild the trunk of the net ``spec`` describes."""
    return {name: getattr(spec, field) for name, field in TRUNK_SETTINGS.get(spec.arch, {}).items()}


def pooling_blocks(blocks: int, pooled: int) -> tuple[int, ...]:
    """The indices of the ``pooled`` residual blocks, out of ``blocks``, that carry a global pooling
    branch: spread evenly through the trunk, none first unless every block pools (6 blocks with 2:
    blocks 2 and 4)."""
    return tuple((j + 1) * blocks // (pooled + 1) for j in range(pooled))


def pool_channels(filters: int) -> int:
    """The channels a pooling block pools: a quarter of the trunk's, at least one."""
    return max(1, filters // 4)


@dataclass(frozen=True)
class NetSpec:
    """What a model file must record to rebuild its net.

    For a size-free net ``width`` and ``height`` are the board it plays by
    default (the largest it was trained on), and ``trained_sizes`` lists every
    ``(width, height)`` it was trained on.
    """

    width: int = 8
    height: int = 8
    n_in_row: int = 5
    arch: str = "conv3"
    """one of ``ARCHS``; an alias of ``ARCH_ALIASES`` reads as its architecture"""
    res_blocks: int = 0
    """residual blocks, for arch='resnet' and 'sizefree'"""
    res_filters: int = 64
    """channels of the residual trunk, for arch='resnet' and 'sizefree'"""
    trained_sizes: tuple = ()
    """the (width, height) boards a size-free net was trained on; empty for a fixed-size net"""
    inputs: int = 1
    """the input version: which planes the net takes (``gomoku.game.features``: 1 the four of
    ``Board.planes``, 2 those and the threat planes); files without it are version 1"""
    rule: str = FREESTYLE
    """the rule the net was trained for (``gomoku.game.rules``); files without it are freestyle"""
    global_pool: int = 0
    """residual blocks with a global pooling branch, for arch='sizefree' (0: none; files without
    it have none)"""

    def __post_init__(self):
        # JSON gives lists back: keep the spec hashable and comparable.
        object.__setattr__(self, "trained_sizes", tuple(tuple(int(v) for v in s) for s in self.trained_sizes))
        object.__setattr__(self, "arch", arch_name(self.arch))
        check_input_version(self.inputs)
        if not 0 <= self.global_pool <= max(self.res_blocks, 0):
            raise ValueError(f"global_pool must lie between 0 and the {self.res_blocks} residual blocks, "
                             f"got {self.global_pool}")
        if self.global_pool and not self.size_free:
            raise ValueError(f"global pooling is a size-free net's option, not {self.arch!r}'s")
        check_rule(self.rule, self.n_in_row)

    @classmethod
    def for_config(cls, config) -> "NetSpec":
        """The net a ``TrainConfig`` asks for."""
        trunk = trunk_of(config, config.arch)
        if config.arch in SIZE_FREE_ARCHS:
            sizes = config.board_sizes()
            width, height = max(sizes, key=lambda s: s[0] * s[1])
            return cls(width, height, config.n_in_row, config.arch, trained_sizes=tuple(sizes),
                       inputs=config.inputs, rule=config.rule, **trunk)
        width, height = config.board_sizes()[0]
        return cls(width, height, config.n_in_row, config.arch, inputs=config.inputs, rule=config.rule, **trunk)

    @property
    def channels(self) -> int:
        """The input planes the net takes."""
        return input_channels(self.inputs)

    @property
    def size_free(self) -> bool:
        """True when one weight file plays any board size (given its ``n_in_row``)."""
        return self.arch in SIZE_FREE_ARCHS

    @property
    def size(self) -> int:
        return self.width * self.height

    def board_name(self) -> str:
        if self.size_free:
            return f"any board, {self.n_in_row} in a row"
        return f"{self.width}x{self.height}, {self.n_in_row} in a row"

    def board_for(self, size: Optional[tuple[int, int]] = None,
                  n_in_row: Optional[int] = None) -> tuple[int, int, int]:
        """The board ``(width, height, n_in_row)`` this net plays, given the ``--size`` and
        ``--n-in-row`` a user asked for (None: not asked). A fixed-size net plays its own board
        and refuses flags that differ; a size-free one plays any ``size`` (by default the
        largest it trained on) with its own ``n_in_row``. The board is not checked to hold
        ``n_in_row``: ``Board`` says so.

        Raises:
            ValueError: flags this net cannot play, naming both boards.
        """
        if self.size_free:
            if n_in_row is not None and n_in_row != self.n_in_row:
                raise ValueError(f"a size-free model for {self.n_in_row} in a row cannot play "
                                 f"--n-in-row {n_in_row}")
            return (*(tuple(size) if size else (self.width, self.height)), self.n_in_row)
        own = (self.width, self.height, self.n_in_row)
        if (size is not None and tuple(size) != own[:2]) or (n_in_row is not None and n_in_row != own[2]):
            raise ValueError(f"a fixed-size model that plays {self.board_name()} only (--size and "
                             f"--n-in-row are for games without a model or with a size-free one)")
        return own

    def rule_mismatch(self, rule: str) -> Optional[str]:
        """Why this net should not play under ``rule``, or None if it was trained for it."""
        if rule != self.rule:
            return f"a model trained for {self.rule}, but this game is played under {rule}"
        return None

    def board_mismatch(self, width: int, height: int, n_in_row: int) -> Optional[str]:
        """Why this net cannot play a ``width x height`` board with ``n_in_row``, or None if it can."""
        if self.size_free:
            if n_in_row != self.n_in_row:
                return (f"a size-free model for {self.n_in_row} in a row, "
                        f"but this board is {width}x{height}, {n_in_row} in a row")
            return None
        if (width, height, n_in_row) != (self.width, self.height, self.n_in_row):
            return f"a model for {self.board_name()}, but this board is {width}x{height}, {n_in_row} in a row"
        return None
