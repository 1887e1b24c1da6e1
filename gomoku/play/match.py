"""The match a window or a terminal drives: who sits at each side, their moves, undo.

A ``Match`` is a board and two seats. Player ``1`` is Black (``X`` in text) and
player ``2`` is White (``O``); Black moves first unless a loaded record says
otherwise. A seat holds a ``player_specs.PlayerSpec`` and the player built from it
(``None`` for a human), so the window and the text mode drive the same object
and differ only in how they ask a human for a move and how they wait for an AI.

``setup_match`` builds the match that ``play.py``'s flags describe: from a model
file, a board size, or a saved game read with ``gamefile.load_game``; a match
gives back its ``gamefile.GameRecord`` to save (``Match.record``). A fixed-size
model sets the board; a size-free one plays whatever board ``--size`` picks.
The board's rule (``gomoku.game.rules``) is ``--rule``, else a loaded game's, else
the model's, else freestyle; a model trained for another rule is refused.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional

from gomoku.game.board import Board, IllegalMoveError
from gomoku.game.gamefile import COLOUR_NAMES, GameRecord, load_game
from gomoku.game.rules import FREESTYLE
from gomoku.net import shipped
from gomoku.net.modelfile import ModelFileError, find_model, read_model_spec
from gomoku.play import engine_player  # noqa: F401  (registers the engine:COMMAND players)
from gomoku.search.options import SearchOptions
from gomoku.search.player_registry import player_kinds
from gomoku.search.player_specs import (PlayerSpec, close_players, make_player, model_player_kind, offered_players,
                                        parse_engine_info, spec_text)

STONE_MARKS = {1: "X", 2: "O"}


class MissingModelError(ValueError):
    """The default model is not there yet: the user has to train one first."""


class Match:
    """A game in progress between two seats (human or AI), with the rules' board.

    Args:
        board: the position to play on (it may already hold moves).
        specs: the player spec for each side, ``{1: ..., 2: ...}``.
        choices: the specs a seat may cycle through, one per kind (see ``cycle_seat``);
            by default the seats' own specs plus what each kind offers without a model
            (``player_specs.offered_players``).
        seed: seeds the AI players (each side gets its own stream).
        device: where models run ('cpu', 'gpu' or 'auto').
        c_puct: exploration constant of the searches.
        precision: the arithmetic of the models' inference ('fp32', 'bf16' or 'auto').

    Raises:
        gomoku.net.ModelFileError: a seat's model is missing or made for another board.
    """

    def __init__(self, board: Board, specs: dict[int, PlayerSpec],
                 choices: Optional[list[PlayerSpec]] = None, seed: Optional[int] = None,
                 device: str = "auto", c_puct: float = 5.0, precision: str = "auto"):
        self.board = board
        self.seed = seed
        self.device = device
        self.precision = precision
        self.c_puct = c_puct
        self._models: dict = {}  # loaded once, shared by every seat that plays the same file
        self.notes: list[str] = []  # what the user should know about the choice of players (setup_match)
        self.specs: dict[int, PlayerSpec] = {}
        self.players: dict[int, object] = {}
        for player in (1, 2):
            self.set_seat(player, specs[player])
        offered = choices or offered_players(None, 400, SearchOptions())
        self.choices = _merge_choices(list(specs.values()) + list(offered))

    # -- seats
    def set_seat(self, player: int, spec: PlayerSpec) -> None:
        """Puts ``spec`` in ``player``'s seat; the board is unchanged.

        Raises:
            gomoku.net.ModelFileError: the spec's model cannot be loaded for this board.
        """
        self.players[player] = self.build_player(spec, player)
        self.specs[player] = spec

    def build_player(self, spec: PlayerSpec, stream: int = 3, seed: Optional[int] = None):
        """A new player for ``spec`` on this board, sharing the match's loaded models (None for a human).

        ``stream`` picks its random stream: each seat's is its player number. ``seed``, when given,
        is the player's seed instead (hints seed theirs from the position: ``analysis.advisor``).

        Raises:
            gomoku.net.ModelFileError: the spec's model cannot be loaded for this board.
        """
        if seed is None and self.seed is not None:
            seed = self.seed + stream
        return make_player(spec, self.board, c_puct=self.c_puct, seed=seed,
                           device=self.device, models=self._models, precision=self.precision)

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
    def rule_text(self) -> str:
        """``", renju"``: the rule, for a line that describes the board; empty for freestyle."""
        return "" if self.board.rule == FREESTYLE else f", {self.board.rule}"

    def status(self) -> str:
        """Whose turn it is, or the result."""
        board = self.board
        if board.winner == 0:
            if len(board.history) < board.size:  # renju: only forbidden points are left to Black
                return "Draw: every empty point is forbidden for Black"
            return "Draw: the board is full"
        if board.winner is not None:
            return f"{COLOUR_NAMES[board.winner]} ({self.specs[board.winner]}) wins"
        player = board.current_player
        return f"{COLOUR_NAMES[player]} ({self.specs[player]}) to move"

    def record(self) -> GameRecord:
        return GameRecord.from_board(self.board, {p: spec_text(s) for p, s in self.specs.items()})

    def close(self) -> None:
        """Ends the engine processes the seats started (they would also end when this process exits)."""
        close_players(self._models)


def _merge_choices(specs: list[PlayerSpec]) -> list[PlayerSpec]:
    """One spec per kind, in the registry's order; the first spec given for a kind wins."""
    by_kind = {}
    for spec in specs:
        by_kind.setdefault(spec.kind, spec)
    return [by_kind[kind.name] for kind in player_kinds() if kind.name in by_kind]


