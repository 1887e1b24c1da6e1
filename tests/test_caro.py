"""The rule objects, and caro through every layer: the win check, the threat code, the rollouts,
self-play, the arena and the engine under ``INFO rule 8``."""

import io
import pickle

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.game.features import FIRST_THREAT_PLANE, has_vcf, planes
from gomoku.game.line_board import LineBoard
from gomoku.game.rules import (CARO, CONTINUOUS_BIT, FREESTYLE, RENJU, RULES, STANDARD, Rule, check_rule,
                               rule_from_protocol, rule_of)
from gomoku.search.rollout import random_rollout_values


def drawn(text: str, rule: str = CARO, n_in_row: int = 5, to_move: int = 1) -> Board:
    """A board under ``rule`` holding the drawn stones ('X' player 1, 'O' player 2, top line the
    top row), no winner checked, ``to_move`` next."""
    rows = [line.strip() for line in text.strip().splitlines()]
    board = Board(len(rows[0]), len(rows), n_in_row, rule=rule)
    for i, line in enumerate(rows):
        for col, mark in enumerate(line):
            if mark != ".":
                move = (len(rows) - 1 - i) * board.width + col
                board.cells[move] = 1 if mark == "X" else 2
                board.history.append(move)
    board.current_player = to_move
    return board


def cell(board: Board, label: str) -> int:
    return board.parse_move(label)


# ------------------------------------------------------------------ the rule objects
def test_every_rule_is_one_object_whose_protocol_number_round_trips():
    assert RULES == ("freestyle", "standard", "renju", "caro")
    numbers = {str(rule): rule_of(rule).protocol for rule in RULES}
    assert numbers == {"freestyle": 0, "standard": 1, "renju": 4, "caro": 8}
    for name in RULES:
        rule = rule_of(name)
        assert rule == name and isinstance(rule, Rule) and Rule(name) is rule
        assert rule_from_protocol(rule.protocol) is rule
        assert rule_from_protocol(rule.protocol | CONTINUOUS_BIT) is rule  # the caller notes the bit
        assert pickle.loads(pickle.dumps(rule)) is rule
        assert check_rule(name, 5) is rule
    assert rule_from_protocol(12) is RENJU  # renju's bit decides
    with pytest.raises(ValueError, match="no rule is numbered 9"):
        rule_from_protocol(9)  # caro with exactly five: not played
    with pytest.raises(ValueError, match="unknown rule 'gomoku'"):
        rule_of("gomoku")


def test_what_each_rule_says():
    assert FREESTYLE.exact == (False, False, False) and FREESTYLE.flanked_wins and not FREESTYLE.ends_matter
    assert STANDARD.exact == (False, True, True) and STANDARD.ends_matter
    assert RENJU.restricted == 1 and RENJU.first_player == 1 and RENJU.n_in_row == 5
    assert CARO.exact == (False, False, False) and not CARO.flanked_wins and CARO.ends_matter
    assert not CARO.restricted and not CARO.first_player and CARO.check(4) is CARO
    with pytest.raises(ValueError, match="renju is played with five in a row"):
        RENJU.check(4)
    # The judgement of one finished line: (player, length, n, before, after).
    assert CARO.line_wins(1, 5, 5, 0, 2) and CARO.line_wins(1, 5, 5, 1, 2)
    assert not CARO.line_wins(1, 5, 5, 2, 2) and CARO.line_wins(1, 6, 5, 2, 2)
    assert not STANDARD.line_wins(2, 6, 5, 0, 0) and FREESTYLE.line_wins(2, 5, 5, 1, 1)
    beyond = np.array([[2, 2], [2, 0], [0, 0], [1, 2]])
    assert CARO.dead_lines(1, beyond).tolist() == [True, False, False, False]
    assert STANDARD.dead_lines(1, beyond).tolist() == [False, False, False, True]
    assert CARO.dead_lines(np.array([1, 2, 2, 2]), beyond).tolist() == [True, False, False, False]


# ------------------------------------------------------------------ the win check
BLOCKED = """
O.O......
.........
.........
.........
OXXXX.O..
.........
.........
.........
........."""


