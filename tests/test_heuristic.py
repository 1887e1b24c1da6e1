"""The threat-aware heuristic: shapes, forced wins, defence, legality, its spec, the arena, the engine,
and the training evaluation against it."""

import io
import json
import os

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.game.line_board import LineBoard
from gomoku.game.vcf import find_vcf
from gomoku.play.arena.run import run_arena
from gomoku.play.arena.settings import ArenaSettings, parse_player
from gomoku.search.heuristic import LEVELS, HeuristicPlayer, choose_move
from gomoku.search.player_specs import PlayerSpec, make_player, spec_text
from tests.boards import load_board

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ALL = pytest.mark.parametrize("level", LEVELS)
SCORING = pytest.mark.parametrize("level", [level for level in LEVELS if level >= 1])  # the best score


def cell(board: Board, label: str) -> int:
    return board.parse_move(label)


def labels(board: Board, moves) -> list:
    return [board.move_to_label(m) for m in moves]


# ------------------------------------------------------------------ shapes
@ALL
def test_takes_a_five(level):
    board = load_board("""
        .........
        .........
        .........
        .........
        ..XXXX...
        ..OOO....
        .......O.
        .........
        .........
    """, to_move=1)
    assert labels(board, [choose_move(board, level)]) in (["b5"], ["g5"])


@ALL
def test_takes_its_own_five_before_blocking_one(level):
    board = load_board("""
        .........
        .........
        .XXXX....
        .........
        .........
        .OOOO....
        .........
        .........
        .........
    """, to_move=2)
    assert labels(board, [choose_move(board, level)]) in (["a4"], ["f4"])


@ALL
def test_blocks_a_four(level):
    board = load_board("""
        .........
        .........
        .........
        .........
        OXXXX....
        ...O.....
        ....O....
        .........
        .........
    """, to_move=2)
    assert labels(board, [choose_move(board, level)]) == ["f5"]


@ALL
def test_blocks_one_end_of_an_open_four(level):
    board = load_board("""
        .........
        .........
        .........
        .........
        ..XXXX...
        ...O.....
        ....O....
        .....O...
        .........
    """, to_move=2)
    assert labels(board, [choose_move(board, level)]) in (["b5"], ["g5"])


@SCORING
def test_makes_an_open_four_from_an_open_three(level):
    board = load_board("""
        .........
        .........
        .........
        .........
        ...XXX...
        .........
        .........
        O...O..O.
        .........
    """, to_move=1)
    move = choose_move(board, level)
    assert labels(board, [move]) in (["c5"], ["g5"])
    tb = LineBoard(board)
    tb.play(move, 1)
    assert len(tb.five_cells(1)) == 2


@pytest.mark.parametrize("level", [2, 3, 4])
def test_stops_an_open_three(level):
    board = load_board("""
        .........
        .........
        .........
        .........
        ...XXX...
        .........
        ....O....
        .........
        .........
    """, to_move=2)
    move = choose_move(board, level)
    tb = LineBoard(board)
    tb.play(move, 2)
    assert find_vcf(tb, 1) is None


def test_level_0_plays_one_of_the_best_scored_moves_at_random():
    """Away from fives, level 0 draws among the LEVEL0_CHOICES best-scored cells: a seed
    repeats its move, several seeds spread over those cells, and none lies outside them."""
    from gomoku.search.heuristic import LEVEL0_CHOICES

    board = load_board("""
        .........
        .........
        .........
        .........
        ...XXX...
        .........
        .........
        O...O..O.
        .........
    """, to_move=1)
    scores = LineBoard(board).scores(1)
    cutoff = np.sort(scores[np.isfinite(scores)])[::-1][LEVEL0_CHOICES - 1]
    moves = {choose_move(board, 0, np.random.default_rng(seed)) for seed in range(40)}
    assert all(scores[m] >= cutoff for m in moves) and len(moves) > 1
    again = [choose_move(board, 0, np.random.default_rng(3)) for _ in range(2)]
    assert again[0] == again[1]
    player = HeuristicPlayer(0, seed=5)
    assert str(player) == "heuristic 0" and scores[player.choose(board).move] >= cutoff


# --------------------------------------------------------------- forced wins
VCF_BOARD = """
    O.......O
    .........
    .........
    .........
    OXXX.....
    ....X....
    ....X....
    .........
    O.......O
"""


