"""The core's compiled threat code against the reference Python functions, on many random positions.

The VCF search (``core.vcf``) must find the same line as ``gomoku.game.vcf.find_vcf`` and answer
as ``features.has_vcf``; the leaf's VCF with its cache (``core.cached_vcf.leaf_vcf``) the same as
``ThreatSolver.vcf``; the threat planes (``core.planes``) must be ``features.fill_threat_part``'s.
"""

import numpy as np
import pytest

from gomoku.game import features, rules
from gomoku.game.board import Board
from gomoku.search.core import core_enabled

pytestmark = pytest.mark.skipif(not core_enabled(), reason="the compiled core is off (no numba, or GOMOKU_CORE=off)")

RULES = ("freestyle", "standard", "renju")


def _position(rng, width, rule):
    """A board with a cluster of stones in the middle, many lines of three and four among them,
    and no five on it."""
    board = Board(width, width, 5, rule=rule)
    stones = int(rng.integers(6, 40))
    for _ in range(400):
        if len(board.history) >= stones or board.game_over:
            break
        row, col = np.clip(rng.normal((width - 1) / 2, width / 5, 2).round().astype(int), 0, width - 1)
        move = int(row * width + col)
        if board.cells[move] == 0 and not (board.rule == "renju" and board.current_player == 1
                                           and board.is_forbidden(move)):
            board.play(move)
            if board.game_over:
                board.undo()
    return board


def _setup(board):
    from gomoku.search.core import vcf

    geo = vcf.geometry(board.width, board.height, board.n_in_row)
    cells = np.array([board.cells], np.int8)
    exact = np.array(rules.exact_players(board.rule), np.bool_)
    ws = vcf.workspace(board.size, len(geo[0]))
    return geo, cells, exact, ws


@pytest.mark.parametrize("rule", RULES)
def test_the_compiled_vcf_finds_the_reference_line(rule):
    from gomoku.search.core import vcf
    from gomoku.game.line_board import LineBoard
    from gomoku.game.vcf import find_vcf

    rng = np.random.default_rng(RULES.index(rule))
    found = 0
    for _ in range(150):
        board = _position(rng, 11, rule)
        geo, cells, exact, ws = _setup(board)
        windows, ends, through, beyond, zobrist = geo
        for attacker in (1, 2):
            for budget, depth in ((60, 12), (20, 4)):
                want = find_vcf(LineBoard(board), attacker, budget, depth)
                length, _ = vcf.search(cells, 0, attacker, depth, 0, budget, 5, exact, rule == "renju", 11, 11,
                                       windows, ends, through, beyond, zobrist, ws)
                got = [int(m) for m in ws[-1][:length]] if length else None
                assert got == want
                assert list(cells[0]) == list(board.cells)
                found += want is not None
    assert found > 30


@pytest.mark.parametrize("rule", RULES)
def test_the_compiled_vct_finds_the_reference_move_in_as_many_nodes(rule):
    from gomoku.search.core import vct
    from gomoku.game.line_board import LineBoard, line_weights
    from gomoku.search.vct import find_vct

    rng = np.random.default_rng(30 + RULES.index(rule))
    found = 0
    for _ in range(25):
        board = _position(rng, 11, rule)
        geo, cells, exact, ws = _setup(board)
        vs = vct.vct_workspace(board.size)
        for attacker in (1, 2):
            for budget, depth in ((1000, 3), (100, 2)):
                tb = LineBoard(board)
                want = find_vct(tb, attacker, budget, depth)
                got, nodes = vct.find_vct(cells, 0, attacker, budget, depth, 5, exact, rule == "renju", 11, 11, *geo,
                                          line_weights(5), ws, vs)
                assert (got, nodes) == (-1 if want is None else want, tb.nodes)
                assert list(cells[0]) == list(board.cells)
                found += want is not None
    assert found > 20


