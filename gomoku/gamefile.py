"""Games as ``play.py`` runs them: who sits at each side, undo, and the game's record on disk.

A ``Match`` is a board and two seats. Player ``1`` is Black (``X`` in text) and
player ``2`` is White (``O``); Black moves first unless a loaded record says
otherwise. A seat holds a ``players.PlayerSpec`` and the player built from it
(``None`` for a human), so the window and the text mode drive the same object
and differ only in how they ask a human for a move and how they wait for an AI.

A game record is a JSON file::

    {"format": "gomoku-zero-game/1", "width": 8, "height": 8, "n_in_row": 5,
     "start_player": 1, "moves": ["d4", "e5", ...],
     "players": {"1": "human", "2": "az:models/gomoku_8x8_5.npz:400"},
     "result": 1}

``moves`` are labels as ``Board.move_to_label`` writes them (flat indices are
read too); ``players`` are player specs as ``PlayerSpec.parse`` reads them;
``result`` follows ``Board.winner``: the winning player, ``0`` for a draw,
``null`` for an unfinished game. Loading replays every move through the rules,
so a record that cannot have happened is refused with a clear message.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from numbers import Integral
from typing import Optional

from gomoku.board import Board, IllegalMoveError
from gomoku.players import PLAYER_KINDS, PlayerSpec, make_player
from gomoku.util import atomic_write

GAME_FORMAT = "gomoku-zero-game/1"
DEFAULT_MODEL = os.path.join("models", "gomoku_8x8_5.npz")
COLOUR_NAMES = {1: "Black", 2: "White"}
STONE_MARKS = {1: "X", 2: "O"}


class GameFileError(ValueError):
    """A game record that is missing, unreadable, or describes an impossible game."""


class MissingModelError(ValueError):
    """The default model is not there yet: the user has to train one first."""


# ---------------------------------------------------------------- records
def spec_text(spec: PlayerSpec) -> str:
    """The spec written back in the form ``PlayerSpec.parse`` reads (``az:PATH:400``)."""
    if spec.kind == "human":
        return "human"
    if spec.kind == "pure":
        return f"pure:{spec.playouts}"
    if spec.kind == "policy":
        return f"policy:{spec.model}"
    return f"az:{spec.model}:{spec.playouts}"


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

    @classmethod
    def from_board(cls, board: Board, players: Optional[dict[int, str]] = None) -> "GameRecord":
        return cls(board.width, board.height, board.n_in_row, list(board.history),
                   board.start_player, dict(players or {}), board.winner)

    def replay(self) -> Board:
        """The board after all the moves, each checked by the rules.

        Raises:
            GameFileError: the geometry is impossible, a move is illegal, or the
                recorded result is not what the moves give.
        """
        try:
            board = Board(self.width, self.height, self.n_in_row, self.start_player)
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
                     {int(k): v for k, v in players.items()}, result)
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


# ------------------------------------------------------------------ match
class Match:
    """A game in progress between two seats (human or AI), with the rules' board.

    Args:
        board: the position to play on (it may already hold moves).
        specs: the player spec for each side, ``{1: ..., 2: ...}``.
        choices: the specs a seat may cycle through, one per kind (see ``cycle_seat``);
            by default the seats' own specs plus ``human`` and ``pure``.
        seed: seeds the AI players (each side gets its own stream).
        device: where models run ('cpu', 'gpu' or 'auto').
        c_puct: exploration constant of the searches.

    Raises:
        gomoku.net.ModelFileError: a seat's model is missing or made for another board.
    """

    def __init__(self, board: Board, specs: dict[int, PlayerSpec],
                 choices: Optional[list[PlayerSpec]] = None, seed: Optional[int] = None,
                 device: str = "auto", c_puct: float = 5.0):
        self.board = board
        self.seed = seed
        self.device = device
        self.c_puct = c_puct
        self._models: dict = {}  # loaded once, shared by every seat that plays the same file
        self.specs: dict[int, PlayerSpec] = {}
        self.players: dict[int, object] = {}
        for player in (1, 2):
            self.set_seat(player, specs[player])
        self.choices = _merge_choices(list(specs.values()) + list(choices or [PlayerSpec.parse("pure")]))

    # -- seats
    def set_seat(self, player: int, spec: PlayerSpec) -> None:
        """Puts ``spec`` in ``player``'s seat; the board is unchanged.

        Raises:
            gomoku.net.ModelFileError: the spec's model cannot be loaded for this board.
        """
        seed = None if self.seed is None else self.seed + player
        built = make_player(spec, self.board, c_puct=self.c_puct, seed=seed,
                            device=self.device, models=self._models)
        self.specs[player] = spec
        self.players[player] = built

    def cycle_seat(self, player: int) -> PlayerSpec:
        """Gives ``player``'s seat to the next kind of player among ``choices``; returns its spec."""
        kinds = [c.kind for c in self.choices]
        current = self.specs[player].kind
        index = kinds.index(current) if current in kinds else -1
        spec = self.choices[(index + 1) % len(self.choices)]
        self.set_seat(player, spec)
        return spec

    def swap_sides(self) -> None:
        """Black's player takes White's stones and the other way round; the board is unchanged."""
        self.specs[1], self.specs[2] = self.specs[2], self.specs[1]
        self.players[1], self.players[2] = self.players[2], self.players[1]
        self._reset_players()

    def is_human(self, player: int) -> bool:
        return self.players[player] is None

    @property
    def human_to_move(self) -> bool:
        return not self.board.game_over and self.is_human(self.board.current_player)

    @property
    def ai_to_move(self):
        """The AI player whose turn it is, or None (a human's turn, or the game is over)."""
        if self.board.game_over:
            return None
        return self.players[self.board.current_player]

    def seat_label(self, player: int) -> str:
        """``Black (X): human``."""
        return f"{COLOUR_NAMES[player]} ({STONE_MARKS[player]}): {self.specs[player]}"

    # -- moves
    def play(self, move: int) -> None:
        """Plays ``move`` for the side to move.

        Raises:
            IllegalMoveError: the move is not legal now; nothing changes.
        """
        self.board.do_move(move)
        for player in self.players.values():
            if player is not None:
                player.notify_move(move)

    def undo(self) -> list[int]:
        """Takes back the last human move and every AI reply after it; returns them, last first.

        With no human at the board it takes back one move.

        Raises:
            IllegalMoveError: there is no move of a human's to take back.
        """
        history = self.board.history
        humans = [p for p in (1, 2) if self.is_human(p)]
        if not history:
            raise IllegalMoveError("there is no move to take back")
        if humans:
            mover = self.board.start_player
            last_human = None
            for index in range(len(history)):
                if mover in humans:
                    last_human = index
                mover = 3 - mover
            if last_human is None:
                raise IllegalMoveError("there is no move of yours to take back")
            count = len(history) - last_human
        else:
            count = 1
        undone = [self.board.undo() for _ in range(count)]
        self._reset_players()
        return undone

    def new_game(self) -> None:
        self.board.reset(self.board.start_player)
        self._reset_players()

    def _reset_players(self) -> None:
        for player in self.players.values():
            if player is not None:
                player.reset()

    # -- describing it
    def status(self) -> str:
        """Whose turn it is, or the result."""
        board = self.board
        if board.winner == 0:
            return "Draw: the board is full"
        if board.winner is not None:
            return f"{COLOUR_NAMES[board.winner]} ({self.specs[board.winner]}) wins"
        player = board.current_player
        return f"{COLOUR_NAMES[player]} ({self.specs[player]}) to move"

    def record(self) -> GameRecord:
        return GameRecord.from_board(self.board, {p: spec_text(s) for p, s in self.specs.items()})