def test_finds_a_vcf_checked_by_hand():
    """X to move. X has a closed three b5-d5 (a5 is O) and a vertical two e3-e4.

    e5 makes the four b5-e5, whose only five cell is f5, and an open three e3-e5;
    O must block f5, and e2 then makes the open four e2-e5 (five cells e1 and e6).
    f5 first fails: O blocks e5 and both lines are dead. So the one VCF is
    e5, f5, e2.
    """
    board = load_board(VCF_BOARD, to_move=1)
    tb = LineBoard(board)
    line = find_vcf(tb, 1)
    assert labels(board, line) == ["e5", "f5", "e2"]
    for level in (2, 3, 4):
        assert labels(board, [choose_move(board, level)]) == ["e5"]
    # The line is real: replayed, each X move but the last leaves one five cell, the last two.
    for i, move in enumerate(line):
        tb.play(move, 1 if i % 2 == 0 else 2)
        if i % 2 == 0:
            assert len(tb.five_cells(1)) == (2 if i == len(line) - 1 else 1)
            if i < len(line) - 1:
                assert tb.five_cells(1) == [line[i + 1]]
    assert find_vcf(LineBoard(board), 2) is None  # O has nothing


VCT_BOARD = """
    O.......O
    .........
    .........
    .........
    ...XX....
    .....X...
    .....X...
    .........
    O.......O
"""


def test_finds_a_vct_checked_by_hand():
    """X to move, no four anywhere, so no VCF. f5 makes two open threes, d5-f5 (c5 and g5
    free, and b5 and h5 beyond) and f3-f5 (f2 and f6 free, and f1 and f7): O can stop
    one, X makes an open four with the other. Levels 3 and 4 play it."""
    board = load_board(VCT_BOARD, to_move=1)
    from gomoku.search.vct import find_vct

    assert find_vcf(LineBoard(board), 1) is None
    assert labels(board, [find_vct(LineBoard(board), 1)]) == ["f5"]
    for level in (3, 4):
        assert labels(board, [choose_move(board, level)]) == ["f5"]


@pytest.mark.parametrize("level", [3, 4])
def test_takes_the_point_of_the_opponents_double_three(level):
    """O to move on the same board: f5 is the one move that stops both of X's threes
    (X keeps threats elsewhere: four X stones against one O stone nearby)."""
    board = load_board(VCT_BOARD, to_move=2)
    assert labels(board, [choose_move(board, level)]) == ["f5"]


@pytest.mark.parametrize("level", [2, 3, 4])
def test_defends_against_the_opponents_vcf(level):
    board = load_board(VCF_BOARD, to_move=2)
    move = choose_move(board, level)
    tb = LineBoard(board)
    tb.play(move, 2)
    assert find_vcf(tb, 1) is None


def test_vcf_with_four_in_a_row_on_a_small_board():
    """6x6, 4 in a row, X to move. d4 makes b4-d4 (a4 is O, so its one five cell is e4)
    and the open d2-d4 (five cells d1 and d5): three five cells at once, so the VCF
    is d4 alone and every level from 1 plays it."""
    board = load_board("""
        .....O
        ......
        OXX...
        ...X..
        ...X..
        O....O
    """, n_in_row=4, to_move=1)
    tb = LineBoard(board)
    assert labels(board, find_vcf(tb, 1)) == ["d4"]
    for level in LEVELS[1:]:
        assert labels(board, [choose_move(board, level)]) == ["d4"]
    tb.play(cell(board, "d4"), 1)
    assert labels(board, tb.five_cells(1)) == ["d1", "e4", "d5"]


# ----------------------------------------------------------------- legality
@pytest.mark.parametrize("geometry", [(6, 6, 4), (7, 5, 5), (9, 9, 5), (5, 5, 3)])
def test_never_plays_an_illegal_move_and_repeats_itself_given_a_seed(geometry):
    for level in LEVELS:
        games = []
        for _ in range(2):
            board = Board(*geometry)
            rng = np.random.default_rng(7)
            players = {1: HeuristicPlayer(level, seed=3), 2: None}  # 2 plays at random
            while not board.game_over:
                if players[board.current_player] is None:
                    move = int(rng.choice(board.legal_moves()))
                else:
                    result = players[board.current_player].choose(board)
                    move, pi = result.move, result.pi
                    assert pi[move] == 1.0 and pi.sum() == 1.0
                board.do_move(move)  # raises on an illegal move
            games.append(board.history)
        assert games[0] == games[1]


