"""The compiled search core against the reference Python search: the same seeded games.

Both play the same games in lockstep from the same seeds with a deterministic stand-in
for the net (each position's output depends on that position alone, never on the batch),
so any difference is the search's. PUCT must match to the bit (moves and policy targets);
Gumbel must give the same moves, with targets within a tolerance (its ``exp`` and ``log``
are numba's, not NumPy's).
"""

import numpy as np

from gomoku.search.recipe import SelfPlayRecipe
import pytest

from gomoku.game import rules
from gomoku.game.board import Board
from gomoku.search.core import boards, core_enabled, sums
from gomoku.search.core.games import supported
from gomoku.search.evaluator import NetEvaluator
from gomoku.search.gumbel import GumbelPlayer
from gomoku.search.lockstep import Lockstep, RunStats, run_games
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.rollout import RolloutEvaluator
from tests.helpers import GUMBEL_PI_TOLERANCE, FakeNet, assert_same_games

pytestmark = pytest.mark.skipif(not core_enabled(), reason="the compiled core is off (no numba, or GOMOKU_CORE=off)")



def _games(compiled, width, n_in_row, playouts, n_games, parallel, kind="puct", rule="freestyle", pools=None,
           **options):
    evaluator = NetEvaluator(FakeNet(width * width), cache_size=0)

    def new_game(i):
        if kind == "gumbel":
            player = GumbelPlayer(evaluator, n_playout=playouts, seed=i, **options)
        else:
            player = MCTSPlayer(evaluator, n_playout=playouts, self_play=True, seed=i, **options)
        board = Board(width, width, n_in_row, start_player=1 if rule == "renju" else 1 + i % 2, rule=rule)
        return board, {1: player, 2: player}

    if pools is None:
        return run_games(n_games, new_game, parallel, record=True, compiled=compiled)
    lockstep = Lockstep(new_game, record=True, compiled=compiled)
    lockstep.core._pools = pools
    stats, finished = RunStats(), []
    while True:
        lockstep.fill(parallel, limit=n_games)
        if not lockstep.slots:
            return sorted(finished, key=lambda g: g.index), stats
        finished.extend(lockstep.step(stats))


@pytest.mark.parametrize("options", [
    {},
    {"fpu": 0.25, "solve": True},
    {"win_check": True, "forced_k": 2.0, "p_full": 0.25, "n_fast": 12},
    {"reuse_tree": False, "fpu": 0.0},
], ids=["plain", "sharp", "cap-forced", "no-reuse"])
def test_puct_games_are_the_same_to_the_bit_on_8x8(options):
    args = (8, 5, 48, 6, 3)
    assert_same_games(_games(False, *args, **options), _games(True, *args, **options))


def test_puct_games_are_the_same_on_6x6_four_in_a_row_and_under_standard():
    assert_same_games(_games(False, 6, 4, 40, 4, 2, win_check=True), _games(True, 6, 4, 40, 4, 2, win_check=True))
    args = (8, 5, 40, 4, 2)
    assert_same_games(_games(False, *args, rule="standard", solve=True), _games(True, *args, rule="standard", solve=True))


@pytest.mark.parametrize("options", [{}, {"solve": True, "p_full": 0.5, "n_fast": 8}], ids=["plain", "solver-cap"])
def test_gumbel_games_are_the_same_with_targets_within_the_tolerance(options):
    args = (8, 5, 32, 4, 2)
    assert_same_games(_games(False, *args, kind="gumbel", **options), _games(True, *args, kind="gumbel", **options),
                 GUMBEL_PI_TOLERANCE)


def test_15x15_games_are_the_same():
    args = (15, 5, 16, 2, 2)
    assert_same_games(_games(False, *args, fpu=0.25, solve=True), _games(True, *args, fpu=0.25, solve=True))
    assert_same_games(_games(False, *args, kind="gumbel", win_check=True),
                 _games(True, *args, kind="gumbel", win_check=True), GUMBEL_PI_TOLERANCE)


def test_small_pools_are_compacted_and_grown_without_changing_a_game():
    args = (8, 5, 48, 4, 2)
    assert_same_games(_games(False, *args, win_check=True), _games(True, *args, pools=(8, 64), win_check=True))


def test_a_tree_opens_its_core_search_with_its_own_options():
    from gomoku.search.core import layout
    from gomoku.search.core.cached_vcf import VcfCache
    from gomoku.search.core.trees import CoreTrees
    from gomoku.search.gumbel import GumbelTree
    from gomoku.search.mcts import MCTS

    trees, board = CoreTrees(9, 9, 5, rules.FREESTYLE), Board(9, 9, 5)
    s = trees.add_tree(board, MCTS(c_puct=3.0, fpu=0.2, solve=True), inputs=2)
    columns = (layout.P_CPUCT, layout.P_FPU, layout.P_WIN_CHECK, layout.P_SOLVE, layout.P_THREATS)
    assert trees.sflt[s, columns].tolist() == pytest.approx([3.0, 0.2, 1.0, 1.0, 0.0])
    assert trees.sint[s, layout.S_KIND] == layout.PUCT and trees.sint[s, layout.S_INPUTS] == 2
    gumbel = GumbelTree(c_visit=40.0, c_scale=0.5, threats=True)
    s = trees.add_tree(board, gumbel)
    assert trees.sint[s, layout.S_KIND] == layout.GUMBEL
    assert trees.sflt[s, [layout.P_C_VISIT, layout.P_C_SCALE, layout.P_THREATS]].tolist() == [40.0, 0.5, 1.0]
    assert isinstance(gumbel.threat_solver.cache, VcfCache)  # the core shares the tree's VCF cache