def test_a_five_blocked_at_both_ends_does_not_win_and_the_game_goes_on():
    board = drawn(BLOCKED)
    f5 = cell(board, "f5")
    assert board.winning_moves() == [] and not board.can_win_now()
    assert f5 not in board.completing_cells()[0].tolist()
    board.play(f5)
    assert board.winner is None and board.winning_line() == []
    free = drawn(BLOCKED, FREESTYLE)
    assert free.winning_moves() == [f5]
    free.play(f5)
    assert free.winner == 1


def test_a_five_blocked_at_one_end_or_against_the_edge_wins():
    one_end = drawn(BLOCKED.replace("OXXXX.O..", "OXXXX...."))
    f5 = cell(one_end, "f5")
    assert one_end.winning_moves() == [f5] and one_end.can_win_now()
    one_end.play(f5)
    assert one_end.winner == 1 and one_end.winning_line() == list(range(37, 42))
    # At the edge: the edge is no opponent's stone, so a five between it and O wins.
    edge = drawn(BLOCKED.replace("OXXXX.O..", "XXXX.O..."))
    assert edge.winning_moves() == [cell(edge, "e5")]
    edge.play(cell(edge, "e5"))
    assert edge.winner == 1
    # A five that fills a row from edge to edge.
    whole = drawn("XXXX.\n.....\n.....\n.....\nOOOO.", n_in_row=5)
    whole.play(cell(whole, "e5"))
    assert whole.winner == 1 and whole.winning_line() == [20, 21, 22, 23, 24]


def test_an_overline_wins_even_between_two_opponent_stones():
    board = drawn(BLOCKED.replace("OXXXX.O..", "OXXXX.XO."))
    f5 = cell(board, "f5")
    assert board.winning_moves() == [f5]
    board.play(f5)
    assert board.winner == 1 and len(board.winning_line()) == 6


def test_a_blocked_five_in_one_direction_and_an_open_one_in_another_wins():
    board = drawn("""
        .....X...
        .....X...
        .....X...
        .....X...
        OXXXX.O..
        .........
        .........
        .........
        .........""")
    f5 = cell(board, "f5")
    assert board.winning_moves() == [f5]
    board.play(f5)
    assert board.winner == 1 and board.winning_line() == [f5 + 9 * k for k in range(5)]


def test_white_is_judged_alike_and_four_in_a_row_games_follow_the_same_rule():
    text = """
        .......
        .......
        .......
        XOOO.X.
        .......
        .......
        ......."""
    board = drawn(text, n_in_row=4, to_move=2)
    assert board.winning_moves() == []  # e4 would make O O O O between two X
    opened = drawn(text.replace("XOOO.X.", "XOOO..."), n_in_row=4, to_move=2)
    assert opened.winning_moves() == [cell(opened, "e4")]


# ------------------------------------------------------------------ the threat code
def test_the_line_board_and_the_planes_drop_a_five_that_would_be_blocked():
    board = drawn(BLOCKED)
    tb = LineBoard(board)
    assert tb.five_cells(1) == []
    x = planes(board, version=2)
    assert not x[FIRST_THREAT_PLANE].any()  # no five cell for the player to move
    assert not has_vcf(board.stones(), 1, 9, 9, 5, rule=CARO)
    free = drawn(BLOCKED, FREESTYLE)
    assert LineBoard(free).five_cells(1) == [cell(free, "f5")]
    assert planes(free, version=2)[FIRST_THREAT_PLANE].reshape(-1)[cell(free, "f5")] == 1.0


def test_a_four_that_can_only_become_a_blocked_five_is_no_threat():
    # O X X X . . O: the only five of these stones (b..f) lies between two O: no four move.
    text = BLOCKED.replace("OXXXX.O..", "OXXX..O..")
    board, free = drawn(text), drawn(text, FREESTYLE)
    assert LineBoard(board).four_moves(1) == {}
    assert set(LineBoard(free).four_moves(1)) == {cell(free, "e5"), cell(free, "f5")}
    x, y = planes(board, version=2), planes(free, version=2)
    four = FIRST_THREAT_PLANE + 1
    assert not x[four].any() and y[four].reshape(-1)[cell(free, "e5")] == 1.0
    # With the far O gone the four lives: e5 and f5 both make a five open at the right.
    opened = drawn(text.replace("OXXX..O..", "OXXX....."))
    assert set(LineBoard(opened).four_moves(1)) == {cell(opened, "e5"), cell(opened, "f5")}


