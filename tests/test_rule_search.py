"""Every search and feature follows the board's rule: the heuristic and its threat searches, the
tree search's threat solver, MCTS and Gumbel expansions, random rollouts, the threat planes and
saved games. Drawings: 'X' Black (player 1), 'O' White, '.' empty, a letter or '?' a marked
empty cell; the top line is the top row."""

import json

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.game.features import FIRST_THREAT_PLANE, OPPONENT_VCF, OWN_VCF, fill_threat_planes, planes
from gomoku.game.gamefile import GameFileError, GameRecord
from gomoku.game.line_board import LineBoard
from gomoku.game.rules import BLACK, CARO, FREESTYLE, RENJU, STANDARD, WHITE
from gomoku.game.vcf import find_vcf
from gomoku.search.gumbel import GumbelPlayer
from gomoku.search.heuristic import LEVELS, choose_move
from gomoku.search.lockstep import run_games
from gomoku.search.mcts import MCTS
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.rollout import RolloutEvaluator, pure_mcts_player, random_rollout_values
from gomoku.search.tree_threats import ThreatSolver, replays
from gomoku.search.vct import find_vct
from tests.helpers import HashEvaluator, drawn

OWN_FIVE, OWN_FOUR, OWN_OPEN_FOUR, OWN_OPEN_THREE = range(FIRST_THREAT_PLANE, FIRST_THREAT_PLANE + 4)

# '?' is a double three for Black (the horizontal and the vertical three both open), and the
# cell every level of the heuristic likes best under freestyle.
DOUBLE_THREE = """
...............
...............
...............
...............
...............
........O......
.......X.......
.......X.......
.....XX?.......
....O..........
........O......
......O........
...............
...............
..............."""

# White to move. White's diagonal three e5-f6-g7 is capped by Black's c3 and i9: playing 'a'
# (d4) makes a four whose only five cell is '?' (h8), Black's double three. Under renju Black
# may not block there, so 'a' wins; under freestyle Black blocks and White has no VCF.
WHITE_AIMS_AT_FORBIDDEN = """
O.............O
...............
...............
...............
...............
.......X.......
.......XX......
.....XX?.......
......O........
.....O.........
....O..........
...a...........
..X............
...............
O.............."""


# ------------------------------------------------------------------ the heuristic
@pytest.mark.timeout(20)
def test_the_heuristic_never_plays_a_forbidden_point_for_black():
    free, marks = drawn(DOUBLE_THREE, FREESTYLE)
    for level in LEVELS[1:]:
        assert choose_move(free, level, np.random.default_rng(0)) == marks["?"]  # the best cell
    board, _ = drawn(DOUBLE_THREE, RENJU)
    assert board.forbidden_moves() == [marks["?"]]
    for level in LEVELS:
        for seed in range(3):
            move = choose_move(board, level, np.random.default_rng(seed))
            assert move != marks["?"]
            board.check_move(move)  # legal under renju
    tb = LineBoard(board)
    assert np.isneginf(tb.scores(BLACK)[marks["?"]])
    assert marks["?"] not in tb.ranked(BLACK)
    assert np.isfinite(tb.scores(WHITE)[marks["?"]])  # White may play there


@pytest.mark.timeout(20)
def test_a_white_four_black_can_only_block_on_a_forbidden_point_wins():
    board, marks = drawn(WHITE_AIMS_AT_FORBIDDEN, RENJU, to_move=WHITE)
    line = find_vcf(LineBoard(board), WHITE)
    assert line == [marks["a"]]
    after = board.copy()
    after.do_move(marks["a"])
    assert after.forbidden_reason(marks["?"]) == "double three"
    for level in (2, 3, 4):
        assert choose_move(board, level, np.random.default_rng(0)) == marks["a"]
    assert find_vct(LineBoard(board), WHITE) == marks["a"]
    # The threat solver proves it, and the proof replays.
    found = ThreatSolver().root(board)
    assert found.win == [marks["a"]] and found.plies == 3
    assert replays(LineBoard(board), WHITE, found.win)

    free, _ = drawn(WHITE_AIMS_AT_FORBIDDEN, FREESTYLE, to_move=WHITE)
    assert find_vcf(LineBoard(free), WHITE) is None
    assert ThreatSolver().root(free).win is None


