"""Saved games: the record of a game on disk, as JSON.

Player ``1`` is Black and player ``2`` is White (``COLOUR_NAMES``); Black moves
first unless ``start_player`` says otherwise. A game record is a JSON file::

    {"format": "gomoku-zero-game/1", "width": 8, "height": 8, "n_in_row": 5,
     "rule": "freestyle", "start_player": 1, "moves": ["d4", "e5", ...],
     "players": {"1": "human", "2": "az:models/gomoku_8x8_5.npz:400"},
     "result": 1}

``rule`` is the board's rule (``gomoku.game.rules``: freestyle, standard or renju);
a record without it (written before rules existed) is freestyle.

``moves`` are labels as ``Board.move_to_label`` writes them (flat indices are
read too); ``players`` are player specs as ``search.player_specs.PlayerSpec.parse`` reads them
(``spec_text`` writes them); ``result`` follows ``Board.winner``: the winning
player, ``0`` for a draw, ``null`` for an unfinished game. Loading replays every
move through the rules, so a record that cannot have happened is refused with a
clear message.

A games file (what ``gomoku-arena --out`` writes) holds one such record a line, each with the
arena's fields beside it; ``read_game_lines`` reads one.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from numbers import Integral
from typing import Optional

from gomoku.game.board import Board, IllegalMoveError
from gomoku.game.rules import FREESTYLE, RULES
from gomoku.util import atomic_write

GAME_FORMAT = "gomoku-zero-game/1"
COLOUR_NAMES = {1: "Black", 2: "White"}


class GameFileError(ValueError):
    """A game record that is missing, unreadable, or describes an impossible game."""


@dataclass
class GameRecord:
    """What a saved game holds: the geometry, the moves in order, the players and the result."""

    width: int
    height: int
    n_in_row: int
    moves: list[int] = field(default_factory=list)
    start_player: int = 1
    players: dict[int, str] = field(default_factory=dict)
    """player specs by player number, e.g. ``{1: "human", 2: "pure:1000"}``"""
    result: Optional[int] = None
    """as ``Board.winner``: the winner, 0 for a draw, None while unfinished"""
    rule: str = FREESTYLE
    """the rule the game was played under (``gomoku.game.rules.RULES``)"""

    @classmethod
    def from_board(cls, board: Board, players: Optional[dict[int, str]] = None) -> "GameRecord":
        return cls(board.width, board.height, board.n_in_row, list(board.history),
                   board.start_player, dict(players or {}), board.winner, board.rule)

    def replay(self) -> Board:
        """The board after all the moves, each checked by the rules.

        Raises:
            GameFileError: the geometry is impossible, a move is illegal, or the
                recorded result is not what the moves give.
        """
        try:
            board = Board(self.width, self.height, self.n_in_row, self.start_player, self.rule)
        except ValueError as exc:
            raise GameFileError(f"the game's board is impossible: {exc}") from None
        for number, move in enumerate(self.moves, 1):
            try:
                board.do_move(move)
            except IllegalMoveError as exc:
                raise GameFileError(f"move {number} cannot be played: {exc}") from None
        if board.winner != self.result:
            raise GameFileError(
                f"the record says the result is {_result_word(self.result)}, "
                f"but its moves give {_result_word(board.winner)}")
        return board

    def to_json(self) -> dict:
        labeller = Board(self.width, self.height, self.n_in_row)
        return {
            "format": GAME_FORMAT,
            "width": self.width,
            "height": self.height,
            "n_in_row": self.n_in_row,
            "rule": self.rule,
            "start_player": self.start_player,
            "moves": [labeller.move_to_label(m) for m in self.moves],
            "players": {str(p): text for p, text in sorted(self.players.items())},
            "result": self.result,
        }

    @classmethod
    def from_json(cls, data) -> "GameRecord":
        """Reads the dict that ``to_json`` writes (and checks it by replaying it).

        Raises:
            GameFileError: any field missing, of the wrong type, or inconsistent.
        """
        if not isinstance(data, dict):
            raise GameFileError("a game record must be a JSON object")
        if data.get("format") != GAME_FORMAT:
            raise GameFileError(f"format is {data.get('format')!r}, expected {GAME_FORMAT!r}")
        geometry = {}
        for key in ("width", "height", "n_in_row"):
            value = data.get(key)
            if not _is_int(value):
                raise GameFileError(f"{key!r} must be an integer, got {value!r}")
            geometry[key] = value
        rule = data.get("rule", FREESTYLE)
        if rule not in RULES:
            raise GameFileError(f"unknown rule {rule!r}: the rules are {', '.join(RULES)}")
        start = data.get("start_player", 1)
        if start not in (1, 2) or not _is_int(start):
            raise GameFileError(f"'start_player' must be 1 or 2, got {start!r}")
        result = data.get("result")
        if result is not None and (not _is_int(result) or result not in (0, 1, 2)):
            raise GameFileError(f"'result' must be 1, 2, 0 (a draw) or null, got {result!r}")
        players = data.get("players", {})
        if not isinstance(players, dict) or not all(
                k in ("1", "2") and isinstance(v, str) for k, v in players.items()):
            raise GameFileError("'players' must map \"1\" and \"2\" to player specs like \"human\"")
        raw_moves = data.get("moves")
        if not isinstance(raw_moves, list):
            raise GameFileError("'moves' must be a list of moves like \"d4\"")
        try:
            labeller = Board(**geometry)
        except ValueError as exc:
            raise GameFileError(f"the game's board is impossible: {exc}") from None
        moves = []
        for number, raw in enumerate(raw_moves, 1):
            if _is_int(raw):
                moves.append(int(raw))
            elif isinstance(raw, str):
                try:
                    moves.append(labeller.parse_move(raw))
                except IllegalMoveError as exc:
                    raise GameFileError(f"move {number}: {exc}") from None
            else:
                raise GameFileError(f"move {number} must be a label like \"d4\" or an index, got {raw!r}")
        record = cls(geometry["width"], geometry["height"], geometry["n_in_row"], moves, start,
                     {int(k): v for k, v in players.items()}, result, rule)
        record.replay()
        return record


def save_game(path: str, record: GameRecord) -> None:
    """Writes a record as JSON, atomically (a crash leaves the old file or the new one)."""
    # One field a line, each value compact: the move list stays on one readable line.
    fields = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in record.to_json().items()]
    text = "{\n" + ",\n".join(fields) + "\n}\n"
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def load_game(path: str) -> GameRecord:
    """Reads and checks a game record.

    Raises:
        GameFileError: the file is missing, not JSON, or not a possible game.
    """
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise GameFileError(f"no game file at {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GameFileError(f"{path} is not a readable JSON game record ({exc})") from None
    try:
        return GameRecord.from_json(data)
    except GameFileError as exc:
        raise GameFileError(f"{path}: {exc}") from None


def read_game_lines(path: str) -> list[dict]:
    """The JSON objects of a games file, one a line, in order (not yet checked as records).

    Raises:
        GameFileError: the file is missing or unreadable, a line is not a JSON object, or it
            holds no games.
    """
    games = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    games.append(json.loads(line))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GameFileError(f"{path} is not a games file ({exc.__class__.__name__}: {exc})") from None
    if not all(isinstance(game, dict) for game in games):
        raise GameFileError(f"{path} is not a games file (a line that is not a JSON object)")
    if not games:
        raise GameFileError(f"{path} holds no games")
    return games


def default_game_path(directory: str = "games") -> str:
    """A fresh file name for a saved game: ``games/game-20240131-235959.json``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(directory, f"game-{stamp}.json")
    suffix = 2
    while os.path.exists(path):
        path = os.path.join(directory, f"game-{stamp}-{suffix}.json")
        suffix += 1
    return path


def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _result_word(result: Optional[int]) -> str:
    if result is None:
        return "an unfinished game"
    return "a draw" if result == 0 else f"a win for {COLOUR_NAMES[result]}"