@pytest.mark.parametrize("rule", RULES)
def test_the_compiled_root_searches_are_the_threat_solvers(rule):
    from gomoku.search.core import cached_vcf, root_threats, vct
    from gomoku.game.line_board import line_weights
    from gomoku.search.tree_threats import ThreatSolver

    rng = np.random.default_rng(40 + RULES.index(rule))
    reference, solver = ThreatSolver(), ThreatSolver()
    board = _position(rng, 11, rule)
    geo, _, exact, ws = _setup(board)
    cache = cached_vcf.install_cache(solver, board, geo[4])
    vs, keep, line = vct.vct_workspace(board.size), np.zeros(board.size, np.bool_), np.zeros(64, np.int64)
    kinds = set()
    for _ in range(30):
        board = _position(rng, 11, rule)
        if any(len(cells) for cells in board.completing_cells()):
            continue  # the in-tree solver answers these before the threat searches are asked
        cells = np.array([board.cells], np.int8)
        want = reference.root(board)
        kind, move, plies = root_threats.root(cells, 0, board.current_player, reference.vct_nodes,
                                              reference.defence_vct_nodes, reference.vct_depth, cache.table, 5, exact,
                                              rule == "renju", 11, 11, *geo, line_weights(5), ws, vs, keep, line)
        kinds.add(kind)
        if want.win is not None:
            assert (kind, move, plies) == (root_threats.WIN, want.win[0], want.plies)
        elif want.keep is not None:
            assert kind == root_threats.KEEP and np.array_equal(keep, want.keep)
        elif want.hint is not None:
            assert (kind, move) == (root_threats.HINT, want.hint)
        else:
            assert kind == root_threats.NONE
        assert list(cells[0]) == list(board.cells)
        assert len(cache) == len(reference.cache)
    assert {root_threats.WIN, root_threats.KEEP} <= kinds


def test_the_compiled_root_drops_the_vcf_blocks_that_leave_a_vct_as_the_reference_does():
    from gomoku.search.core import cached_vcf, root_threats, vct
    from gomoku.game.line_board import line_weights
    from gomoku.search.tree_threats import ThreatSolver
    from tests.boards import STOPS_A_VCF_NOT_A_VCT

    board = Board(11, 11, 5)
    for move in STOPS_A_VCF_NOT_A_VCT:
        board.play(move)
    geo, cells, exact, ws = _setup(board)
    for defence_nodes in (100, 1000):
        reference = ThreatSolver(vct_nodes=1000, defence_vct_nodes=defence_nodes)
        want = reference.root(board).keep
        cache = cached_vcf.install_cache(ThreatSolver(), board, geo[4])
        vs, keep, line = vct.vct_workspace(board.size), np.zeros(board.size, np.bool_), np.zeros(64, np.int64)
        kind, _, _ = root_threats.root(cells, 0, board.current_player, 1000, defence_nodes, reference.vct_depth,
                                       cache.table, 5, exact, False, 11, 11, *geo, line_weights(5), ws, vs, keep, line)
        assert kind == root_threats.KEEP and np.array_equal(keep, want)


@pytest.mark.parametrize("rule", RULES)
def test_the_compiled_threat_planes_are_the_reference_planes(rule):
    from gomoku.search.core import planes

    rng = np.random.default_rng(10 + RULES.index(rule))
    vcf_planes = 0
    for _ in range(120):
        board = _position(rng, 11, rule)
        geo, cells, exact, ws = _setup(board)
        want = features.planes(board, 2).reshape(14, -1)
        out = np.full((2, 14, board.size), 7.0, np.float32)
        planes.write_threat_planes(cells, board.current_player, 0, out, 1, 5, exact, rule == "renju", 11, 11,
                                   planes.plane_tables(11, 11, 5), geo, ws)
        assert np.array_equal(out[1, 4:], want[4:])
        vcf_planes += int(want[12:, 0].sum())
    assert vcf_planes > 20


def test_lines_too_long_for_the_threat_planes_get_tables_of_no_window_in_the_same_form():
    from gomoku.search.core import planes
    from gomoku.search.core.trees import CoreTrees

    real, empty = planes.plane_tables(9, 9, 5), planes.plane_tables(12, 12, features.MAX_THREAT_N + 1)
    assert len(empty) == len(real) and len(empty[0]) == 0
    assert [(t.ndim, t.dtype) for t in empty] == [(t.ndim, t.dtype) for t in real]
    assert len(CoreTrees(12, 12, features.MAX_THREAT_N + 1, rules.FREESTYLE).tables[0]) == 0


