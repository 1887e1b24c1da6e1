"""Player specs and this layer's kinds of player: the window, the terminal, the arena, the
trainer's evaluation and the engine name a player by a short string (flags, menus), which
``PlayerSpec.parse`` reads through the kind's entry in the registry (``player_registry``), and
``make_player`` builds the player (``player_protocol.Player``) a spec describes.

This module registers:

* ``az`` or ``az:PATH`` or ``az:PATH:PLAYOUTS``: a model with MCTS;
* ``gumbel`` or ``gumbel:PATH`` or ``gumbel:PATH:PLAYOUTS``: a model with Gumbel search;
* ``pure`` or ``pure:PLAYOUTS``: pure MCTS with random rollouts;
* ``policy`` or ``policy:PATH``: the policy network's most probable move, no search;
* ``heuristic`` or ``heuristic:LEVEL``: threat scoring and forced-win searches
  (``heuristic.HeuristicPlayer``), levels 0 to 4 (4 by default);
* ``human``: moves come from the user (``make_player`` returns None).

The play layer registers ``engine:COMMAND`` (``gomoku.play.engine_player``): a Gomocup engine
started with the command line ``COMMAND``, its ``INFO`` lines from ``--engine-info``. The
strings an engine's spec holds are read here (``engine_argv``, ``parse_engine_info``), so that a
lower layer can check its settings. A new kind is one ``register`` call with its entry.
"""

from __future__ import annotations

import importlib
import re
import shlex
from dataclasses import dataclass, replace
from typing import Optional

from gomoku.game.board import Board
from gomoku.search.gumbel import GumbelPlayer
from gomoku.search.heuristic import DEFAULT_LEVEL, HeuristicPlayer, check_level
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.options import SearchOptions
from gomoku.search.player_registry import Build, PlayerKind, player_kind, player_kinds, register
from gomoku.search.policy_player import PolicyPlayer
from gomoku.search.rollout import RolloutEvaluator

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


def info_text(info: tuple[tuple[str, str], ...]) -> str:
    """``info`` written back as ``--engine-info`` reads it."""
    return ";".join(f"{key} {value}" for key, value in info)


def engine_program(command: str) -> str:
    """The program an engine's command line runs, without its folder: ``pbrain-rapfi``; for
    ``python -m MODULE`` the module, for ``python SCRIPT`` the script's file name."""
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    program = argv[0].rsplit("/", 1)[-1] if argv else "engine"
    if program.startswith("python") and "-m" in argv[:-1]:
        program = argv[argv.index("-m") + 1]
    elif program.startswith("python") and len(argv) > 1:
        program = argv[1].rsplit("/", 1)[-1]
    return program


def engine_name(command: str, info: tuple = ()) -> str:
    """A short label: the program's file name and the info's own keys, e.g. ``pbrain-rapfi (max_node 1000)``."""
    shown_info = [f"{k} {v}" for k, v in info if k != "rule"]
    return f"engine {engine_program(command)}" + (f" ({', '.join(shown_info)})" if shown_info else "")


@dataclass
class PlayerSpec:
    """A parsed player description; its ``kind`` names its entry in the registry (``player_registry``)."""

    kind: str
    model: Optional[str] = None
    playouts: Optional[int] = None
    level: Optional[int] = None  # the heuristic's strength
    # Search options of a searching player; not part of the text form, set by flags.
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
        """Reads ``kind[:...]``, what follows the kind as its entry reads it (``az:PATH:N``, ``pure:N``...).

        Raises:
            ValueError: an unknown kind, or options the kind does not read (the message says why).
        """
        whole = str(text).strip()
        name, colon, rest = whole.partition(":")
        try:
            kind = player_kind(name.lower())
        except ValueError:
            raise ValueError(f"unknown player {text!r}: use one of {', '.join(k.name for k in player_kinds())}") from None
        return kind.parse(rest if colon else None, whole, default_model, default_playouts)

    @property
    def entry(self) -> PlayerKind:
        """The registry's entry of this spec's kind."""
        return player_kind(self.kind)

    def with_engine_info(self, info: tuple) -> "PlayerSpec":
        """This spec with ``info`` (``parse_engine_info``) if its kind takes INFO lines."""
        return replace(self, engine_info=tuple(info)) if self.entry.info else self

    def with_search(self, search: SearchOptions) -> "PlayerSpec":
        """This spec with ``search`` if its kind searches with them; the others have no PUCT search."""
        return replace(self, search=search) if self.entry.search else self

    def __str__(self) -> str:
        return self.entry.describe(self)

    def __reduce__(self):
        # Unpickled in another process, the spec first imports the module that registered its kind.
        known = {k.name: k.module for k in player_kinds()}
        return _restore_spec, (known.get(self.kind, ""), dict(self.__dict__))


