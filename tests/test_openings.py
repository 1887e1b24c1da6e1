"""Openings files and balanced openings: reading, writing and refusing files, the generator's
tests of a candidate, and the arena, self-play and trainer starting games from a file."""

import os

import numpy as np

from gomoku.search.recipe import SelfPlayRecipe
import pytest

from gomoku.game.board import Board
from gomoku.game.openings import (BALANCED, DATA_DIR, OpeningError, book_for_board, format_openings,
                                  load_openings, openings_for_games, openings_path, read_openings)
from gomoku.play.arena import balanced
from gomoku.play.arena.run import run_arena
from gomoku.play.arena.settings import ArenaError, ArenaSettings
from tests.helpers import HashEvaluator

pytestmark = pytest.mark.timeout(120)


def write(tmp_path, text, name="openings.txt"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ------------------------------------------------------------------- files
def test_an_openings_file_reads_back_what_was_written(tmp_path):
    board = Board(9, 9, 5)
    openings = [[40, 41, 31], [40, 30, 50, 49]]
    text = format_openings(openings, 9, 9, 5, header=["two openings"], notes=["Black 0.5 of 4", ""])
    assert text.splitlines()[:3] == ["# two openings", "board 9x9 5", "e5 f5 e4                  # Black 0.5 of 4"]
    assert board.move_to_label(40) == "e5"
    path = write(tmp_path, text)
    assert read_openings(path, 9, 9, 5) == openings
    assert book_for_board(path, 9, 9, 5) == openings
    assert book_for_board(path, 11, 11, 5) == []  # another board of the run: not this file's


@pytest.mark.parametrize("text, message", [
    ("e5 f5\n", "starts with 'board"),
    ("board 9x9\ne5\n", "starts with 'board"),
    ("board 9x9 5\ne5 e5\n", "occupied"),
    ("board 9x9 5\ne5 z5\n", "off the 9x9 board"),
    ("board 9x9 5\ne5 5e\n", "cannot read"),
    ("board 9x9 5\n", "holds no openings"),
    ("board 11x11 5\ne5\n", "for 11x11 with 5 in a row, not 9x9 with 5"),
    ("board 9x9 5\na1 b1 a2 b2 a3 b3 a4 b4 a5\n", "already ends the game"),
])
def test_a_bad_openings_file_is_refused_with_its_line(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(OpeningError, match=message):
        read_openings(path, 9, 9, 5)


def test_a_missing_file_and_an_unshipped_board_are_refused(tmp_path):
    with pytest.raises(OpeningError, match="cannot read the openings file"):
        read_openings(str(tmp_path / "none.txt"), 9, 9, 5)
    with pytest.raises(OpeningError, match="no balanced openings ship for 7x7.*gomoku.play.arena.balanced"):
        openings_path(BALANCED, 7, 7, 5)
    assert book_for_board(BALANCED, 7, 7, 5) == []


def test_the_shipped_balanced_openings_read_and_are_distinct():
    path = openings_path(BALANCED, 15, 15, 5)
    assert os.path.dirname(path) == DATA_DIR
    openings = load_openings(BALANCED, 15, 15, 5)
    assert len(openings) >= 150
    assert all(3 <= len(moves) <= 6 for moves in openings)
    perms = [s.move_permutation(15, 15) for s in balanced.symmetries(15, 15)]
    assert len({balanced.canonical(moves, perms) for moves in openings}) == len(openings)


def test_balanced_under_renju_means_the_26_renju_openings():
    path = openings_path(BALANCED, 15, 15, 5, "renju")
    assert os.path.basename(path) == "renju_26_15x15.txt"
    openings = book_for_board(BALANCED, 15, 15, 5, "renju")
    assert len(openings) == 26 and all(len(moves) == 3 for moves in openings)
    assert load_openings(BALANCED, 15, 15, 5, "standard") == load_openings(BALANCED, 15, 15, 5)
    with pytest.raises(OpeningError, match="no balanced openings ship for 11x11 with 5 in a row under renju"):
        openings_path(BALANCED, 11, 11, 5, "renju")
    assert book_for_board(BALANCED, 11, 11, 5, "renju") == []


def test_a_shipped_file_is_named_without_its_folder(tmp_path, monkeypatch):
    openings = load_openings("renju_balanced_15x15", 15, 15, 5, "renju")
    assert openings_path("renju_balanced_15x15", 15, 15, 5) == os.path.join(DATA_DIR, "renju_balanced_15x15.txt")
    assert len(openings) >= 100 and all(3 <= len(moves) <= 6 for moves in openings)
    for moves in openings:  # every stone legal under renju, and no game over
        assert not Board.from_moves(15, 15, 5, moves, rule="renju").game_over
    perms = [s.move_permutation(15, 15) for s in balanced.symmetries(15, 15)]
    assert len({balanced.canonical(moves, perms) for moves in openings}) == len(openings)
    assert book_for_board("renju_balanced_15x15", 9, 9, 5, "renju") == []  # another board
    # A file of the same name where it is asked for wins, and an unknown name stays a path.
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "board 9x9 5\ne5 d4 f6\n", name="renju_balanced_15x15")
    assert load_openings("renju_balanced_15x15", 9, 9, 5) == [[40, 30, 50]]
    with pytest.raises(OpeningError, match="cannot read the openings file"):
        load_openings("no_such_openings", 15, 15, 5)


def test_games_take_each_opening_twice_and_start_over_when_they_run_out():
    openings = [[1], [2], [3]]
    games = openings_for_games(openings, 10, np.random.default_rng(0))
    assert len(games) == 10
    assert all(games[2 * k] == games[2 * k + 1] for k in range(5))
    assert sorted(map(tuple, games[0:6:2])) == [(1,), (2,), (3,)]  # all three before any repeats


# -------------------------------------------------------------- generator
def test_candidates_are_central_clusters_with_black_first():
    rng = np.random.default_rng(1)
    for stones in (3, 6):
        moves = balanced.draw_opening(15, 15, stones, rng)
        assert len(set(moves)) == stones
        cells = [divmod(m, 15) for m in moves]
        assert max(abs(r - 7) for r, _ in cells) <= balanced.RADIUS
        assert max(abs(c - 7) for _, c in cells) <= balanced.RADIUS
        for k in range(1, stones):  # each stone near an earlier one
            assert min(max(abs(cells[k][0] - r), abs(cells[k][1] - c)) for r, c in cells[:k]) <= balanced.SPREAD


def test_a_forced_win_for_either_side_is_found():
    # Black (to move after White's reply) has an open three: a VCT, whoever is to move.
    board = Board.from_moves(15, 15, 5, [112, 0, 113, 14, 114])
    assert board.current_player == 2
    assert balanced.has_forced_win(board)
    assert not balanced.has_forced_win(Board.from_moves(15, 15, 5, [112, 113, 98]))


def test_the_generator_keeps_only_near_even_openings_and_says_why(tmp_path):
    out = str(tmp_path / "b.txt")
    assert balanced.main(["--size", "9x9", "--count", "2", "--games", "2", "--low", "0.5",
                          "--stones", "3", "4", "--out", out]) == 0
    text = open(out).read()
    assert "balanced openings for 9x9" in text and "candidates:" in text
    openings = read_openings(out, 9, 9, 5)
    assert len(openings) == 2
    # --low 0.5 keeps only openings whose two balance games split 1-1.
    assert all("Black 0.500 of 2" in line for line in text.splitlines() if line[:1].isalpha() and "#" in line)
    again, _ = balanced.generate(9, 9, 5, 2, (3, 4), games=2, low=0.5, seed=0)
    assert [c.moves for c in again] == openings  # the seed decides


def test_the_generator_judges_openings_under_the_rule_it_is_given(tmp_path, monkeypatch):
    rules = []
    play_out = balanced.balance_game

    def balance_game(board, rng):
        rules.append(str(board.rule))
        return play_out(board, rng)

    monkeypatch.setattr(balanced, "balance_game", balance_game)
    out = str(tmp_path / "renju.txt")
    assert balanced.main(["--size", "9x9", "--rule", "renju", "--count", "1", "--games", "2", "--low", "0.5",
                          "--stones", "3", "4", "--out", out]) == 0
    text = open(out).read()
    assert "5 in a row (renju)" in text and "--rule renju" in text
    assert rules and set(rules) == {"renju"}
    assert len(read_openings(out, 9, 9, 5)) == 1


def test_the_generator_refuses_bad_flags(capsys):
    for flags in (["--stones", "5", "9"], ["--low", "0.7"], ["--rule", "renju", "--n-in-row", "4"]):
        with pytest.raises(SystemExit):
            balanced.main(flags + ["--out", "x"])
        assert "error" in capsys.readouterr().err


# ---------------------------------------------------------------- users
def test_the_arena_plays_each_file_opening_with_colours_swapped(tmp_path):
    path = write(tmp_path, "board 6x6 4\nc3 d4\nd3 c4 b2\n")
    result = run_arena(ArenaSettings("pure:10", "pure:10", games=4, size=(6, 6), n_in_row=4, workers=1,
                                     openings=path))
    openings = [g.opening for g in result.games]
    assert openings[0] == openings[1] and openings[2] == openings[3]
    assert sorted(map(len, openings[::2])) == [2, 3]
    assert result.summary()["openings"] == path
    with pytest.raises(ArenaError, match="for 6x6 with 4 in a row, not 7x7"):
        run_arena(ArenaSettings("pure:10", "pure:10", games=2, size=(7, 7), n_in_row=4, workers=1,
                                openings=path))


def test_self_play_starts_its_share_of_games_from_the_book():
    from gomoku.actors.selfplay import SelfPlayStream

    book = [(14, 15), (20, 21, 8)]
    for share, expected in ((1.0, 8), (0.0, 0)):
        stream = SelfPlayStream(HashEvaluator(), (6, 6, 4), 8, SelfPlayRecipe(n_playout=4), 2,
                                opening_book=book, openings_share=share)
        games, _ = stream.collect(8)
        from_book = [g for g in games if any(tuple(g.moves[:len(o)]) == o for o in book)]
        assert len(from_book) == expected


def test_the_trainer_refuses_an_openings_file_for_none_of_its_boards(tmp_path):
    from gomoku.train.config import TrainConfig

    path = write(tmp_path, "board 9x9 5\ne5 f5 e4\n")
    TrainConfig(width=9, height=9, openings=path, eval_openings=path).validate()
    TrainConfig(arch="sizefree", sizes="7,9", openings=path).validate()
    with pytest.raises(ValueError, match="--eval-openings .* none of the run's boards \\(8x8"):
        TrainConfig(eval_openings=path).validate()
    with pytest.raises(ValueError, match="openings_share"):
        TrainConfig(openings_share=1.5).validate()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_generator_keeps_the_same_openings_in_worker_processes():
    # The workers are the trainer's actors (actors/workers.py); the candidates are judged in seed order either way.
    here = balanced.generate(9, 9, 5, 2, stones=(3, 4), games=2, seed=1)
    assert balanced.generate(9, 9, 5, 2, stones=(3, 4), games=2, seed=1, workers=2) == here
    assert here[1]["kept"] == 2 and len(here[0]) == 2
