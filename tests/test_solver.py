"""The search's solver (``MCTS(solve=True)``): forced blocks and proven results, on positions checked by hand."""

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.search.mcts import MCTS
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.tree import Leaf
from tests.boards import FOUR_AND_THREE, OPEN_THREE, load_board
from tests.helpers import FlatEvaluator


@pytest.mark.parametrize("width, height, n_in_row", [(9, 9, 5), (6, 6, 4), (7, 5, 3)])
def test_completing_cells_agree_with_winning_moves_for_both_players(width, height, n_in_row):
    rng = np.random.default_rng(width + height + n_in_row)
    seen = 0
    for _ in range(40):
        board = Board(width, height, n_in_row)
        while not board.game_over:
            mine, theirs = board.completing_cells()
            assert list(mine) == board.winning_moves()
            board.current_player = 3 - board.current_player  # ask the rules about the opponent
            assert list(theirs) == board.winning_moves()
            board.current_player = 3 - board.current_player
            seen += len(theirs) > 0
            board.play(int(rng.choice(board.legal_moves())))
        assert board.completing_cells()[0].size == board.completing_cells()[1].size == 0
    assert seen > 20


def test_an_open_four_is_proved_a_win_and_played():
    board = load_board(OPEN_THREE)
    assert board.current_player == 1
    player = MCTSPlayer(FlatEvaluator(), n_playout=300, seed=0, solve=True)
    move = player.get_action(board.copy())
    assert board.move_to_label(move) in ("c5", "g5")
    root = player.mcts.root
    assert root.proven == 1 and root.moves[root.win] == move
    # the reply position was valued without the net: White has two cells to block, so it is lost
    assert root.children[root.win].proven == -1 and not root.children[root.win].expanded


def search_until_proven(board, playouts: int = 200) -> MCTS:
    """A solver's tree over ``board`` after playouts with flat priors, until its root is proven."""
    tree = MCTS(solve=True)
    for _ in range(playouts):
        tree.playout(board, FlatEvaluator())
        if tree.root.proven:
            break
    return tree


def test_a_four_leaves_one_reply_and_a_loss_is_proved_through_it():
    board = load_board(FOUR_AND_THREE, to_move=2)
    tree = search_until_proven(board)
    root = tree.root
    assert [board.move_to_label(int(m)) for m in root.moves] == ["f3"]  # every other move loses at once
    assert root.proven == -1 and root.lost.all()
    black = root.children[0]
    assert black.proven == 1 and board.move_to_label(int(black.moves[black.win])) == "g5"


def test_two_fours_to_block_are_a_loss_without_expanding_the_moves_that_do_not_block():
    board = load_board(OPEN_THREE)
    board.play(board.parse_move("c5"))  # Black's open four: b5 and g5 both win
    evaluator = FlatEvaluator()
    tree = MCTS(solve=True)
    for _ in range(10):
        tree.playout(board, evaluator)
    root = tree.root
    assert sorted(board.move_to_label(int(m)) for m in root.moves) == ["b5", "g5"]
    assert root.proven == -1 and evaluator.calls == 1  # the root alone; each reply is a finished game
    assert np.all(root.child_Q == -1.0)


def test_the_root_with_a_win_keeps_only_the_winning_moves():
    board = load_board(OPEN_THREE)
    board.play(board.parse_move("c5"))
    board.play(board.parse_move("a2"))  # White does not block: Black completes at b5 or g5
    player = MCTSPlayer(FlatEvaluator(), n_playout=20, seed=0, solve=True)
    move = player.get_action(board.copy())
    assert sorted(board.move_to_label(int(m)) for m in player.mcts.root.moves) == ["b5", "g5"]
    assert board.move_to_label(move) in ("b5", "g5") and player.mcts.root.proven == 1


def test_a_proved_win_is_chosen_over_a_move_with_more_visits():
    board = load_board(OPEN_THREE)
    tree = MCTS(solve=True)
    tree.playout(board, FlatEvaluator())  # expands the root
    root = tree.root
    win = int(np.flatnonzero(root.moves == board.parse_move("g5"))[0])
    root.child_N[:] = 5.0
    root.child_N[win] = 1.0
    root.win = win
    assert root.best_index() == win and root.select(5.0) == win


def test_the_solver_off_leaves_the_search_as_it_was():
    board = load_board(FOUR_AND_THREE, to_move=2)
    plain = MCTS()
    for _ in range(50):
        plain.playout(board, FlatEvaluator())
    assert len(plain.root.moves) == int((board.stones() == 0).sum())
    assert plain.root.proven == 0 and plain.root.win == -1 and plain.root.lost is None