def test_what_the_core_does_not_play_stays_on_the_reference_trees():
    evaluator = NetEvaluator(FakeNet(64), cache_size=0)
    board = Board(8, 8, 5)
    assert supported(board, {1: MCTSPlayer(evaluator), 2: MCTSPlayer(evaluator)})
    assert supported(board, {1: MCTSPlayer(evaluator, threats=True), 2: MCTSPlayer(evaluator)})
    assert not supported(board, {1: MCTSPlayer(RolloutEvaluator(0)), 2: MCTSPlayer(evaluator)})

    class Planes2(FakeNet):
        input_version = 2

    assert supported(board, {1: MCTSPlayer(NetEvaluator(Planes2(64, channels=14)))} | {2: MCTSPlayer(evaluator)})
    # A match of two players with their own trees: on the core, the same games as on the reference.
    other = NetEvaluator(FakeNet(64, seed=1), cache_size=0)

    def new_game(i):
        return Board(8, 8, 5, start_player=1 + i % 2), {1: MCTSPlayer(evaluator, n_playout=30, fpu=0.25),
                                                        2: MCTSPlayer(other, n_playout=20, solve=True)}

    assert_same_games(run_games(3, new_game, 2, compiled=False), run_games(3, new_game, 2, compiled=True))


def test_dropping_the_trees_mid_game_leaves_legal_games():
    from gomoku.actors.selfplay import SelfPlayStream

    evaluator = NetEvaluator(FakeNet(36), cache_size=0)
    stream = SelfPlayStream(evaluator, (6, 6, 4), 3, SelfPlayRecipe(n_playout=20, win_check=True), 1, compiled=True)
    lockstep = stream.lockstep
    stats = RunStats()
    finished = []
    for step in range(400):
        lockstep.fill(3)
        finished.extend(lockstep.step(stats))
        if step % 37 == 5:
            stream.set_evaluator(NetEvaluator(FakeNet(36, seed=step), cache_size=0))
    assert finished
    for game in finished:
        board = Board(6, 6, 4, start_player=game.start_player)
        for move in game.moves:
            board.do_move(move)
        assert board.game_over and board.winner == game.winner


@pytest.mark.parametrize("n", [1, 7, 8, 9, 64, 127, 128, 129, 225, 300, 361, 700])
def test_the_kernels_sum_as_numpy_does(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = rng.random(n) * rng.random() ** 4
        assert sums.pairwise_sum(a, n) == a.sum()


def test_renju_games_are_the_same():
    args = (9, 5, 40, 3, 3)
    assert_same_games(_games(False, *args, rule="renju", fpu=0.25, solve=True),
                 _games(True, *args, rule="renju", fpu=0.25, solve=True))
    assert_same_games(_games(False, *args, rule="renju", kind="gumbel", win_check=True),
                 _games(True, *args, rule="renju", kind="gumbel", win_check=True), GUMBEL_PI_TOLERANCE)


def test_the_kernels_forbidden_points_are_the_rules():
    rng = np.random.default_rng(5)
    width = 15
    forbidden = 0
    for _ in range(300):
        cells = np.zeros((1, width * width), np.int8)
        for _ in range(int(rng.integers(4, 60))):
            row, col = np.clip(rng.normal(7, 2.5, 2).round().astype(int), 0, width - 1)
            cells[0, row * width + col] = 1 if rng.random() < 0.6 else 2
        as_list = [int(x) for x in cells[0]]
        want = rules.forbidden_points(as_list, width, width)
        got = [m for m in range(width * width) if cells[0, m] == 0 and boards.is_forbidden(cells, 0, m, width, width)]
        assert got == want
        assert boards.black_has_allowed_move(cells, 0, width, width) == rules.black_has_allowed_move(as_list, width,
                                                                                                      width)
        forbidden += len(want)
    assert forbidden > 100  # the positions hold double threes, double fours and overlines to test


def test_a_kernel_called_with_literal_arguments_compiles_for_their_plain_types():
    """A kernel's call from another kernel passes constants as literal types; each set of literal
    values would compile the callee once more (the first start's compile time)."""
    from numba import types

    from gomoku.search.core import vcf

    for args in ((types.literal(0), types.literal(4096)), (types.int64, types.literal(64)),
                 (types.literal(60), types.int64)):
        _, _, typed, _ = vcf.table_entries.get_call_template(args, {})
        assert list(typed) == [types.int64, types.int64]
    assert [list(sig) for sig in vcf.table_entries.signatures] == [[types.int64, types.int64]]
    assert vcf.table_entries(5, 4096) == 16
