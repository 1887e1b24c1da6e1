"""Players for the window, the arena and the engine: AlphaZero, pure MCTS, the policy net alone,
the threat-aware heuristic.

Every player follows the protocol of ``mcts_player.MCTSPlayer`` (``get_action`` for a
sequential move; ``next_leaf`` / ``receive`` / ``choose`` / ``notify_move`` /
``reset`` for the lockstep runner) and has an ``evaluator`` and a ``name``.

A player is described by a short string, used by flags and menus:

* ``az`` or ``az:PATH`` or ``az:PATH:PLAYOUTS``: a model with MCTS;
* ``pure`` or ``pure:PLAYOUTS``: pure MCTS with random rollouts;
* ``policy`` or ``policy:PATH``: the policy network's most probable move, no search;
* ``heuristic`` or ``heuristic:LEVEL``: threat scoring and forced-win searches
  (``heuristic.HeuristicPlayer``), levels 0 to 4 (4 by default);
* ``engine:COMMAND``: a Gomocup engine started with the command line ``COMMAND`` (everything
  after the first ``:``), driven through the protocol (``gomoku.play.engine_player``); its
  ``INFO`` lines come from ``--engine-info``;
* ``human``: moves come from the user (``make_player`` returns None).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from gomoku.game.board import Board
from gomoku.search.heuristic import DEFAULT_LEVEL, HeuristicPlayer, check_level
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.options import SearchOptions
from gomoku.search.player import SearchResult
from gomoku.search.rollout import RolloutEvaluator
from gomoku.search.tree import Leaf

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class EngineError(ValueError):
    """An engine that cannot play: a bad command line, bad ``--engine-info``, no answer to START."""


def engine_argv(command: str) -> list[str]:
    """The argument list of an engine's command line (shell quoting rules, no shell).

    Raises:
        EngineError: an empty command or unbalanced quotes.
    """
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise EngineError(f"cannot read the engine command {command!r}: {exc}") from None
    if not argv:
        raise EngineError("engine:COMMAND needs a command line, e.g. engine:'pbrain-rapfi'")
    return argv


def parse_engine_info(text: Optional[str]) -> tuple[tuple[str, str], ...]:
    """Reads ``--engine-info "KEY VALUE;KEY VALUE"`` into ``((key, value), ...)``, keys in lower case.

    Raises:
        EngineError: a part that is not a key and one value, a key that is not a word, or a
            ``timeout_turn`` or ``rule`` that is not a whole number.
    """
    pairs = []
    for part in (text or "").split(";"):
        if not part.strip():
            continue
        words = part.split()
        if len(words) != 2 or not _KEY.fullmatch(words[0]):
            raise EngineError(f"--engine-info: cannot read {part.strip()!r}: write KEY VALUE pairs separated "
                              f"by ';', e.g. \"timeout_turn 1000;max_node 100000\"")
        key, value = words[0].lower(), words[1]
        if key in ("timeout_turn", "rule") and not (value.isascii() and value.isdigit()):
            raise EngineError(f"--engine-info: {key} must be a whole number, got {value!r}")
        pairs.append((key, value))
    return tuple(pairs)


def engine_spec(text: str, info: str = "") -> "PlayerSpec":
    """The spec of ``engine:COMMAND`` with the ``--engine-info`` text ``info``.

    Raises:
        EngineError: an empty command, unbalanced quotes or unreadable info.
    """
    return PlayerSpec.parse(text).with_engine_info(parse_engine_info(info))


def info_text(info: tuple[tuple[str, str], ...]) -> str:
    """``info`` written back as ``--engine-info`` reads it."""
    return ";".join(f"{key} {value}" for key, value in info)


def engine_name(command: str, info: tuple = ()) -> str:
    """A short label: the program's file name and the info's own keys, e.g. ``pbrain-rapfi (max_node 1000)``."""
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    program = argv[0].rsplit("/", 1)[-1] if argv else "engine"
    if program.startswith("python") and "-m" in argv[:-1]:
        program = argv[argv.index("-m") + 1]
    elif program.startswith("python") and len(argv) > 1:
        program = argv[1].rsplit("/", 1)[-1]  # the script
    shown_info = [f"{k} {v}" for k, v in info if k != "rule"]
    return f"engine {program}" + (f" ({', '.join(shown_info)})" if shown_info else "")


PLAYER_KINDS = ("human", "az", "pure", "policy", "heuristic", "engine")
ENGINES = ("engines",)
"""the key of ``make_player``'s cache under which the engine connections are kept"""


