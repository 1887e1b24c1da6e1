"""The arena's settings: the two players, the board they share and the rule (``ArenaSettings``).

``arena`` runs the games these settings describe; ``arena_report`` scores them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from gomoku.game.board import Board
from gomoku.game.rules import FREESTYLE, RULES
from gomoku.search.options import SearchOptions
from gomoku.search.player_registry import player_forms
from gomoku.search.player_specs import PlayerSpec


class ArenaError(ValueError):
    """Arena settings that cannot work: a bad player spec, models for different boards, ..."""


# -------------------------------------------------------------------- setup
def parse_player(text: str) -> PlayerSpec:
    """Reads a player spec for the arena (any AI player; a model player needs its path).

    Raises:
        ArenaError: an unknown kind, a human, or a model player without a model.
    """
    try:
        spec = PlayerSpec.parse(text)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    if not spec.entry.ai:
        raise ArenaError(f"the arena plays AI players only: {player_forms(ai_only=True)}")
    if spec.entry.model and not spec.model:
        raise ArenaError(f"the {spec.kind} player needs a model file: {spec.entry.form}")
    return spec


def resolve_geometry(specs: Sequence[PlayerSpec], size: Optional[tuple[int, int]] = None,
                     n_in_row: Optional[int] = None) -> tuple[int, int, int]:
    """The board ``(width, height, n_in_row)``: the models', else the flags' (default: 8x8, 5).

    A fixed-size model sets the board. A size-free model sets only ``n_in_row``:
    ``size`` chooses the board, by default the largest it was trained on.

    Raises:
        ArenaError: models that cannot play one board, flags that contradict the
            models, a board that cannot hold ``n_in_row``.
        gomoku.net.ModelFileError: a model file is missing or unreadable.
    """
    from gomoku.net.modelfile import read_model_spec

    found = {}  # model path -> NetSpec
    for spec in specs:
        if spec.entry.model and spec.model not in found:
            found[spec.model] = read_model_spec(spec.model)
    fixed = {path: s for path, s in found.items() if not s.size_free}
    free = {path: s for path, s in found.items() if s.size_free}
    boards = {(s.width, s.height, s.n_in_row) for s in fixed.values()}
    if len(boards) > 1 or len({s.n_in_row for s in found.values()}) > 1:
        described = ", ".join(f"{path} is for {s.board_name()}" for path, s in found.items())
        raise ArenaError(f"the two models are for different boards: {described}")
    if found:
        # a fixed-size model sets the board; a size-free one only n_in_row
        path, net = next(iter(fixed.items())) if fixed else next(iter(free.items()))
        try:
            geometry = net.board_for(size, n_in_row)
        except ValueError as exc:
            raise ArenaError(f"{path}: {exc}") from None
    else:
        width, height = size or (8, 8)
        geometry = (width, height, n_in_row or min(5, width, height))
    try:
        Board(*geometry)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    return geometry


def resolve_rule(specs: Sequence[PlayerSpec], rule: Optional[str] = None) -> str:
    """The rule of the games: ``rule``, else the models', else freestyle.

    Raises:
        ArenaError: an unknown rule, models trained for different rules, or a model
            trained for another rule than ``rule`` (the message names both).
        gomoku.net.ModelFileError: a model file is missing or unreadable.
    """
    from gomoku.net.modelfile import read_model_spec

    if rule is not None and rule not in RULES:
        raise ArenaError(f"unknown rule {rule!r}: the rules are {', '.join(RULES)}")
    nets = {spec.model: read_model_spec(spec.model) for spec in specs if spec.entry.model}
    trained = {net.rule for net in nets.values()}
    if rule is None:
        if len(trained) > 1:
            described = ", ".join(f"{path} for {net.rule}" for path, net in nets.items())
            raise ArenaError(f"the two models were trained for different rules: {described}")
        return trained.pop() if trained else FREESTYLE
    for path, net in nets.items():
        problem = net.rule_mismatch(rule)
        if problem:
            raise ArenaError(f"{path}: {problem} (--rule {rule})")
    return rule


@dataclass
class ArenaSettings:
    """What an arena run plays."""

    a: str
    """player A's spec, e.g. 'az:models/gomoku_6x6_4.npz:400'"""
    b: str
    """player B's spec, e.g. 'pure:5000'"""
    games: int = 40
    """games in all; each opening is played twice, colours swapped"""
    size: Optional[tuple[int, int]] = None
    """(width, height) when no fixed-size model sets the board"""
    n_in_row: Optional[int] = None
    """stones in a row that win, when no model sets the board"""
    opening_stones: int = 2
    """random stones placed before the players start, Black first"""
    openings: Optional[str] = None
    """an openings file (or 'balanced': the shipped ones) to draw the openings from instead"""
    seed: int = 0
    """seeds the openings and the players"""
    workers: int = 1
    """processes; 1 plays in this process"""
    parallel: int = 16
    """games in lockstep per worker"""
    c_puct: float = 5.0
    """exploration constant of the searches"""
    device: str = "auto"
    """where models run: cpu, gpu or auto"""
    search: SearchOptions = SearchOptions()
    """how the az players search (default: the plain PUCT search)"""
    precision: str = "auto"
    """the models' inference arithmetic: auto, fp32 or bf16"""
    precision_b: Optional[str] = None
    """B's, where it differs (to play one model against itself in two precisions); None: ``precision``"""
    rule: Optional[str] = None
    """freestyle, standard or renju; None: the models' rule, else freestyle"""
    engine_info: str = ""
    """the INFO lines of the engine players, "KEY VALUE;KEY VALUE" (``engine_player.parse_engine_info``)"""
    engine_info_b: Optional[str] = None
    """B's INFO lines where they differ from ``engine_info`` (two engines at two budgets); None: the same"""

    def seat_engine_info(self) -> dict:
        """The INFO text of each seat, ``{"A": ..., "B": ...}``."""
        return {"A": self.engine_info, "B": self.engine_info if self.engine_info_b is None else self.engine_info_b}