@pytest.mark.timeout(20)
def test_black_is_lost_when_its_only_block_is_forbidden():
    board, marks = drawn(WHITE_AIMS_AT_FORBIDDEN, RENJU, to_move=WHITE)
    board.do_move(marks["a"])
    # Black cannot block: whatever it plays is legal, and the tree search sees the loss.
    for level in LEVELS:
        move = choose_move(board, level, np.random.default_rng(1))
        board.check_move(move)
    tree = MCTS(solve=True)
    node = tree.root
    leaf = tree.select_leaf(board)
    assert leaf.value is None and leaf.moves is None  # the root: every legal move, none blocks
    tree.backup(leaf, board, np.full(board.size, 1.0 / board.size), 0.0)
    assert marks["?"] not in node.moves.tolist()
    # One level down, the same position is a proven loss for Black.
    parent = MCTS(solve=True)
    white, _ = drawn(WHITE_AIMS_AT_FORBIDDEN, RENJU, to_move=WHITE)
    root_leaf = parent.select_leaf(white)
    parent.backup(root_leaf, white, np.full(white.size, 1.0 / white.size), 0.0)
    index = int(np.flatnonzero(parent.root.moves == marks["a"])[0])
    parent.root.child_P[:] = 0.0
    parent.root.child_P[index] = 1.0
    leaf = parent.select_leaf(white)
    assert leaf.value == -1.0  # Black to move there, lost
    parent.backup(leaf, white, None, leaf.value)
    assert parent.root.proven == 1 and parent.best_move(white) == marks["a"]


@pytest.mark.timeout(20)
def test_standard_a_cell_that_makes_six_is_no_five():
    board, marks = drawn("""
        ...........
        ...........
        ...........
        .XXX?XX....
        ...........
        ...O..O....
        ...O..O....
        ...........""", STANDARD)
    assert board.winning_moves() == []
    tb = LineBoard(board)
    assert tb.five_cells(BLACK) == []
    assert marks["?"] not in tb.four_moves(BLACK)
    for level in LEVELS[1:]:
        move = choose_move(board, level, np.random.default_rng(0))
        board.check_move(move)
    free, _ = drawn("""
        ...........
        ...........
        ...........
        .XXX?XX....
        ...........
        ...O..O....
        ...O..O....
        ...........""", FREESTYLE)
    assert LineBoard(free).five_cells(BLACK) == [marks["?"]]
    assert choose_move(free, 1) == marks["?"]
    # White to move need not block it under standard: no five cell of Black to answer.
    white, _ = drawn("""
        ...........
        ...........
        ...........
        .XXX?XX....
        ...........
        ...O..O....
        ...O..O....
        ...........""", STANDARD, to_move=WHITE)
    assert LineBoard(white).five_cells(BLACK) == []


@pytest.mark.timeout(20)
def test_standard_and_renju_fives_are_exact_and_renju_white_overlines_win():
    text = """
        ...........
        ...........
        ...........
        ..XXXX?X...
        ...........
        ..OOOO.O...
        ...........
        ..........."""
    standard, marks = drawn(text, STANDARD)
    assert LineBoard(standard).five_cells(BLACK) == [marks["?"] - 5]  # b8 makes exactly five
    renju, _ = drawn(text, RENJU)
    tb = LineBoard(renju)
    assert tb.five_cells(BLACK) == [marks["?"] - 5]
    white_six = marks["?"] - 2 * renju.width
    assert white_six in tb.five_cells(WHITE)  # White wins with six under renju
    assert white_six not in LineBoard(standard).five_cells(WHITE)


# ------------------------------------------------------------------ tree search
def forbidden_positions(count: int, seed: int = 0) -> list:
    """Renju positions, Black to move, each with at least one forbidden point: random legal moves
    in the 7x7 centre of a 15x15 board."""
    rng = np.random.default_rng(seed)
    found = []
    centre = [r * 15 + c for r in range(4, 11) for c in range(4, 11)]
    while len(found) < count:
        board = Board(15, 15, 5, rule=RENJU)
        for _ in range(rng.integers(16, 28)):
            legal = [m for m in board.legal_moves() if m in centre] or board.legal_moves()
            board.do_move(int(rng.choice(legal)))
            if board.game_over:
                break
        if not board.game_over and board.current_player == BLACK and board.forbidden_moves():
            found.append(board)
    return found