def _restore_spec(module: str, fields: dict) -> PlayerSpec:
    if module:
        importlib.import_module(module)
    return PlayerSpec(**fields)


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
        models: what the players of one match share (loaded models, engine processes), by key;
            ``close_players`` ends what it holds.

    Raises:
        gomoku.net.ModelFileError: the model is missing or made for another board.
    """
    return spec.entry.build(spec, Build(board, c_puct, seed, device, precision, models))


def spec_text(spec: PlayerSpec) -> str:
    """The spec written back in the form ``PlayerSpec.parse`` reads (``az:PATH:400``)."""
    return spec.entry.text(spec)


def check_player(spec: PlayerSpec, width: int, height: int, rule: str) -> None:
    """Tries the player once where its kind can (an engine starts), so that a bad one fails now.

    Raises:
        ValueError: the player cannot play (an ``EngineError`` for an engine).
    """
    if spec.entry.check is not None:
        spec.entry.check(spec, width, height, rule)


def close_players(models: Optional[dict]) -> None:
    """Ends what ``make_player`` left in the cache ``models`` (engine processes)."""
    for kind in player_kinds():
        if kind.close is not None and models:
            kind.close(models)


def model_player_kind(root_search: str) -> str:
    """The kind of player that searches a model with ``root_search`` (``recipe.ROOT_SEARCHES``): the
    ``gumbel`` player for Gumbel's sequential halving, the ``az`` player for PUCT."""
    return "gumbel" if root_search == "gumbel" else "az"


def offered_players(model: Optional[str], playouts: int, search: SearchOptions) -> list[PlayerSpec]:
    """The specs the window offers a seat, one per kind that offers one, in the registry's order;
    ``model`` is a model file that fits the board, or None."""
    offers = (kind.offer(model, playouts, search) for kind in player_kinds() if kind.offer is not None)
    return [spec for spec in offers if spec is not None]


# ------------------------------------------------------------ the kinds of this layer
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


def _parse_human(rest, whole, default_model, default_playouts) -> PlayerSpec:
    if rest is not None:
        raise ValueError(f"'human' takes no options, got {whole!r}")
    return PlayerSpec("human")


def _parse_pure(rest, whole, default_model, default_playouts) -> PlayerSpec:
    if rest is not None and ":" in rest:
        raise ValueError(f"pure MCTS takes only a playout count: pure:N, got {whole!r}")
    return PlayerSpec("pure", None, _playouts(rest, whole) if rest is not None else default_playouts)


def _parse_heuristic(rest, whole, default_model, default_playouts) -> PlayerSpec:
    if rest is not None and ":" in rest:
        raise ValueError(f"the heuristic takes only a level: heuristic:LEVEL, got {whole!r}")
    return PlayerSpec("heuristic", level=_level(rest, whole) if rest is not None else DEFAULT_LEVEL)


def _parse_model_player(kind: str, most: int):
    def parse(rest, whole, default_model, default_playouts) -> PlayerSpec:
        parts = [] if rest is None else rest.split(":")
        if len(parts) > most:
            raise ValueError(f"too many ':' parts in {whole!r}")
        model = parts[0] if parts and parts[0] else default_model
        playouts = None
        if most > 1:
            playouts = _playouts(parts[1], whole) if len(parts) > 1 else default_playouts
        return PlayerSpec(kind, model, playouts)
    return parse


