import numpy as np
import pytest

from gomoku.game.board import Board, IllegalMoveError
from tests.boards import load_board


def win_after(board, label):
    board.do_move(board.parse_move(label))
    return board.winner


@pytest.mark.parametrize("text, move", [
    # horizontal, at the left edge
    (""".......
           .......
           XXXX...
           OOOO...
           .......""", "e3"),
    # vertical, along the right edge
    ("""......X
           ......X
           ......X
           ......X
           ......."""[::1], "g1"),
    # diagonal up-right, ending in the top-right corner
    (""".......
           .....X.
           ....X..
           ...X...
           ..X...."""[::1], "g5"),
    # anti-diagonal, completed in the middle of the line
    ("""X......
           .X.....
           .......
           ...X...
           ....X.."""[::1], "c3"),
])
def test_five_wins_in_all_directions(text, move):
    board = load_board(text, to_move=1)
    assert board.winner is None
    assert win_after(board, move) == 1
    assert len(board.winning_line()) >= 5


def test_corner_diagonal_win_and_no_wrap_around():
    board = load_board("""
        ....X
        ...X.
        ..X..
        .X...
        .....""", to_move=1)
    assert win_after(board, "a1") == 1
    # A row that "wraps" from the end of one row to the start of the next is not a line.
    wrap = load_board("""
        ......
        XX....
        ....XX
        ......
        ......
        ......""", to_move=1)
    wrap.do_move(wrap.parse_move("c5"))  # e4 f4 a5 b5 c5 are consecutive flat indices, not a line
    assert wrap.winner is None


def test_overline_wins_in_freestyle():
    board = load_board("""
        XXX.XX..
        ........
        OOOO....
        O.......
        ........""", to_move=1)
    assert win_after(board, "d5") == 1
    assert len(board.winning_line()) == 6


def test_four_is_not_five():
    board = load_board("""
        XXX.....
        ........
        OOO.....
        ........
        ........""", to_move=1)
    assert win_after(board, "d5") is None


def test_winning_moves_are_the_cells_that_complete_a_line_for_the_side_to_move():
    # X (to move) wins at e5 (overline through the gap counts too); O's d3 would win but O is not to move.
    board = load_board("""
        XXXX.X..
        ........
        OOO.O...
        ........
        ........""", to_move=1)
    assert [board.move_to_label(m) for m in board.winning_moves()] == ["e5"]
    board.do_move(board.parse_move("a1"))
    assert [board.move_to_label(m) for m in board.winning_moves()] == ["d3"]
    assert load_board("""
        XXX.....
        ........
        OOO.....
        ........
        ........""", to_move=1).winning_moves() == []


def test_draw_on_full_board():
    # 4x4, four in a row, filled without any line of four.
    x_moves = "a1 b1 c2 d2 a3 b3 c4 d4".split()  # rows XXOO / OOXX / XXOO / OOXX
    o_moves = "c1 d1 a2 b2 c3 d3 a4 b4".split()
    moves = [m for pair in zip(x_moves, o_moves) for m in pair]
    board = Board(4, 4, 4)
    for label in moves:
        assert board.winner is None
        board.do_move(board.parse_move(label))
    assert board.winner == 0
    assert board.legal_moves() == []


@pytest.mark.parametrize("bad, message", [
    (64, "off the"), (-1, "off the"), ("e5", "integer"), (3.0, "integer"), (None, "integer"),
    (True, "integer"),
])
def test_illegal_moves_leave_board_unchanged(bad, message):
    board = Board(8, 8, 5)
    board.do_move(27)
    before = (board.cells.copy(), board.history.copy(), board.current_player)
    with pytest.raises(IllegalMoveError, match=message):
        board.do_move(bad)
    assert (board.cells, board.history, board.current_player) == before


def test_occupied_and_game_over_are_illegal():
    board = Board(6, 6, 4)
    board.do_move(0)
    with pytest.raises(IllegalMoveError, match="occupied"):
        board.do_move(0)
    for m in (6, 1, 7, 2, 8, 3):
        board.do_move(m)
    assert board.winner == 1
    with pytest.raises(IllegalMoveError, match="over"):
        board.do_move(20)
    assert len(board.history) == 7


def test_undo_restores_everything():
    board = Board(6, 6, 4)
    for m in (0, 6, 1, 7, 2, 8):
        board.do_move(m)
    snapshot = (board.cells.copy(), board.history.copy(), board.current_player)
    board.do_move(3)
    assert board.winner == 1
    assert board.undo() == 3
    assert (board.cells, board.history, board.current_player, board.winner) == (*snapshot, None)
    with pytest.raises(IllegalMoveError):
        Board(6, 6, 4).undo()


def test_start_player_and_copy_are_independent():
    board = Board(6, 6, 4, start_player=2)
    assert board.current_player == 2
    board.do_move(5)
    other = board.copy()
    other.do_move(6)
    assert board.history == [5] and other.history == [5, 6]
    assert board.cells[6] == 0


def test_sizes_are_checked():
    with pytest.raises(ValueError, match="cannot hold"):
        Board(4, 8, 5)
    with pytest.raises(ValueError):
        Board(0, 8, 5)
    with pytest.raises(ValueError):
        Board(8, 8, 5, start_player=3)


def test_labels_round_trip():
    board = Board(15, 15, 5)
    assert board.move_to_label(7 * 15 + 7) == "h8"
    assert board.parse_move("h8") == 7 * 15 + 7
    assert board.parse_move(" 3, 4 ") == 3 * 15 + 4
    for move in range(board.size):
        assert board.parse_move(board.move_to_label(move)) == move
    for bad in ("", "z1", "a0", "a16", "hello", "3;4", "99,1"):
        with pytest.raises(IllegalMoveError):
            board.parse_move(bad)


def test_planes_follow_the_player_to_move():
    board = Board(6, 6, 4)
    planes = board.planes()
    assert planes.shape == (4, 6, 6) and planes.dtype == np.float32
    assert planes[:3].sum() == 0 and planes[3].min() == 1  # first player to move
    board.do_move(board.move_at(1, 2))  # player 1
    board.do_move(board.move_at(4, 4))  # player 2
    board.do_move(board.move_at(0, 5))  # player 1; player 2 to move
    planes = board.planes()
    assert planes[0, 4, 4] == 1 and planes[0].sum() == 1  # own stones: player 2
    assert planes[1, 1, 2] == 1 and planes[1, 0, 5] == 1 and planes[1].sum() == 2
    assert planes[2, 0, 5] == 1 and planes[2].sum() == 1
    assert planes[3].max() == 0  # player 2 did not open the game


def test_to_text_draws_rows_from_the_top():
    board = Board(6, 6, 4)
    board.do_move(board.parse_move("a1"))
    text = board.to_text().splitlines()
    assert text[-2].split()[:2] == ["1", "x"]
    assert text[-1].split() == list("abcdef")
