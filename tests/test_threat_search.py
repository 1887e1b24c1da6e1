"""The search's threat option (``MCTS(threats=True)``): VCF at new leaves, forced wins and defences at the root."""

import argparse

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.game.line_board import LineBoard
from gomoku.game.vcf import find_vcf
from gomoku.search.gumbel import GumbelPlayer
from gomoku.search.lockstep import run_games
from gomoku.search.mcts import MCTS
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.options import SearchOptions, add_search_flags
from gomoku.search.tree_threats import ThreatSolver, replays, vcf_plies
from gomoku.search.vct import find_vct
from tests.boards import OPEN_THREE, STOPS_A_VCF_NOT_A_VCT, load_board
from tests.helpers import FlatEvaluator, HashEvaluator


class FavouringEvaluator(FlatEvaluator):
    """Flat, except that the root position's prior puts ``mass`` on one move: a net that likes a blunder."""

    def __init__(self, root: Board, move: int, mass: float = 0.9):
        super().__init__()
        self.key, self.move, self.mass = bytes(root.cells), move, mass

    def evaluate(self, boards):
        priors, values = super().evaluate(boards)
        for row, board in enumerate(boards):
            if bytes(board.cells) == self.key:
                priors[row] = (1.0 - self.mass) / board.size
                priors[row, self.move] += self.mass
        return priors, values


def labels(board, moves):
    return sorted(board.move_to_label(int(m)) for m in moves)


# Black (X) to move has a VCF: f4 (White must take g5), h7 (White must take g7), then h5 makes a
# four open at both ends (h4 and h9): seven moves to the end of the game with a block and the five.
# Neither side can complete a line at once.
VCF = """
    ...OO...X
    ...O...XO
    ....XX..X
    ...X...XO
    O...O....
    ........X
    .X..XO..O
    O....O...
    X..O....X
"""


def test_the_own_vcf_is_the_only_root_move_and_is_proved_in_three_playouts():
    board = load_board(VCF)
    assert board.current_player == 1 and not any(len(c) for c in board.completing_cells())
    evaluator = FlatEvaluator()
    tree = MCTS(threats=True)
    for _ in range(3):
        tree.playout(board, evaluator)
    root = tree.root
    assert labels(board, root.moves) == ["f4"]
    # the root and White's forced block were evaluated; Black's next node was a VCF in the cache
    assert root.proven == 1 and root.plies == 7 and evaluator.calls == 2
    assert root.children[root.win].proven == -1 and root.children[root.win].plies == 6


def test_the_flat_prior_search_plays_the_vcf_only_with_the_option():
    board = load_board(VCF)
    plain = MCTSPlayer(FlatEvaluator(), n_playout=200, seed=0, solve=True)
    assert board.move_to_label(plain.get_action(board.copy())) != "f4"
    player = MCTSPlayer(FlatEvaluator(), n_playout=20, seed=0, threats=True)
    assert board.move_to_label(player.get_action(board.copy())) == "f4"
    assert player.mcts.root.proven == 1


def test_vcf_lines_are_proofs_with_their_lengths():
    board = load_board(VCF)
    tb = LineBoard(board)
    line = find_vcf(tb, 1)
    assert [board.move_to_label(m) for m in line] == ["f4", "g5", "h7", "g7", "h5"]
    assert vcf_plies(tb, 1, line) == 7 and replays(tb, 1, line)
    tb.play(board.parse_move("g7"), 2)  # White stands on a cell of the line: it no longer replays
    assert not replays(tb, 1, line)


# White (O) to move. Black threatens a VCF of thirteen moves (e3 e4 f4 h6 c1 d2 f5 h5 f6 f8 e7 g7
# h4); only f5 and h5 stop every VCF Black has (f8 stops this one, but leaves a longer one).
DEFEND_VCF = """
    ...X....O
    .........
    .....X.XX
    X..OO....
    ..O.X.X.X
    OX.......
    O....O...
    .OO.X.O..
    ...OX....
"""


def plain_then_threats(board, blunder_label: str, playouts: int):
    """Searches ``board`` with a prior that favours the losing move ``blunder_label``: the solver
    alone must play it (so the position tests something), then the threat search; returns the
    threat search's player and its move."""
    blunder = board.parse_move(blunder_label)
    plain = MCTSPlayer(FavouringEvaluator(board, blunder), n_playout=playouts, seed=0, solve=True)
    assert plain.get_action(board.copy()) == blunder
    player = MCTSPlayer(FavouringEvaluator(board, blunder), n_playout=playouts, seed=0, threats=True)
    return player, player.get_action(board.copy())


