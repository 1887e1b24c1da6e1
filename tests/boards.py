"""Boards written as ASCII for tests: 'X' is player 1, 'O' player 2, '.' empty; top line is the top row."""

from gomoku.game.board import Board


def load_board(text: str, n_in_row: int = 5, to_move: int = None) -> Board:
    """A board holding the drawn stones (no winner checked), with ``to_move`` next.

    By default the player with fewer stones moves (player 1 on equal counts).
    """
    rows = [line.split() if " " in line.strip() else list(line.strip())
            for line in text.strip().splitlines()]
    height, width = len(rows), len(rows[0])
    board = Board(width, height, n_in_row)
    stones = {1: [], 2: []}
    for i, line in enumerate(rows):
        row = height - 1 - i
        for col, mark in enumerate(line):
            player = {"X": 1, "O": 2, ".": 0}[mark.upper()]
            if player:
                stones[player].append(row * width + col)
    for player, moves in stones.items():
        for move in moves:
            board.cells[move] = player
    board.history = stones[1] + stones[2]
    if to_move is None:
        to_move = 1 if len(stones[1]) <= len(stones[2]) else 2
    board.current_player = to_move
    return board


# Black wins on the a1-d4 diagonal of a 6x6 board, 4 in a row.
BLACK_WINS = ["a1", "b1", "b2", "c1", "c3", "d1", "d4"]


def board_after(labels, width=6, height=6, n_in_row=4) -> Board:
    """A board after the moves ``labels`` (like 'c3'), played alternately from Black."""
    board = Board(width, height, n_in_row)
    for label in labels:
        board.do_move(board.parse_move(label))
    return board


# Black (X) to move with an open three on the fifth row: c5 or g5 makes an open four, which White
# cannot block at both ends.
OPEN_THREE = """
    O.......O
    .........
    .........
    .........
    ...XXX...
    .........
    .........
    .........
    O........
"""


# White (O) to move. Black has a four on the third row (blocked at a3: only f3 stops it) and an
# open three on the g file (g6-g8): after the forced f3, g5 makes an open four.
FOUR_AND_THREE = """
    O.......O
    ......X..
    ......X..
    ......X..
    .........
    .........
    OXXXX....
    .........
    O.......O
"""


# 11x11 moves, White to move next: Black threatens a VCF; b4, d4 and g4 each stop it, but after g4
# Black still wins by a VCT (found within 1,000 nodes, not within 100).
STOPS_A_VCF_NOT_A_VCT = [24, 27, 71, 73, 69, 52, 37, 49, 35, 117, 38, 70, 44]