def test_plays_the_centre_on_an_empty_board_and_answers_on_a_full_one():
    board = Board(15, 15, 5)
    assert choose_move(board, 3) == 7 * 15 + 7
    with pytest.raises(ValueError, match="game is over"):
        choose_move(Board.from_moves(5, 5, 3, [0, 5, 1, 6, 2]), 1)
    with pytest.raises(ValueError, match="heuristic level must be one of 0, 1, 2, 3, 4, got 9"):
        choose_move(board, 9)


def test_player_protocol():
    board = Board(6, 6, 4)
    player = HeuristicPlayer(2, seed=0)
    assert player.evaluator is None and player.playouts_run == 0 and player.next_leaf(board) is None
    move, pi = player.get_action(board, return_probs=True)
    assert pi.shape == (36,) and pi[move] == 1.0
    player.notify_move(move)
    player.reset()
    assert str(player) == "heuristic 2"


# --------------------------------------------------------------------- specs
def test_spec_parsing_and_writing():
    spec = PlayerSpec.parse("heuristic")
    assert spec.kind == "heuristic" and spec.level == max(LEVELS) and spec_text(spec) == "heuristic:4"
    spec = PlayerSpec.parse("Heuristic:1")
    assert spec.level == 1 and spec_text(spec) == "heuristic:1" and str(spec) == "heuristic 1"
    assert PlayerSpec.parse(spec_text(spec)) == spec
    for bad in ("heuristic:-1", "heuristic:5", "heuristic:x", "heuristic:"):
        with pytest.raises(ValueError, match="level .* must be one of 0, 1, 2, 3, 4"):
            PlayerSpec.parse(bad)
    with pytest.raises(ValueError, match="only a level"):
        PlayerSpec.parse("heuristic:1:2")
    player = make_player(PlayerSpec.parse("heuristic:2"), Board(6, 6, 4), seed=1)
    assert isinstance(player, HeuristicPlayer) and player.level == 2
    assert parse_player("heuristic:1").level == 1


def test_match_offers_the_heuristic_in_the_seat_cycle():
    from gomoku.play.match import setup_match

    match = setup_match(size=(7, 7), n_in_row=4, seed=0)  # a board without a shipped model
    assert [c.kind for c in match.choices] == ["human", "pure", "heuristic"]
    match.cycle_seat(2)
    assert match.specs[2].kind == "heuristic"
    match = setup_match(size=(6, 6), n_in_row=4, black="heuristic:1", white="heuristic:2", seed=0)
    while not match.board.game_over:
        match.play(match.ai_to_move.get_action(match.board))
    assert match.record().players == {1: "heuristic:1", 2: "heuristic:2"}


def test_arena_plays_the_heuristic_on_a_small_board():
    result = run_arena(ArenaSettings("heuristic:4", "pure:30", games=4, size=(6, 6), n_in_row=4,
                                     workers=1, seed=1))
    assert result.total.games == 4
    for game in result.games:
        board = Board.from_moves(6, 6, 4, game.moves)
        assert board.winner == game.winner


def test_engine_plays_the_heuristic():
    from gomoku.play.engine.brain import EngineOptions, PbrainEngine

    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(heuristic=2, n_in_row=5, seed=0), out)
    engine.run(["START 15", "BOARD", "0,0,1", "1,1,1", "2,2,1", "3,3,1", "9,9,2", "9,10,2", "9,11,2", "DONE",
                "END"])
    lines = out.getvalue().split()
    assert "4,4" in lines  # the four on the diagonal is completed
    assert "heuristic" in out.getvalue()