# ------------------------------------------------------------------ setup
def setup_match(model: Optional[str] = None, playouts: int = 400, first: Optional[str] = None,
                black: Optional[str] = None, white: Optional[str] = None,
                size: Optional[tuple[int, int]] = None, n_in_row: Optional[int] = None,
                load: Optional[str] = None, seed: Optional[int] = None,
                device: str = "auto", search: SearchOptions = SearchOptions(),
                precision: str = "auto", rule: Optional[str] = None, engine_info: str = "",
                root_search: str = "gumbel", engine_info_white: Optional[str] = None) -> Match:
    """Builds the match that ``play.py``'s flags describe.

    By default a human plays Black against ``model`` (the shipped ``models/gomoku_8x8_5.npz``
    when None), searched as ``root_search`` says; ``first='ai'`` swaps them. With ``size``
    or ``n_in_row`` and no model the opponent is the shipped model for that board and
    rule (``shipped_model_for``), or pure MCTS where there is none. ``rule`` alone (no model, board
    or saved game) under which the default model was not trained plays the shipped model for
    that rule on its largest board (``shipped_model_for_rule``), or pure MCTS on 8x8 with a note
    in ``Match.notes`` where none is shipped. ``black`` / ``white``
    replace a side's player; a loaded record brings its own players unless flags
    say otherwise, and its board and rule.

    The rule is ``rule``, else the loaded game's, else that of the model that sets the
    board, else freestyle. Every model that plays must have been trained for it.

    Args:
        model: model file for the AlphaZero and policy players, or a run directory
            (its best model, else its current one; see ``modelfile.find_model``: a note in
            ``Match.notes`` names the file then).
            With ``load`` it replaces the model of the saved game's AI seats.
        playouts: search playouts for the AI players.
        first: 'human' or 'ai': who plays Black, the side that opens.
        black, white: player specs (``human``, ``az[:PATH[:N]]``, ``gumbel[:PATH[:N]]``, ``pure[:N]``,
            ``policy[:PATH]``, ``heuristic[:LEVEL]``, ``engine:COMMAND``).
        size: ``(width, height)`` for a game without a model or with a size-free one.
        n_in_row: stones in a row that win, for a game without a model.
        load: a game record to continue.
        seed: seeds the AI players.
        device: where models run.
        search: how the AlphaZero players search.
        precision: the arithmetic of the models' inference ('fp32', 'bf16' or 'auto').
        rule: a rule's name (``gomoku.game.rules.RULES``); None: as above.
        root_search: the model's search where no spec names one: 'gumbel' (Gumbel's sequential
            halving at the root, the ``gumbel`` player) or 'puct' (the ``az`` player).
        engine_info, engine_info_white: the INFO lines of engine players, "KEY VALUE;KEY VALUE"
            (``parse_engine_info``); White's where they differ from ``engine_info`` (None: the same).

    Raises:
        MissingModelError: the default model is needed but not there yet.
        GameFileError: the record cannot be loaded.
        gomoku.net.ModelFileError: a model is missing, unreadable or for another board.
        ValueError: flags that do not fit together, or a model trained for another rule
            (the message says why).
    """
    if playouts < 1:
        raise ValueError(f"--playouts must be at least 1, got {playouts}")
    if first not in (None, "human", "ai"):
        raise ValueError(f"--first must be 'human' or 'ai', got {first!r}")
    record = load_game(load) if load else None
    notes = []
    if model is not None:
        found = find_model(model)
        if found != model:
            notes.append(f"playing {found}")
        model = found
    spec_of = _spec_reader()  # each model file's spec is read once, its weights only by the player that plays it
    board_flags = size is not None or n_in_row is not None
    if model is None and board_flags and record is None:
        # The board (and rule) the flags ask for: a shipped model made for it plays, else pure MCTS.
        model = shipped.shipped_model_for(*(size or (8, 8)), n_in_row or min(5, *(size or (8, 8))), rule or FREESTYLE)
    elif (model is None and record is None and rule is not None
          and not _fits(spec_of, shipped.DEFAULT_MODEL, (8, 8, 5), rule)):
        # --rule alone: the shipped model trained for that rule, on its board; pure MCTS where none is.
        model = shipped.shipped_model_for_rule(rule)
        if model is None:
            board_flags = True
            notes.append(f"no shipped model plays {rule}: the AI is pure MCTS (--model names one)")
    model_path = model or shipped.DEFAULT_MODEL

    opponent = "pure" if board_flags and model is None else model_player_kind(root_search)
    seats = {1: "human", 2: opponent}
    if record is not None and first is None:
        seats.update(record.players)
    if first == "ai":
        seats = {1: opponent, 2: "human"}
    if black:
        seats[1] = black
    if white:
        seats[2] = white
    # An EngineError (a ValueError) names the bad part.
    info = {1: parse_engine_info(engine_info),
            2: parse_engine_info(engine_info if engine_info_white is None else engine_info_white)}
    specs = {p: PlayerSpec.parse(text, default_model=model_path, default_playouts=playouts).with_search(search)
             .with_engine_info(info[p]) for p, text in seats.items()}
    for p, spec in specs.items():
        if spec.entry.model:
            if record is not None and model is not None and seats[p] == record.players.get(p):
                specs[p] = dataclasses.replace(spec, model=model)
            else:
                specs[p] = dataclasses.replace(spec, model=shipped.project_file(spec.model))

    model_files = [s.model for s in specs.values() if s.entry.model]
    for path in model_files:
        if not os.path.isfile(path) and path == shipped.DEFAULT_MODEL and model is None:
            if not shipped.IN_CHECKOUT:
                raise MissingModelError(
                    f"no model at {shipped.DEFAULT_MODEL}: this copy of the package was installed without its "
                    f"models. Name a model file or run directory with --model PATH "
                    f"(or play pure MCTS without a model: --size 8x8 --n-in-row 5)")
            raise MissingModelError(
                f"no trained model at {shipped.DEFAULT_MODEL} yet. Train one with `python train.py`, "
                f"then play it with `python play.py --model runs/<name>` "
                f"(or play pure MCTS without a model: `python play.py --size 8x8 --n-in-row 5`)")

    if record is not None:
        if board_flags:
            raise ValueError("--size and --n-in-row cannot change a loaded game's board")
        if rule is not None and rule != record.rule:
            raise ValueError(f"--rule {rule} cannot change a loaded game's rule ({record.rule})")
        geometry = (record.width, record.height, record.n_in_row)
        game_rule = record.rule
    elif model_files or model is not None:
        # A model given by flag sets the board even when no seat plays it yet (the window offers it);
        # a size-free one sets n_in_row, and --size picks the board (default: its largest trained size).
        # The same model sets the rule unless --rule names one.
        source = model_files[0] if model_files else model
        net = spec_of(source)
        try:
            geometry = net.board_for(size, n_in_row)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
        game_rule = rule or net.rule
    else:
        width, height = size or (8, 8)
        geometry = (width, height, n_in_row or min(5, width, height))
        game_rule = rule or FREESTYLE
    # A board too small for n_in_row, an unknown rule or renju without five in a row: the ValueError says so.
    Board(*geometry, rule=game_rule)
    for path in dict.fromkeys(model_files):
        problem = spec_of(path).rule_mismatch(game_rule)
        if problem:
            hint = f" (--rule {rule}: play a model trained for {rule}, or a player without one)" if rule else ""
            raise ValueError(f"{path}: {problem}{hint}")

    board = record.replay() if record is not None else Board(*geometry, rule=game_rule)
    # The window offers the model players as choices whenever a fitting model is at hand.
    offered = model_files[0] if model_files else model_path
    fitting = model_files or (os.path.isfile(offered) and _fits(spec_of, offered, geometry, game_rule))
    choices = offered_players(offered if fitting else None, playouts, search)
    match = Match(board, specs, choices, seed=seed, device=device, precision=precision)
    match.notes = notes
    return match


def _spec_reader():
    """A reader of model specs that reads each file's spec once (``read_model_spec``)."""
    specs: dict = {}

    def spec_of(path: str):
        if path not in specs:
            specs[path] = read_model_spec(path)
        return specs[path]

    return spec_of


def _fits(spec_of, path: str, geometry: tuple[int, int, int], rule: str = FREESTYLE) -> bool:
    """Whether the model at ``path`` plays this board and was trained for ``rule``."""
    try:
        net = spec_of(path)
    except ModelFileError:
        return False
    return net.board_mismatch(*geometry) is None and net.rule_mismatch(rule) is None