def test_solver_searches_restore_the_board_and_stay_consistent_in_random_games():
    rng = np.random.default_rng(5)
    for game in range(6):
        board = Board(7, 7, 4)
        player = MCTSPlayer(FlatEvaluator(), n_playout=60, seed=game, solve=True, reuse_tree=True)
        while not board.game_over:
            before = (bytes(board.cells), list(board.history), board.current_player)
            move = player.get_action(board)
            assert (bytes(board.cells), list(board.history), board.current_player) == before
            root = player.mcts.root
            if root.proven == 1:
                # a proved win is a real one: the chosen move wins at once or leaves the opponent lost
                copy = board.copy()
                copy.play(move)
                assert copy.winner == board.current_player or root.children[root.win].proven == -1
            if rng.random() < 0.3:
                move = int(rng.choice(board.legal_moves()))
            board.play(move)
            player.notify_move(move)


# ------------------------------------------------------- the move from a proven root
def test_a_lost_root_blocks_the_four_and_the_reply_gets_a_move_from_the_kept_tree():
    # White to move in FOUR_AND_THREE loses whatever it plays: f3 holds out (every other move loses
    # at once). After f3 and Black's g5 (an open four), the kept subtree's root is proven lost and
    # was never expanded: the next search must expand it before it chooses, and it blocks an end.
    board = load_board(FOUR_AND_THREE, to_move=2)
    player = MCTSPlayer(FlatEvaluator(), n_playout=200, seed=0, solve=True, reuse_tree=True)
    move = player.get_action(board)
    assert board.move_to_label(move) == "f3" and player.mcts.root.proven == -1
    for label in ("f3", "g5"):
        board.play(board.parse_move(label))
        player.notify_move(board.parse_move(label))
    root = player.mcts.root
    assert root.proven == -1 and not root.expanded  # the state the engine once could not move from
    move = player.get_action(board)
    assert board.move_to_label(move) in ("g4", "g9")


def lost_root(board, lengths):
    """A tree over ``board`` whose root is expanded and lost: every child is proven won for the
    opponent, child ``i`` by a line of ``lengths.get(move, 3)`` moves."""
    tree = MCTS(solve=True)
    tree.playout(board, FlatEvaluator())  # expands the root
    root = tree.root
    for index, move in enumerate(root.moves):
        child = root.child(index)
        child.proven, child.plies = 1, lengths.get(int(move), 3)
        root.mark_lost(index)
    root.proven, root.plies = -1, 1 + max(c.plies for c in root.children.values())
    return tree


# White (O) to move: Black's open threes on the fourth row and the e file cross, so Black wins by
# force; White's own three on the first row can still be made a four (b1 or f1), which Black
# must answer first.
DOUBLE_THREE = """
    .........
    .........
    ....X....
    ....X....
    ....X....
    .XXX.....
    .........
    .........
    ..OOO..O.
"""


def test_a_lost_root_makes_a_four_before_anything_else_and_the_longest_one():
    board = load_board(DOUBLE_THREE, to_move=2)
    assert len(board.completing_cells()[1]) == 0  # no five to block
    fours = [board.parse_move(label) for label in ("b1", "f1")]
    tree = lost_root(board, {fours[0]: 4, fours[1]: 6, board.parse_move("a5"): 9})
    assert board.move_to_label(tree.best_move(board)) == "f1"  # a four, the longer line; a5's is no four


def test_a_lost_root_without_a_four_plays_the_longest_line_then_the_priors_favourite():
    board = load_board(DOUBLE_THREE.replace("..OOO..O.", ".......O."), to_move=2)
    tree = lost_root(board, {board.parse_move("a5"): 9})
    assert board.move_to_label(tree.best_move(board)) == "a5"
    tree = lost_root(board, {})
    root = tree.root
    root.child_P[:] = 0.001
    root.child_P[int(np.flatnonzero(root.moves == board.parse_move("e4"))[0])] = 0.5
    assert board.move_to_label(tree.best_move(board)) == "e4"  # the net's favourite among equals


def test_a_won_root_plays_its_quickest_proven_line_and_a_five_before_any():
    board = load_board(OPEN_THREE)
    tree = MCTS(solve=True)
    tree.playout(board, FlatEvaluator())
    root = tree.root
    slow, quick = (int(np.flatnonzero(root.moves == board.parse_move(label))[0]) for label in ("c5", "g5"))
    for index, plies in ((slow, 5), (quick, 3)):
        tree.prove(Leaf(root.child(index), [(root, index)], -1.0, plies=plies), -1)
    assert root.proven == 1 and root.plies == 4 and board.move_to_label(tree.best_move(board)) == "g5"
    board.play(board.parse_move("c5"))
    board.play(board.parse_move("a2"))  # Black now completes at b5 or g5: a five beats any proof
    tree = MCTS(solve=True)
    tree.playout(board, FlatEvaluator())
    assert board.move_to_label(tree.best_move(board)) in ("b5", "g5")


def test_a_proven_loss_records_the_longest_line_below_it():
    board = load_board(FOUR_AND_THREE, to_move=2)
    tree = search_until_proven(board)
    # f3 (forced), g5 (open four), a block, the five: four moves to the end of the game
    assert tree.root.proven == -1 and tree.root.plies == 4


def test_best_move_needs_an_expanded_root():
    with pytest.raises(ValueError, match="expanded"):
        MCTS(solve=True).best_move(load_board(OPEN_THREE))