# ------------------------------------------------------------------ training
def test_training_evaluates_against_the_heuristic_ladder_and_resumes(tmp_path):
    from gomoku.actors.tasks import MatchGame
    from gomoku.train.checkpoint import read_checkpoint, write_checkpoint
    from gomoku.train.pipeline import TrainPipeline
    from tests.helpers import tiny_config

    run = str(tmp_path / "run")
    pipeline = TrainPipeline(tiny_config(eval_opponent="heuristic", gate_games=0), run, log=lambda s: None)
    pipeline.run(iterations=2)
    records = [__import__("json").loads(line) for line in open(os.path.join(run, "metrics.jsonl"))]
    evaluation = next(r for r in records if r["event"] == "evaluation")
    assert evaluation["opponent"] == "heuristic:0"  # the ladder starts at the bottom
    assert evaluation["heuristic_level"] == 0 and "pure_playouts" not in evaluation
    assert evaluation["wins"] + evaluation["draws"] + evaluation["losses"] == 2

    # A perfect score climbs one level and starts the best win ratio again.
    def all_won(a, b, geometry, openings, seed, **kwargs):
        assert b == PlayerSpec("heuristic", level=pipeline.heuristic_level)
        return [MatchGame(i, [], [], 1, 1) for i in range(len(openings))], None

    pipeline.actors.match = all_won
    record = pipeline.evaluate()
    assert record["opponent"] == "heuristic:0" and record["win_ratio"] == 1.0
    assert pipeline.heuristic_level == 1 and pipeline.best_win_ratio == 0.0
    for level in (2, 3, 4):
        pipeline.evaluate()
        assert pipeline.heuristic_level == level and pipeline.best_win_ratio == 0.0
    pipeline.evaluate()
    assert pipeline.heuristic_level == 4 and pipeline.best_win_ratio == 1.0  # the top of the ladder
    pipeline.save_checkpoint()
    assert TrainPipeline.resume(run, log=lambda s: None).heuristic_level == 4

    # A checkpoint without the heuristic ladder's level resumes with pure MCTS and the default level.
    path = os.path.join(run, "checkpoint.pkl")
    state = read_checkpoint(path)
    del state["heuristic_level"]
    for key in ("eval_opponent", "heuristic_level_start"):
        del state["config"][key]
    write_checkpoint(path, state)
    old = TrainPipeline.resume(run, log=lambda s: None)
    assert old.config.eval_opponent == "pure" and old.heuristic_level == 0
    assert old.eval_opponent() == PlayerSpec("pure", playouts=old.pure_playouts)

    # A resume that changes the yardstick starts its ladder where the flags say, with no best yet.
    old.best_win_ratio = 0.8
    old.pure_playouts = old.config.pure_playout_start + 1000
    old.save_checkpoint()
    switched = TrainPipeline.resume(run, log=lambda s: None, eval_opponent="heuristic", heuristic_level_start=2)
    assert switched.eval_opponent() == PlayerSpec("heuristic", level=2) and switched.best_win_ratio == 0.0
    assert switched.pure_playouts == switched.config.pure_playout_start  # both ladders start again
    kept = TrainPipeline.resume(run, log=lambda s: None, n_playout=16)
    assert kept.best_win_ratio == 0.8


def test_config_checks_the_evaluation_opponent_and_the_15x15_preset_uses_the_heuristic():
    from gomoku.train.config import TrainConfig, preset

    assert preset("15x15x5").eval_opponent == "heuristic"
    # The preset is the recipe of the run the shipped 15x15 model comes from (the first of its
    # lineage, which started from random weights): its config agrees on what shapes learning.
    with open(os.path.join(ROOT, "models", "gomoku_15x15_5.json")) as f:
        record = json.load(f)
    recipe = preset("15x15x5").validate()
    for field in ("threats", "inputs", "openings", "openings_share"):  # what the last run changed
        assert getattr(recipe, field) == record["config"][field], field
    while "started_from" in record:
        record = record["started_from"]
    shipped = record["config"]
    recipe = preset("15x15x5").validate()
    for field in ("width", "height", "n_in_row", "arch", "sizefree_blocks", "sizefree_filters", "sizes",
                  "size_schedule", "stage_iters", "root_search", "n_playout", "opening_stones", "win_check",
                  "buffer_size", "batch_size", "lr", "eval_opponent", "eval_opening_stones"):
        assert getattr(recipe, field) == shipped[field], field
    assert preset("6x6x4").eval_opponent == "pure" and preset("8x8x5").eval_opponent == "pure"
    with pytest.raises(ValueError, match="eval_opponent must be"):
        TrainConfig(eval_opponent="random").validate()
    with pytest.raises(ValueError, match="heuristic_level_start must be one of"):
        TrainConfig(heuristic_level_start=5).validate()