class PolicyPlayer:
    """Plays the legal move the policy network rates highest, without search."""

    n_playout = 1
    playouts_run = 0  # no search

    def __init__(self, evaluator, name: str = "policy net"):
        self.evaluator = evaluator
        self.name = name
        self._priors: Optional[np.ndarray] = None

    @property
    def progress(self) -> float:
        return 0.0 if self._priors is None else 1.0

    def next_leaf(self, board: Board) -> Optional[Leaf]:
        return None if self._priors is not None else Leaf(None, [], None)

    def receive(self, leaf: Leaf, board: Board, priors: np.ndarray, value: float) -> None:
        self._priors = np.asarray(priors, dtype=np.float64)

    def choose(self, board: Board) -> SearchResult:
        legal = np.asarray(board.legal_moves())
        p = self._priors[legal]
        pi = np.zeros(board.size)
        pi[legal] = p / p.sum() if p.sum() > 0 else 1.0 / len(legal)
        self._priors = None
        return SearchResult(int(legal[np.argmax(p)]), pi)

    def notify_move(self, move: int) -> None:
        self._priors = None

    def reset(self) -> None:
        self._priors = None

    def get_action(self, board: Board, return_probs: bool = False, stop=None):
        """The policy's favourite legal move (one net call: ``stop`` has nothing to end)."""
        if board.game_over:
            raise ValueError("the game is over: there is no move to choose")
        priors, _ = self.evaluator.evaluate([board])
        self._priors = np.asarray(priors[0], dtype=np.float64)
        result = self.choose(board)
        return (result.move, result.pi) if return_probs else result.move

    def __str__(self) -> str:
        return self.name


@dataclass
class PlayerSpec:
    """A parsed player description."""

    kind: str
    model: Optional[str] = None
    playouts: Optional[int] = None
    level: Optional[int] = None  # the heuristic's strength
    # Search options of an 'az' player; not part of the text form, set by flags.
    search: SearchOptions = SearchOptions()
    # The inference precision of a model player ('fp32', 'bf16', 'auto'); None: the caller's.
    # Not part of the text form either: set by flags, e.g. to play one net in two precisions.
    precision: Optional[str] = None
    command: Optional[str] = None  # an engine's command line
    # An engine's INFO lines, ((key, value), ...): not part of the text form, set by --engine-info.
    engine_info: tuple = ()

    @classmethod
    def parse(cls, text: str, default_model: Optional[str] = None,
              default_playouts: int = 400) -> "PlayerSpec":
        """Reads ``kind[:model][:playouts]`` (``pure:N`` takes only playouts, ``heuristic:L`` a level).

        Raises:
            ValueError: an unknown kind, a playout count that is not a positive
                integer, or an unknown heuristic level.
        """
        parts = str(text).strip().split(":")
        kind = parts[0].lower()
        if kind == "engine":
            command = str(text).strip()[len("engine:"):].strip()
            engine_argv(command)  # raises for an empty command or unbalanced quotes
            return cls(kind, command=command)
        if kind not in PLAYER_KINDS:
            raise ValueError(f"unknown player {text!r}: use one of {', '.join(PLAYER_KINDS)}")
        rest = parts[1:]
        if kind == "pure":
            if len(rest) > 1:
                raise ValueError(f"pure MCTS takes only a playout count: pure:N, got {text!r}")
            return cls(kind, None, _playouts(rest[0], text) if rest else default_playouts)
        if kind == "heuristic":
            if len(rest) > 1:
                raise ValueError(f"the heuristic takes only a level: heuristic:LEVEL, got {text!r}")
            return cls(kind, level=_level(rest[0], text) if rest else DEFAULT_LEVEL)
        if kind == "human":
            if rest:
                raise ValueError(f"'human' takes no options, got {text!r}")
            return cls(kind)
        model = rest[0] if rest and rest[0] else default_model
        playouts = None
        if kind == "az":
            playouts = _playouts(rest[1], text) if len(rest) > 1 else default_playouts
        if len(rest) > (2 if kind == "az" else 1):
            raise ValueError(f"too many ':' parts in {text!r}")
        return cls(kind, model, playouts)

    def with_engine_info(self, info: tuple) -> "PlayerSpec":
        """This spec with ``info`` (``engine_player.parse_engine_info``) if it is an engine."""
        return replace(self, engine_info=tuple(info)) if self.kind == "engine" else self

    def with_search(self, search: SearchOptions) -> "PlayerSpec":
        """This spec with ``search`` if it is an az player; the others have no PUCT search."""
        return replace(self, search=search) if self.kind == "az" else self

    def __str__(self) -> str:
        if self.kind == "pure":
            return f"pure MCTS {self.playouts}"
        if self.kind == "az":
            options = self.search.words() + ([self.precision] if self.precision else [])
            return f"AlphaZero {self.playouts}" + (f" ({', '.join(options)})" if options else "")
        if self.kind == "policy":
            return "policy net" + (f" ({self.precision})" if self.precision else "")
        if self.kind == "heuristic":
            return f"heuristic {self.level}"
        if self.kind == "engine":
            return engine_name(self.command, self.engine_info)
        return "human"