def _describe_searcher(label: str, puct: bool = True):
    """``describe`` of a kind that searches with the model's net: the label, the playouts, the
    search options it takes (first-play urgency only for PUCT) and the precision."""
    def describe(spec: PlayerSpec) -> str:
        search = spec.search if puct else spec.search.for_gumbel()
        options = search.words() + ([spec.precision] if spec.precision else [])
        return f"{label} {spec.playouts}" + (f" ({', '.join(options)})" if options else "")
    return describe


def _evaluator(spec: PlayerSpec, build: Build):
    """The net evaluator of the spec's model, loaded once per file and precision into the cache."""
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec
    from gomoku.search.evaluator import NetEvaluator

    if spec.model is None:
        raise ValueError(f"the {spec.kind} player needs a model file")
    models = {} if build.cache is None else build.cache
    # One evaluator per file and precision: two seats with the same file share it.
    key = spec.model if spec.precision is None else f"{spec.model} ({spec.precision})"
    if key not in models:
        board = build.board
        expect = NetSpec(board.width, board.height, board.n_in_row)
        models[key] = NetEvaluator(PolicyValueModel.load(spec.model, device=build.device, expect=expect,
                                                         precision=spec.precision or build.precision))
    return models[key]


register(PlayerKind(
    "human", "human", "moves come from the user", _parse_human, lambda spec: "human", lambda spec: "human",
    lambda spec, build: None, ai=False, offer=lambda model, playouts, search: PlayerSpec("human")), __name__)
register(PlayerKind(
    "az", "az[:MODEL[:N]]", "AlphaZero: the model's net with N playouts of MCTS, 400 by default",
    _parse_model_player("az", 2), lambda spec: f"az:{spec.model}:{spec.playouts}", _describe_searcher("AlphaZero"),
    lambda spec, build: MCTSPlayer(_evaluator(spec, build), c_puct=build.c_puct, n_playout=spec.playouts,
                                   seed=build.seed, name=str(spec), **spec.search.kwargs()),
    model=True, search=True,
    offer=lambda model, playouts, search: PlayerSpec("az", model, playouts, search=search) if model else None),
    __name__)
register(PlayerKind(
    "gumbel", "gumbel[:MODEL[:N]]", "the model's net with N simulations of Gumbel search (sequential halving "
    "at the root, the self-play recipe's search), 400 by default", _parse_model_player("gumbel", 2),
    lambda spec: f"gumbel:{spec.model}:{spec.playouts}", _describe_searcher("Gumbel", puct=False),
    lambda spec, build: GumbelPlayer(_evaluator(spec, build), n_playout=spec.playouts, seed=build.seed,
                                     name=str(spec), **spec.search.gumbel_kwargs()),
    model=True, search=True,
    offer=lambda model, playouts, search: PlayerSpec("gumbel", model, playouts, search=search) if model else None),
    __name__)
register(PlayerKind(
    "pure", "pure[:N]", "pure MCTS with random rollouts", _parse_pure,
    lambda spec: f"pure:{spec.playouts}", lambda spec: f"pure MCTS {spec.playouts}",
    lambda spec, build: MCTSPlayer(RolloutEvaluator(build.seed), c_puct=build.c_puct, n_playout=spec.playouts,
                                   seed=build.seed, name=str(spec)),
    offer=lambda model, playouts, search: PlayerSpec("pure", playouts=playouts)), __name__)
register(PlayerKind(
    "policy", "policy[:MODEL]", "the policy net's favourite move, no search", _parse_model_player("policy", 1),
    lambda spec: f"policy:{spec.model}", lambda spec: "policy net" + (f" ({spec.precision})" if spec.precision else ""),
    lambda spec, build: PolicyPlayer(_evaluator(spec, build), name=str(spec)), model=True,
    offer=lambda model, playouts, search: PlayerSpec("policy", model) if model else None), __name__)
register(PlayerKind(
    "heuristic", "heuristic[:LEVEL]", "threat scoring with forced-win searches, levels 0 to 4, 4 by default",
    _parse_heuristic, lambda spec: f"heuristic:{spec.level}", lambda spec: f"heuristic {spec.level}",
    lambda spec, build: HeuristicPlayer(spec.level, seed=build.seed, name=str(spec)),
    offer=lambda model, playouts, search: PlayerSpec("heuristic", level=DEFAULT_LEVEL)), __name__)