@pytest.mark.timeout(30)
def test_mcts_under_renju_never_expands_or_plays_a_forbidden_point():
    for i, board in enumerate(forbidden_positions(4)):
        forbidden = set(board.forbidden_moves())
        for player in (pure_mcts_player(n_playout=30, seed=i),
                       MCTSPlayer(RolloutEvaluator(i), n_playout=30, threats=True, seed=i),
                       MCTSPlayer(HashEvaluator(), n_playout=30, solve=True, seed=i),
                       GumbelPlayer(HashEvaluator(), n_playout=16, seed=i)):
            move = player.get_action(board)
            assert move not in forbidden
            board.check_move(move)
            tree = player.mcts if hasattr(player, "mcts") else player.tree
            assert not forbidden & set(tree.root.moves.tolist())


@pytest.mark.timeout(20)
def test_renju_rollouts_play_legal_moves_and_standard_rollouts_are_exact(monkeypatch):
    rng = np.random.default_rng(0)
    boards = forbidden_positions(2, seed=1)
    play = Board.play
    played = []

    def checked_play(board, move):
        played.append(move)
        play(board, board.check_move(move))  # raises on a forbidden point

    monkeypatch.setattr(Board, "play", checked_play)
    values = random_rollout_values(boards * 10, rng)
    monkeypatch.undo()
    assert set(values.tolist()) <= {-1.0, 0.0, 1.0} and len(played) > 100
    # Black's gap on the top row makes six: a win for Black in freestyle rollouts, none in standard.
    text = """
        XXX.XX
        OO.O..
        ......
        O.....
        ......
        ......"""
    free, _ = drawn(text, FREESTYLE, n_in_row=5)
    standard, _ = drawn(text, STANDARD, n_in_row=5)
    assert random_rollout_values([free] * 400, rng).mean() > random_rollout_values([standard] * 400, rng).mean() + 0.2


@pytest.mark.timeout(20)
def test_lockstep_games_carry_the_rule():
    def new_game(i):
        player = pure_mcts_player(n_playout=4, seed=i)
        return Board(7, 7, 5, rule=RENJU), {1: player, 2: player}

    games, _ = run_games(2, new_game, parallel=2)
    for game in games:
        assert game.rule == RENJU
        board = Board.from_moves(game.width, game.height, game.n_in_row, game.moves, rule=game.rule)
        assert board.winner == game.winner


# ------------------------------------------------------------------ threat planes
@pytest.mark.timeout(20)
def test_threat_planes_under_standard_mark_no_overline_cell_as_a_five():
    text = """
        ...........
        ...........
        .XXX?XX....
        ...........
        ...O..O....
        ...O..O....
        ...O.......
        ..........."""
    board, marks = drawn(text, STANDARD)
    free, _ = drawn(text, FREESTYLE)
    cell = marks["?"]
    assert planes(free, 2).reshape(14, -1)[OWN_FIVE, cell] == 1.0
    p = planes(board, 2).reshape(14, -1)
    assert p[OWN_FIVE, cell] == 0.0 and p[OWN_FOUR, cell] == 0.0
    assert p[OWN_VCF].max() == 0.0
    # The version 1 planes do not depend on the rule.
    assert np.array_equal(planes(board, 1), planes(free, 1))


@pytest.mark.timeout(20)
def test_threat_planes_under_renju_leave_out_black_forbidden_points_and_see_white_aim_at_them():
    board, marks = drawn(DOUBLE_THREE, RENJU)
    free, _ = drawn(DOUBLE_THREE, FREESTYLE)
    cell = marks["?"]
    assert planes(free, 2).reshape(14, -1)[OWN_OPEN_THREE, cell] == 1.0
    assert planes(board, 2).reshape(14, -1)[OWN_OPEN_THREE, cell] == 0.0
    # Seen by White (to move), the same cell is the opponent's (Black's) and is left out too.
    white, _ = drawn(DOUBLE_THREE, RENJU, to_move=WHITE)
    assert planes(white, 2).reshape(14, -1)[FIRST_THREAT_PLANE + 4 + 3, cell] == 0.0
    # White's four onto Black's forbidden point is a VCF for White under renju only.
    renju, _ = drawn(WHITE_AIMS_AT_FORBIDDEN, RENJU, to_move=WHITE)
    free, _ = drawn(WHITE_AIMS_AT_FORBIDDEN, FREESTYLE, to_move=WHITE)
    assert planes(renju, 2).reshape(14, -1)[OWN_VCF].min() == 1.0
    assert planes(free, 2).reshape(14, -1)[OWN_VCF].max() == 0.0
    renju.current_player = BLACK
    assert planes(renju, 2).reshape(14, -1)[OPPONENT_VCF].min() == 1.0