def _level(text: str, whole: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = text
    check_level(value, f"the heuristic level in {whole!r}")
    return value


def _playouts(text: str, whole: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"the playout count in {whole!r} must be a positive integer")
    return value


def make_player(spec: PlayerSpec, board: Board, c_puct: float = 5.0, seed: Optional[int] = None,
                device: str = "auto", models: Optional[dict] = None, precision: str = "fp32"):
    """Builds the player a spec describes for ``board`` (None for a human).

    Args:
        spec: what to build.
        board: the game's board; a model must be made for its size.
        c_puct: exploration constant of the searches.
        seed: seeds the player's randomness.
        device: where a model runs.
        precision: the arithmetic of a model's inference ('fp32', 'bf16' or 'auto').
        models: a cache of loaded models by path, shared between players.

    Raises:
        gomoku.net.ModelFileError: the model is missing or made for another board.
    """
    if spec.kind == "human":
        return None
    if spec.kind == "engine":
        # The play layer drives engines; the games of a match share one process per command.
        from gomoku.play.engine_player import EnginePlayer, connection_for

        engines = {} if models is None else models.setdefault(ENGINES, {})
        return EnginePlayer(connection_for(spec.command, spec.engine_info, board, engines), str(spec))
    if spec.kind == "heuristic":
        return HeuristicPlayer(spec.level, seed=seed, name=str(spec))
    if spec.kind == "pure":
        return MCTSPlayer(RolloutEvaluator(seed), c_puct=c_puct, n_playout=spec.playouts,
                          seed=seed, name=str(spec))
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec
    from gomoku.search.evaluator import NetEvaluator

    if spec.model is None:
        raise ValueError(f"the {spec.kind} player needs a model file")
    models = {} if models is None else models
    # One evaluator per file and precision: two seats with the same file share it.
    key = spec.model if spec.precision is None else f"{spec.model} ({spec.precision})"
    if key not in models:
        expect = NetSpec(board.width, board.height, board.n_in_row)
        models[key] = NetEvaluator(PolicyValueModel.load(spec.model, device=device, expect=expect,
                                                         precision=spec.precision or precision))
    evaluator = models[key]
    if spec.kind == "policy":
        return PolicyPlayer(evaluator, name=str(spec))
    return MCTSPlayer(evaluator, c_puct=c_puct, n_playout=spec.playouts, seed=seed, name=str(spec),
                      **spec.search.kwargs())


def spec_text(spec: PlayerSpec) -> str:
    """The spec written back in the form ``PlayerSpec.parse`` reads (``az:PATH:400``)."""
    if spec.kind == "human":
        return "human"
    if spec.kind == "pure":
        return f"pure:{spec.playouts}"
    if spec.kind == "policy":
        return f"policy:{spec.model}"
    if spec.kind == "heuristic":
        return f"heuristic:{spec.level}"
    if spec.kind == "engine":
        return f"engine:{spec.command}"
    return f"az:{spec.model}:{spec.playouts}"


def close_engines(models: Optional[dict]) -> None:
    """Ends the engine processes ``make_player`` started into the cache ``models``."""
    engines = (models or {}).get(ENGINES)
    if engines:
        from gomoku.play.engine_player import close_engines as close

        close(engines)
