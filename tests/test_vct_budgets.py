"""The root VCT's depth and budgets as training flags (--vct-depth, --vct-nodes, --defence-vct-nodes).

A deeper and larger root VCT finds, in a position from a lost game of the shipped model, a VCT
that the default misses, on the reference ``ThreatSolver`` and the compiled core alike; in
self-play the full searches of playout cap randomisation get the deeper budgets and the fast
ones the defaults, on both backends, with the same games; bad values get a clear error.
"""

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.search.core import core_enabled
from gomoku.search.tree_threats import ThreatSolver, VctBudgets
from gomoku.train.config import TrainConfig, preset

# Game 1 of docs/ladder/freestyle/az800_r5k.jsonl, to White's losing h8: Black, to move, has a
# VCT of 4 threes that takes 5,752 nodes to find; 3 threes or 1,000 nodes find none.
LOST = "i7 i6 k6 k7 j5 l7 j7 j6 i5 l5 g5 h5 h6 f4 g7 f8 f6 l6 l8 j8 i9 h8".split()
DEEP = VctBudgets(4, 8000, 100)

core_only = pytest.mark.skipif(not core_enabled(), reason="the compiled core is off (no numba, or GOMOKU_CORE=off)")


def _board(labels=LOST):
    board = Board(15, 15, 5)
    cells = {board.move_to_label(m): m for m in range(board.size)}
    for label in labels:
        board.do_move(cells[label])
    return board


def _core_root(board, budgets):
    """``root_threats.root`` on ``board`` with ``budgets``: ``(kind, move)``."""
    from gomoku.game import rules
    from gomoku.search.core import cached_vcf, root_threats, vcf, vct
    from gomoku.game.line_board import line_weights

    geo = vcf.geometry(board.width, board.height, board.n_in_row)
    cells = np.array([board.cells], np.int8)
    exact = np.array(rules.exact_players(board.rule), np.bool_)
    ws = vcf.workspace(board.size, len(geo[0]))
    cache = cached_vcf.install_cache(ThreatSolver(), board, geo[4])
    vs, keep, line = vct.vct_workspace(board.size), np.zeros(board.size, np.bool_), np.zeros(64, np.int64)
    kind, move, _ = root_threats.root(cells, 0, board.current_player, budgets.nodes, budgets.defence_nodes,
                                      budgets.depth, cache.table, 5, exact, False, 15, 15, *geo, line_weights(5), ws,
                                      vs, keep, line)
    return kind, move


@pytest.mark.timeout(300)
def test_a_deeper_root_vct_finds_what_the_default_misses_on_both_backends():
    board = _board()
    assert ThreatSolver().root(board).hint is None
    deep = ThreatSolver()
    deep.budgets = DEEP
    hint = deep.root(board).hint
    assert board.move_to_label(hint) == "g8"
    if core_enabled():
        from gomoku.search.core import root_threats

        assert _core_root(board, VctBudgets())[0] != root_threats.HINT
        assert _core_root(board, DEEP) == (root_threats.HINT, hint)


@pytest.mark.parametrize("kind", ["puct", "gumbel"])
def test_full_searches_get_the_deeper_budgets_and_fast_ones_the_defaults(kind):
    from gomoku.search.recipe import SelfPlayRecipe

    recipe = SelfPlayRecipe(root_search=kind, threats=True, p_full=0.5, n_fast=4, n_playout=8,
                            vct_depth=DEEP.depth, vct_nodes=DEEP.nodes, defence_vct_nodes=DEEP.defence_nodes)
    player = recipe.make_player(evaluator=None, seed=3)
    solver = player.search_tree.threat_solver
    seen = set()
    for _ in range(20):
        player.prepare_root()
        full = player.budget() == 8
        assert solver.budgets == (DEEP if full else VctBudgets())
        seen.add(full)
        player._end_move()
    assert seen == {True, False}
    # the defaults draw nothing early: the player's random stream is as it always was
    assert SelfPlayRecipe(root_search=kind, threats=True, p_full=0.5).make_player(None, 0).full_vct is None