def test_only_the_defences_against_a_vcf_are_searched_and_one_is_played():
    board = load_board(DEFEND_VCF, to_move=2)
    player, move = plain_then_threats(board, "a9", 200)
    root = player.mcts.root
    # every playout but the first (which expanded the root) went to a defence
    assert labels(board, root.moves) == ["f5", "h5"] and root.child_N.sum() == 199
    assert board.move_to_label(move) in ("f5", "h5")
    # checked with the heuristic's full VCF budget: every other move leaves Black a VCF, these do not
    for cell in board.legal_moves():
        tb = LineBoard(board)
        tb.play(cell, 2)
        assert (find_vcf(tb, 1) is None) == (board.move_to_label(cell) in ("f5", "h5"))


def test_of_the_moves_that_stop_a_vcf_only_those_that_leave_no_vct_are_kept():
    board = Board(11, 11, 5)
    for move in STOPS_A_VCF_NOT_A_VCT:
        board.play(move)
    keep = ThreatSolver(vct_nodes=1000, defence_vct_nodes=1000).root(board).keep
    assert labels(board, np.flatnonzero(keep)) == ["b4", "d4"]
    # a defence budget too small to see the VCT keeps every move that stops the VCF
    keep = ThreatSolver(vct_nodes=1000, defence_vct_nodes=100).root(board).keep
    assert labels(board, np.flatnonzero(keep)) == ["b4", "d4", "g4"]
    tb = LineBoard(board)
    tb.play(39, 2)  # g4
    assert find_vcf(tb, 1) is None and find_vct(tb, 1, 1000, 3) is not None


def test_an_open_three_leaves_only_its_two_ends():
    board = load_board(OPEN_THREE, to_move=2)  # Black's d5-e5-f5: b5 or h5 would still lose
    tree = MCTS(threats=True)
    tree.playout(board, FlatEvaluator())
    assert labels(board, tree.root.moves) == ["c5", "g5"]


# White (O) to move. Black has no VCF but a VCT (threes and fours) starting at c5; the heuristic's
# searches find three moves after which it has neither.
DEFEND_VCT = """
    ..O......
    ...O.....
    ....X.O.X
    ..O.X....
    OX.....O.
    .X.X.....
    .........
    .....X...
    ..O......
"""


def test_only_the_defences_against_a_vct_are_searched():
    board = load_board(DEFEND_VCT, to_move=2)
    player, move = plain_then_threats(board, "a9", 100)
    assert labels(board, player.mcts.root.moves) == ["b6", "c5", "e3"]
    assert board.move_to_label(move) in ("b6", "c5", "e3")


def test_a_kept_root_marks_the_moves_that_do_not_defend_lost_and_never_visits_them():
    board = load_board(DEFEND_VCF, to_move=2)
    tree = MCTS(threats=True)
    root = tree.root
    root.expand(np.flatnonzero(board.stones() == 0), np.full(board.size, 1.0 / board.size))  # as if kept
    for _ in range(100):
        tree.playout(board, FlatEvaluator())
    defended = np.isin(root.moves, [board.parse_move(label) for label in ("f5", "h5")])
    np.testing.assert_array_equal(root.lost, ~defended)
    assert root.child_N[~defended].sum() == 0 and root.child_N[defended].sum() == 100


# White (O) to move cannot stop Black: every move leaves Black a VCF (its open three e3-f4-g5 on the
# diagonal, and its lines on the d file and the eighth row), and White has no four to gain a tempo.
LOST = """
    .O.......
    ...X..X.O
    ...X....O
    .....X...
    O.....XO.
    .....X...
    ....X....
    .O.....O.
    .........
"""


def test_a_lost_root_is_proved_with_one_net_call_and_a_playout_per_move():
    board = load_board(LOST, to_move=2)
    evaluator = FlatEvaluator()
    tree = MCTS(threats=True)
    moves = len(board.legal_moves())
    for _ in range(moves + 1):
        tree.playout(board, evaluator)
    root = tree.root
    assert len(root.moves) == moves and root.lost.all()  # no defence: every move stays, each proven lost
    assert root.proven == -1 and root.plies == 4 and evaluator.calls == 1
    assert all(child.proven == 1 and not child.expanded for child in root.children.values())
    assert board.cells[tree.best_move(board)] == 0


