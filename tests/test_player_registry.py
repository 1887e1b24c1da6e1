"""The player registry: each kind is one entry, read alike by the window, the arena, the trainer's
evaluation and the engine; a kind registered by an upper layer travels to other processes."""

import os
import pickle
import subprocess
import sys
from dataclasses import replace

import pytest

import gomoku.play.engine_player  # noqa: F401  (registers engine:COMMAND)
from gomoku.game.board import Board
from gomoku.play.arena.settings import ArenaError, parse_player
from gomoku.play.engine.cli import engine_options
from gomoku.play.match import Match
from gomoku.search import player_registry
from gomoku.search.options import SearchOptions
from gomoku.search.player_registry import PlayerKind, player_forms, player_kind, player_kinds, register
from gomoku.search.player_specs import PlayerSpec, make_player, offered_players, spec_text
from gomoku.train.config import TrainConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class FirstCell:
    """A player for the test kind: the first legal move."""

    name = "first cell"

    def get_action(self, board, return_probs=False, stop=None):
        return board.legal_moves()[0]

    def notify_move(self, move):
        pass

    def reset(self):
        pass


FIRST = PlayerKind(
    "first", "first", "the first empty cell",
    lambda rest, whole, model, playouts: PlayerSpec("first"), lambda spec: "first", lambda spec: "first cell",
    lambda spec, build: FirstCell(), offer=lambda model, playouts, search: PlayerSpec("first"))


@pytest.fixture
def first(monkeypatch):
    """Registers the kind ``first`` for one test: a contributor's new kind, one entry."""
    monkeypatch.setattr(player_registry, "_KINDS", dict(player_registry._KINDS))
    return register(FIRST, __name__)


def test_every_kind_reads_back_what_it_writes(first):
    for text in ("human", "az:m.npz:30", "gumbel:m.npz:16", "pure:7", "policy:m.npz", "heuristic:2", "engine:pbrain-x --y 1", "first"):
        spec = PlayerSpec.parse(text)
        assert spec_text(spec) == text and PlayerSpec.parse(spec_text(spec)) == spec
        assert spec.entry is player_kind(spec.kind)
    assert [kind.name for kind in player_kinds()][:7] == ["human", "az", "gumbel", "pure", "policy", "heuristic", "engine"]
    with pytest.raises(ValueError, match="unknown player 'robot'.*first"):
        PlayerSpec.parse("robot")


def test_a_kind_is_registered_by_one_module_only(first):
    with pytest.raises(ValueError, match="registered twice"):
        register(PlayerKind("pure", "pure", "", None, None, None, None), "some.other.module")
    assert register(FIRST, __name__).name == "first"  # the same module again: no harm (a reload)


def test_a_new_kind_reaches_the_window_the_arena_and_the_trainer_as_one_entry(first):
    board = Board(6, 6, 4)
    match = Match(board, {1: PlayerSpec.parse("first"), 2: PlayerSpec("human")})
    assert "first" in [spec.kind for spec in match.choices]  # the window cycles through it
    match.play(match.ai_to_move.get_action(board))
    assert board.history == [0]
    assert isinstance(make_player(PlayerSpec.parse("first"), board), FirstCell)
    assert parse_player("first").kind == "first"  # the arena plays it
    assert TrainConfig(eval_opponent="first").eval_player() == PlayerSpec("first")  # and the trainer
    assert "first (the first empty cell)" in player_forms()


def test_what_the_window_offers_comes_from_the_kinds():
    search = SearchOptions(fpu=0.25)
    offered = offered_players("m.npz", 50, search)
    assert [s.kind for s in offered][:6] == ["human", "az", "gumbel", "pure", "policy", "heuristic"]
    assert offered[1] == PlayerSpec("az", "m.npz", 50, search=search)
    assert offered[2] == PlayerSpec("gumbel", "m.npz", 50, search=search) and offered[3].playouts == 50
    assert [s.kind for s in offered_players(None, 50, search)][:3] == ["human", "pure", "heuristic"]


def test_the_arena_and_the_trainer_refuse_what_cannot_play():
    with pytest.raises(ArenaError, match="AI players only"):
        parse_player("human")
    with pytest.raises(ArenaError, match=r"needs a model file: az\[:MODEL\[:N\]\]"):
        parse_player("az")
    for text in ("human", "robot", "policy"):
        with pytest.raises(ValueError, match="eval_opponent must be"):
            TrainConfig(eval_opponent=text).validate()
    spec = TrainConfig(eval_opponent="engine:pbrain-x", engine_info="max_node 10").eval_player()
    assert spec.command == "pbrain-x" and spec.engine_info == (("max_node", "10"),)


def test_a_spec_of_an_upper_layers_kind_unpickles_in_a_process_that_never_imported_it():
    spec = PlayerSpec.parse("engine:pbrain-x").with_engine_info((("max_node", "10"),))
    code = ("import pickle, sys\n"
            "spec = pickle.loads(sys.stdin.buffer.read())\n"
            "from gomoku.search.player_specs import spec_text\n"
            "print(spec_text(spec), str(spec))\n")
    proc = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(spec), capture_output=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().strip() == "engine:pbrain-x engine pbrain-x (max_node 10)"


def test_the_engine_flags_are_specs_of_the_registry():
    same = ((["--heuristic", "2"], ["--player", "heuristic:2"]), (["--pure"], ["--player", "pure"]),
            (["--model", "m.npz"], ["--player", "gumbel:m.npz"]),
            (["--model", "m.npz", "--root-search", "puct"], ["--player", "az:m.npz"]))
    for flags, spec in same:
        assert engine_options(flags) == engine_options(spec)
    assert engine_options(["--player", "az:m.npz:50"]).max_playouts == 50
    assert engine_options([]).shipped
    for bad in (["--player", "policy:m.npz"], ["--player", "robot"], ["--player", "az"],
                ["--pure", "--player", "pure"]):
        with pytest.raises(SystemExit):
            engine_options(bad)


def test_the_test_kind_is_gone_after_its_test():
    with pytest.raises(ValueError, match="unknown player"):
        PlayerSpec.parse("first")


def test_the_gumbel_kind_plays_the_models_net_with_its_search_options():
    from gomoku.search.gumbel import GumbelPlayer

    spec = PlayerSpec.parse("gumbel:models/gomoku_6x6_4.npz:24")
    sharp = replace(spec, search=SearchOptions(fpu=0.25, solve=True, win_check=True))
    player = make_player(sharp, Board(6, 6, 4), seed=3)
    assert isinstance(player, GumbelPlayer) and player.n_playout == 24 and player.tree.solve
    assert sharp.entry.describe(sharp) == "Gumbel 24 (solver)"  # first-play urgency is PUCT's alone
    board = Board(6, 6, 4)
    move = player.get_action(board)
    assert board.cells[move] == 0 and player.tree.root.child_N.sum() == 24