# ------------------------------------------------------------------ saved games
@pytest.mark.timeout(20)
def test_game_records_keep_the_rule():
    board = Board(15, 15, 5, rule=RENJU)
    for move in (112, 113, 97, 128):
        board.do_move(move)
    record = GameRecord.from_board(board, {1: "human", 2: "heuristic:1"})
    data = record.to_json()
    assert data["rule"] == RENJU
    again = GameRecord.from_json(json.loads(json.dumps(data)))
    assert again.rule == RENJU and again.replay().rule == RENJU
    # A record written before rules existed reads as freestyle.
    del data["rule"]
    assert GameRecord.from_json(data).rule == FREESTYLE
    data["rule"] = "connect6"
    with pytest.raises(GameFileError, match="unknown rule 'connect6'"):
        GameRecord.from_json(data)
    # Black's ninth move h8 is a double three: refused under renju, fine under freestyle.
    moves = [110, 0, 111, 14, 127, 210, 142, 224, 112]
    GameRecord(15, 15, 5, moves).replay()
    with pytest.raises(GameFileError, match="move 9 cannot be played.*forbidden"):
        GameRecord(15, 15, 5, moves, rule=RENJU).replay()


# ------------------------------------------------------------------ whole games
@pytest.mark.timeout(30)
@pytest.mark.parametrize("rule", [RENJU, STANDARD])
def test_heuristic_games_follow_the_rule(rule):
    for level in (1, 4):
        for seed, opening in enumerate(((112, 113, 98), (112, 96, 128, 126))):
            rng = np.random.default_rng(seed)
            board = Board(15, 15, 5, rule=rule)
            for move in opening:
                board.do_move(move)
            while not board.game_over:
                board.do_move(choose_move(board, level, rng))  # refuses any illegal move
            again = Board.from_moves(15, 15, 5, board.history, rule=rule)
            assert again.winner == board.winner
            if board.winner:
                line = board.winning_line()
                assert len(line) == 5 or (rule == RENJU and board.winner == WHITE and len(line) >= 5)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("rule", [STANDARD, RENJU])
def test_line_boards_kept_in_step_match_fresh_ones(rule):
    rng = np.random.default_rng(3)
    solver = ThreatSolver()
    for _ in range(6):
        board = Board(9, 9, 5, rule=rule)
        for _ in range(rng.integers(8, 30)):
            board.do_move(int(rng.choice(board.legal_moves())))
            if board.game_over:
                break
        tb = solver.sync(board)
        fresh = LineBoard(board)
        np.testing.assert_array_equal(tb.counts, fresh.counts)
        for player in (1, 2):
            np.testing.assert_array_equal(tb.against[player], fresh.against[player])
        assert tb.padded == fresh.padded


@pytest.mark.parametrize("rule", [FREESTYLE, STANDARD, RENJU, CARO])
def test_a_line_board_from_the_planes_stones_and_its_vcf_reading_match_the_boards(rule):
    rng = np.random.default_rng(5)
    for _ in range(12):
        board = Board(9, 9, 5, rule=rule)
        for _ in range(rng.integers(6, 30)):
            board.do_move(int(rng.choice(board.legal_moves())))
            if board.game_over:
                board.undo()
                break
        mover = board.current_player
        stones = board.stones() if mover == 1 else np.array([0, 2, 1], dtype=np.uint8)[board.stones()]
        codes = fill_threat_planes(stones, 9, 9, 5, np.zeros((14, 81), np.float32), rule, mover)
        fresh = LineBoard(board)
        for built in (LineBoard.of_stones(stones, 9, 9, 5, rule, mover, codes),
                      LineBoard.of_stones(stones, 9, 9, 5, rule, mover)):
            np.testing.assert_array_equal(built.stones, fresh.stones)
            np.testing.assert_array_equal(built.counts, fresh.counts)
            for player in (1, 2):
                np.testing.assert_array_equal(built.live(player), fresh.live(player))
            assert built.padded == fresh.padded
        for player in (1, 2):
            fives, theirs, fours = fresh.threats(player)
            assert fives == fresh.five_cells(player)
            if not fives:
                assert theirs == fresh.five_cells(3 - player)
                assert {m: f for m, f in fours.items() if fresh.allowed([m], player)} == fresh.four_moves(player)