@pytest.mark.parametrize("rule", RULES)
def test_the_leaf_vcf_and_its_cache_answer_as_the_threat_solver(rule):
    from gomoku.search.core import cached_vcf
    from gomoku.search.tree_threats import ThreatSolver

    rng = np.random.default_rng(20 + RULES.index(rule))
    solver = ThreatSolver()
    board = _position(rng, 11, rule)
    geo, _, exact, ws = _setup(board)
    cache = cached_vcf.install_cache(solver, board, geo[4])
    reference = ThreatSolver()
    proven = 0
    for _ in range(150):
        board = _position(rng, 11, rule)
        cells = np.array([board.cells], np.int8)
        for attacker in (1, 2):
            want = reference.vcf(board, attacker)
            got = cached_vcf.leaf_vcf(cells, 0, attacker, cache.table, 5, exact, rule == "renju", 11, 11, *geo, ws)
            assert got == (want[1] if want else 0)
            proven += got > 0
            if want and len(want[0]) >= 3 and board.current_player == attacker:
                # the next position along the line: answered from the cache, as the reference's is
                board.play(want[0][0])
                board.play(want[0][1])
                cells = np.array([board.cells], np.int8)
                again = reference.vcf(board, attacker)
                assert again[1] == want[1] - 2
                assert cached_vcf.leaf_vcf(cells, 0, attacker, cache.table, 5, exact, rule == "renju", 11, 11, *geo,
                                           ws) == again[1]
                break
        assert len(cache) == len(reference.cache)
    assert proven > 20


class _Planes2Net:
    """``helpers.FakeNet`` over the 14 planes of input version 2."""

    input_version = 2
    version = 0

    def __init__(self, size, seed=0):
        from tests.helpers import FakeNet

        self.net = FakeNet(size, seed, channels=14)

    def predict(self, planes):
        return self.net.predict(planes)


def _threat_games(compiled, width, playouts, n_games, kind="puct", rule="freestyle", **options):
    from gomoku.search.evaluator import NetEvaluator
    from gomoku.search.gumbel import GumbelPlayer
    from gomoku.search.lockstep import run_games
    from gomoku.search.mcts_player import MCTSPlayer

    evaluator = NetEvaluator(_Planes2Net(width * width), cache_size=0)

    def new_game(i):
        if kind == "gumbel":
            player = GumbelPlayer(evaluator, n_playout=playouts, seed=i, threats=True, **options)
        else:
            player = MCTSPlayer(evaluator, n_playout=playouts, self_play=True, seed=i, threats=True, **options)
        board = Board(width, width, 5, start_player=1 if rule == "renju" else 1 + i % 2, rule=rule)
        return board, {1: player, 2: player}

    return run_games(n_games, new_game, n_games, record=True, compiled=compiled)


@pytest.mark.parametrize("rule", RULES)
def test_threats_on_input_v2_games_are_the_same_on_the_core(rule):
    from tests.helpers import GUMBEL_PI_TOLERANCE, assert_same_games

    args = (9, 24, 3)
    assert_same_games(_threat_games(False, *args, rule=rule, fpu=0.25),
                 _threat_games(True, *args, rule=rule, fpu=0.25))
    assert_same_games(_threat_games(False, *args, kind="gumbel", rule=rule),
                 _threat_games(True, *args, kind="gumbel", rule=rule), GUMBEL_PI_TOLERANCE)


def test_a_match_of_a_threats_player_on_planes_2_and_a_plain_one_is_the_same_on_the_core():
    from gomoku.search.evaluator import NetEvaluator
    from gomoku.search.lockstep import run_games
    from gomoku.search.mcts_player import MCTSPlayer
    from tests.helpers import FakeNet, assert_same_games

    planes2 = NetEvaluator(_Planes2Net(81, seed=2), cache_size=0)
    plain = NetEvaluator(FakeNet(81, seed=1), cache_size=0)

    def new_game(i):
        threats = MCTSPlayer(planes2, n_playout=20, threats=True, reuse_tree=True)
        other = MCTSPlayer(plain, n_playout=20, solve=True)
        players = {1: threats, 2: other} if i % 2 else {1: other, 2: threats}
        return Board(9, 9, 5, start_player=1 + i % 2), players

    assert_same_games(run_games(2, new_game, 2, compiled=False), run_games(2, new_game, 2, compiled=True))