def _merge_choices(specs: list[PlayerSpec]) -> list[PlayerSpec]:
    """One spec per kind, in the order of PLAYER_KINDS; the first spec given for a kind wins."""
    by_kind = {"human": PlayerSpec("human")}
    for spec in specs:
        by_kind.setdefault(spec.kind, spec)
    return [by_kind[k] for k in PLAYER_KINDS if k in by_kind]


# ------------------------------------------------------------------ setup
def setup_match(model: Optional[str] = None, playouts: int = 400, first: Optional[str] = None,
                black: Optional[str] = None, white: Optional[str] = None,
                size: Optional[tuple[int, int]] = None, n_in_row: Optional[int] = None,
                load: Optional[str] = None, seed: Optional[int] = None,
                device: str = "auto") -> Match:
    """Builds the match that ``play.py``'s flags describe.

    By default a human plays Black against AlphaZero with ``model`` (the shipped
    ``models/gomoku_8x8_5.npz`` when None); ``first='ai'`` swaps them. With ``size``
    or ``n_in_row`` and no model the opponent is pure MCTS. ``black`` / ``white``
    replace a side's player; a loaded record brings its own players unless flags
    say otherwise, and its board.

    Args:
        model: model file for the AlphaZero and policy players.
        playouts: search playouts for the AI players.
        first: 'human' or 'ai': who plays Black, the side that opens.
        black, white: player specs (``human``, ``az[:PATH[:N]]``, ``pure[:N]``, ``policy[:PATH]``).
        size: ``(width, height)`` for a game without a model.
        n_in_row: stones in a row that win, for a game without a model.
        load: a game record to continue.
        seed: seeds the AI players.
        device: where models run.

    Raises:
        MissingModelError: the default model is needed but not there yet.
        GameFileError: the record cannot be loaded.
        gomoku.net.ModelFileError: a model is missing, unreadable or for another board.
        ValueError: flags that do not fit together (the message says why).
    """
    if playouts < 1:
        raise ValueError(f"--playouts must be at least 1, got {playouts}")
    if first not in (None, "human", "ai"):
        raise ValueError(f"--first must be 'human' or 'ai', got {first!r}")
    record = load_game(load) if load else None
    model_path = model or DEFAULT_MODEL
    board_flags = size is not None or n_in_row is not None

    opponent = "pure" if board_flags and model is None else "az"
    seats = {1: "human", 2: opponent}
    if record is not None and first is None:
        seats.update(record.players)
    if first == "ai":
        seats = {1: opponent, 2: "human"}
    if black:
        seats[1] = black
    if white:
        seats[2] = white
    specs = {p: PlayerSpec.parse(text, default_model=model_path, default_playouts=playouts)
             for p, text in seats.items()}

    model_files = [s.model for s in specs.values() if s.kind in ("az", "policy")]
    for path in model_files:
        if not os.path.isfile(path) and path == DEFAULT_MODEL and model is None:
            raise MissingModelError(
                f"no trained model at {DEFAULT_MODEL} yet. Train one with `python train.py`, "
                f"then play it with `python play.py --model runs/<name>/best_model.npz` "
                f"(or play pure MCTS without a model: `python play.py --size 8x8 --n-in-row 5`)")

    if record is not None:
        if board_flags:
            raise ValueError("--size and --n-in-row cannot change a loaded game's board")
        geometry = (record.width, record.height, record.n_in_row)
    elif model_files or model is not None:
        # A model given by flag sets the board even when no seat plays it yet (the window offers it).
        source = model_files[0] if model_files else model
        geometry = _model_geometry(source)
        if board_flags and (size or geometry[:2]) + (n_in_row or geometry[2],) != geometry:
            raise ValueError(
                f"--size and --n-in-row are for games without a model: {source} "
                f"plays {geometry[0]}x{geometry[1]}, {geometry[2]} in a row")
    else:
        width, height = size or (8, 8)
        geometry = (width, height, n_in_row or min(5, width, height))

    board = record.replay() if record is not None else Board(*geometry)
    # The window offers the model players as choices whenever a fitting model is at hand.
    choices = [PlayerSpec("human"), PlayerSpec("pure", playouts=playouts)]
    offered = model_files[0] if model_files else model_path
    if model_files or (os.path.isfile(offered) and _fits(offered, geometry)):
        choices[1:1] = [PlayerSpec("az", offered, playouts)]
        choices.append(PlayerSpec("policy", offered))
    return Match(board, specs, choices, seed=seed, device=device)


def _model_geometry(path: str) -> tuple[int, int, int]:
    from gomoku.net import read_model_file  # imports paddle: only when a model is used

    spec, _ = read_model_file(path)
    return spec.width, spec.height, spec.n_in_row


def _fits(path: str, geometry: tuple[int, int, int]) -> bool:
    from gomoku.net import ModelFileError

    try:
        return _model_geometry(path) == geometry
    except ModelFileError:
        return False