# --------------------------------------------------------------- consistency
def test_the_line_board_follows_the_search_board_through_plays_and_undos():
    rng = np.random.default_rng(0)
    board = Board(9, 9, 5)
    solver = ThreatSolver()
    for _ in range(60):
        if board.history and (board.game_over or rng.random() < 0.3):
            board.undo()
        else:
            board.play(int(rng.choice(board.legal_moves())))
        tb = solver.sync(board)
        fresh = LineBoard(board)
        np.testing.assert_array_equal(tb.stones, fresh.stones)
        np.testing.assert_array_equal(tb.counts, fresh.counts)


def test_every_playout_restores_the_board():
    board = load_board(DEFEND_VCF, to_move=2)
    tree = MCTS(threats=True)
    before = (bytes(board.cells), list(board.history), board.current_player)
    for _ in range(50):
        tree.playout(board, HashEvaluator())
        assert (bytes(board.cells), list(board.history), board.current_player) == before


@pytest.mark.parametrize("width, height, n_in_row", [(7, 7, 4), (9, 9, 5)])
def test_threat_searches_restore_the_board_and_stay_consistent_in_random_games(width, height, n_in_row):
    rng = np.random.default_rng(width)
    for game in range(3):
        board = Board(width, height, n_in_row)
        players = [MCTSPlayer(HashEvaluator(), n_playout=40, seed=game, threats=True, reuse_tree=True),
                   GumbelPlayer(HashEvaluator(), n_playout=8, seed=game, threats=True)]
        while not board.game_over:
            player = players[len(board.history) % 2]
            before = (bytes(board.cells), list(board.history), board.current_player)
            move = player.get_action(board)
            assert (bytes(board.cells), list(board.history), board.current_player) == before
            assert board.cells[move] == 0
            root = player.mcts.root if isinstance(player, MCTSPlayer) else player.tree.root
            if root.proven == 1 and isinstance(player, MCTSPlayer):
                # a proved win is a real one: the move wins at once or leaves the opponent lost
                copy = board.copy()
                copy.play(move)
                assert copy.winner == board.current_player or root.children[root.win].proven == -1
                if copy.winner is None:  # and the opponent is then lost to a VCF or a line it cannot stop
                    tb = LineBoard(copy)
                    assert find_vcf(tb, board.current_player, 5000) is not None or len(tb.five_cells(
                        board.current_player)) > 1 or tb.five_cells(board.current_player)
            if rng.random() < 0.3:
                move = int(rng.choice(board.legal_moves()))
            board.play(move)
            for p in players:
                p.notify_move(move)


@pytest.mark.parametrize("kind", ["puct", "gumbel"])
def test_lockstep_games_with_threats_equal_games_played_alone(kind):
    def new_game(i):
        if kind == "gumbel":
            player = GumbelPlayer(HashEvaluator(), n_playout=6, seed=i, threats=True)
        else:
            player = MCTSPlayer(HashEvaluator(), n_playout=30, self_play=True, seed=i, threats=True)
        return Board(7, 7, 4), {1: player, 2: player}

    together, _ = run_games(3, new_game, parallel=3)
    for i in range(3):
        board, players = new_game(i)
        player = players[1]
        while not board.game_over:
            move = player.get_action(board)
            board.play(move)
            player.notify_move(move)
        assert board.history == together[i].moves


# --------------------------------------------------------------- the option
def test_the_option_includes_the_solver_and_reaches_the_flags():
    options = SearchOptions(threats=True)
    assert options.solve and options.win_check and options.kwargs()["threats"] is True
    assert options.words() == ["threat solver"] and options.flags() == " --threats"
    assert "threats" not in SearchOptions(solve=True).kwargs()  # off: the keywords searches always took
    parser = argparse.ArgumentParser()
    add_search_flags(parser)
    for argv, expected in (([], SearchOptions()), (["--threats"], SearchOptions(threats=True)),
                           (["--search", "sharp", "--threats", "on"], SearchOptions(0.25, solve=True, threats=True)),
                           (["--threats", "off", "--solve"], SearchOptions(solve=True))):
        read = SearchOptions.from_args(parser.parse_args(argv))
        assert read == expected
        assert SearchOptions.from_args(parser.parse_args(read.flags().split())) == read
    tree = MCTS(**options.kwargs())
    assert tree.threats and tree.solve and tree.threat_solver is not None
    assert MCTS(solve=True).threat_solver is None
    with pytest.raises(ValueError, match="threats"):
        SearchOptions(threats=1)