def _random_caro_boards(count: int, seed: int, size: int = 7, n: int = 4):
    rng = np.random.default_rng(seed)
    made = 0
    while made < count:
        board = Board(size, size, n, start_player=1 + made % 2, rule=CARO)
        for move in rng.permutation(board.size)[:int(rng.integers(6, 24))].tolist():
            board.play(move)
            if board.winner is not None:
                break
        if board.winner is None:
            made += 1
            yield board


def test_the_line_board_the_planes_and_the_board_agree_on_five_cells():
    for board in _random_caro_boards(60, seed=1):
        wins = board.winning_moves()
        assert LineBoard(board).five_cells(board.current_player) == wins
        mine, theirs = board.completing_cells()
        assert mine.tolist() == wins
        assert np.flatnonzero(planes(board, version=2)[FIRST_THREAT_PLANE]).tolist() == wins
        other = board.copy()
        other.current_player = board.opponent
        assert theirs.tolist() == other.winning_moves()


def test_caro_rollouts_end_where_a_game_played_in_their_fill_order_ends():
    for i, board in enumerate(_random_caro_boards(40, seed=2)):
        value = random_rollout_values([board], np.random.default_rng(i))[0]
        keys = np.random.default_rng(i).random(board.size)
        order = [m for m in np.argsort(np.where(board.stones() == 0, keys, 2.0)).tolist() if board.cells[m] == 0]
        game = board.copy()
        for move in order:
            game.play(move)
            if game.winner is not None:
                break
        expected = 0.0 if not game.winner else (1.0 if game.winner == board.current_player else -1.0)
        assert value == expected


# ------------------------------------------------------------------ the players and the commands
def test_the_compiled_core_leaves_caro_to_the_python_trees():
    from gomoku.search.core.games import supported

    assert not supported(Board(7, 7, 4, rule=CARO), {})


def test_self_play_and_the_arena_play_caro_by_its_rule():
    from gomoku.play.arena.run import run_arena
    from gomoku.play.arena.settings import ArenaSettings
    from gomoku.actors.selfplay import SelfPlayStream
    from gomoku.search.recipe import SelfPlayRecipe
    from gomoku.search.rollout import RolloutEvaluator

    stream = SelfPlayStream(RolloutEvaluator(0), (7, 7, 4), 2, SelfPlayRecipe(n_playout=8), 1, rule=CARO)
    games, _ = stream.collect(2)
    result = run_arena(ArenaSettings("heuristic:1", "pure:20", games=2, size=(7, 7), n_in_row=4,
                                     workers=1, rule="caro"))
    assert result.summary()["rule"] == "caro"
    played = [(game.start_player, game) for game in games] + [(1, game) for game in result.games]
    for first, game in played:
        board = Board(7, 7, 4, start_player=first, rule=CARO)
        for move in game.moves:
            board.do_move(move)  # refuses a move after the end
        assert board.winner == game.winner


def test_the_engine_plays_caro_under_info_rule_8():
    from gomoku.play.engine.brain import EngineOptions, PbrainEngine

    # The engine's stones (1) at 1..4 on rows 4 and 2; on row 4 between two of the opponent's (2):
    # 5,4 makes a blocked five, no win; 0,2 or 5,2 wins.
    own = [(x, y, 1) for y in (4, 2) for x in range(1, 5)]
    theirs = [(0, 4, 2), (6, 4, 2), (0, 8, 2), (2, 8, 2), (4, 8, 2), (6, 8, 2), (8, 8, 2), (8, 6, 2)]
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(seed=0, max_playouts=30), out)
    for line in ("START 9", "INFO rule 8", "BOARD", *(f"{x},{y},{who}" for x, y, who in own + theirs), "DONE"):
        engine.handle(line)
    assert engine.rule is CARO
    assert out.getvalue().splitlines()[-1] in ("0,2", "5,2")