def _games(compiled, kind, budgets_seen, monkeypatch):
    """Three 9x9 self-play games with playout cap randomisation and the deep budgets; records
    ``(full search, budgets)`` at every root threat search."""
    import gomoku.search.core.games as games
    from gomoku.search.evaluator import NetEvaluator
    from gomoku.search.lockstep import run_games
    from gomoku.search.recipe import SelfPlayRecipe
    from tests.helpers import FakeNet

    evaluator = NetEvaluator(FakeNet(81, seed=5), cache_size=0)
    recipe = SelfPlayRecipe(root_search=kind, n_playout=24, p_full=0.5, n_fast=6, threats=True,
                            vct_depth=DEEP.depth, vct_nodes=DEEP.nodes, defence_vct_nodes=DEEP.defence_nodes)
    players = {}

    def spy(original):
        def spied(*args):
            solver = args[-1] if compiled else args[0]
            player = next(p for p in players.values() if p.search_tree.threat_solver is solver)
            budgets_seen.append((player._full, solver.budgets))
            return original(*args)
        return spied

    if compiled:
        monkeypatch.setattr(games, "analyse_root", spy(games.analyse_root))
    else:
        monkeypatch.setattr(ThreatSolver, "root", spy(ThreatSolver.root))

    def new_game(i):
        player = players[i] = recipe.make_player(evaluator, seed=i)
        return Board(9, 9, 5, start_player=1 + i % 2), {1: player, 2: player}

    return run_games(3, new_game, 3, record=True, compiled=compiled)


@core_only
@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", ["puct", "gumbel"])
def test_self_play_gives_full_searches_the_deeper_budgets_on_both_backends_with_the_same_games(kind, monkeypatch):
    from tests.helpers import GUMBEL_PI_TOLERANCE, assert_same_games

    results = {}
    for compiled in (False, True):
        seen = []
        results[compiled] = _games(compiled, kind, seen, monkeypatch)
        monkeypatch.undo()
        assert {full for full, _ in seen} == {True, False}
        assert all(budgets == (DEEP if full else VctBudgets()) for full, budgets in seen)
    assert_same_games(results[False], results[True], GUMBEL_PI_TOLERANCE if kind == "gumbel" else 0.0)


def test_the_flags_are_checked_and_old_configs_keep_the_defaults():
    for bad, words in ((dict(vct_depth=0), "vct_depth must be 1 to"), (dict(vct_depth=9), "vct_depth must be 1 to"),
                       (dict(vct_nodes=50), "defence_vct_nodes at most vct_nodes"),
                       (dict(defence_vct_nodes=0), "must be at least 1"),
                       (dict(vct_nodes=2.5), "vct_nodes must be a whole number")):
        with pytest.raises(ValueError, match=words):
            preset("15x15x5", **bad).validate()
    with pytest.raises(ValueError, match="need threats on"):
        TrainConfig(vct_depth=4).validate()
    preset("15x15x5", vct_depth=4, vct_nodes=5000, defence_vct_nodes=5000).validate()
    old = TrainConfig.from_dict({k: v for k, v in preset("15x15x5").to_dict().items()
                                 if k not in ("vct_depth", "vct_nodes", "defence_vct_nodes")})
    assert VctBudgets(old.vct_depth, old.vct_nodes, old.defence_vct_nodes) == VctBudgets() == ThreatSolver().budgets


def test_turning_points_reads_the_root_vct_of_a_search():
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
    import turning_points as tp

    assert tp.parse_searches("gumbel:400,gumbel:400:4/2000,puct:800:4/5000/5000") == [
        ("gumbel", 400, None), ("gumbel", 400, VctBudgets(4, 2000, 100)), ("puct", 800, VctBudgets(4, 5000, 5000))]
    for bad in ("gumbel:400:4", "gumbel:400:0/100", "gumbel:400:4/x", "gumbel:400:4/50/100"):
        with pytest.raises(ValueError, match="bad search"):
            tp.parse_searches(bad)
