"""Hints and analyses are advice: one search per position, the same each time it is asked, in the
terminal and in the window, and the move they advise stands in their table of candidates."""

import dataclasses
import io
import os
import re

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame is imported anywhere
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np  # noqa: E402
import pygame  # noqa: E402
import pytest  # noqa: E402

from gomoku.game.board import Board  # noqa: E402
from gomoku.play.analysis import Analysis, advisor, position_seed, search_with_analysis  # noqa: E402
from gomoku.play.match import Match, setup_match  # noqa: E402
from gomoku.play.textplay import play_text  # noqa: E402
from gomoku.search.player_specs import PlayerSpec  # noqa: E402
from tests.helpers import press, window_opener  # noqa: E402

OPENING = ["c3", "d4", "c4", "d3"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A small untrained 6x6 model: its priors and values are arbitrary but real."""
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    path = str(tmp_path_factory.mktemp("model") / "m.npz")
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(path)
    return path


def small_match(white: str, seed=None) -> Match:
    board = Board(6, 6, 4)
    for label in OPENING:
        board.do_move(board.parse_move(label))
    return Match(board, {1: PlayerSpec("human"), 2: PlayerSpec.parse(white)}, seed=seed, device="cpu")


def advice(match: Match) -> Analysis:
    return search_with_analysis(advisor(match), match.board.copy())


def same(a: Analysis, b: Analysis) -> bool:
    return (a.move == b.move and np.array_equal(a.moves, b.moves) and np.array_equal(a.visits, b.visits)
            and np.allclose(a.q, b.q))


def ask_text(match: Match, commands: list[str]) -> str:
    out = io.StringIO()
    play_text(match, io.StringIO("".join(c + "\n" for c in commands + ["quit"])), out)
    return out.getvalue()


def check_text_advice(match: Match) -> str:
    """Asks hint, analyze, hint, analyze on one position; checks they agree; returns the hinted label."""
    out = ask_text(match, ["hint", "analyze", "hint", "analyze"])
    hints = re.findall(r"Hint: play (\w+)\.", out)
    analyses = re.findall(r"(win rate \d+%.*? #  move  visits.*?would play (\w+)\.)", out, re.S)
    assert len(hints) == 2 and hints[0] == hints[1], out
    assert len(analyses) == 2 and [a[1] for a in analyses] == hints, out
    assert analyses[0][0] == analyses[1][0]  # the same win rate and table, visits and all
    rows = re.findall(r"^ ?\d+  (\w+) ", analyses[0][0], re.M)
    assert hints[0] in rows, out
    assert re.search(rf"^ 1  {hints[0]} .*<- chosen$", analyses[0][0], re.M), out  # the table's first
    return hints[0]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("white", ["gumbel:{model}:24", "az:{model}:24", "pure:200"])
def test_the_same_position_gets_the_same_advice_and_the_advised_move_is_in_the_table(model, white):
    spec = white.format(model=model)
    first, again = advice(small_match(spec)), advice(small_match(spec))
    assert first.move is not None and same(first, again)
    assert first.move in [c.move for c in first.top(9)]
    check_text_advice(small_match(spec))


@pytest.mark.timeout(60)
def test_the_seed_names_the_position_and_the_matchs_seed():
    board = Board(6, 6, 4)
    empty = position_seed(board)
    board.do_move(board.parse_move("c3"))
    assert position_seed(board) != empty and position_seed(board) == position_seed(board.copy())
    assert position_seed(board, 7) != position_seed(board)
    assert position_seed(Board(7, 6, 4)) != empty and position_seed(Board(6, 6, 4, rule="caro")) != empty
    # The advisor is a fresh player seeded from the position whatever its seat's player did before.
    match = small_match("pure:200", seed=5)
    seat = match.players[2]
    assert advisor(match).rng.random() == np.random.default_rng(position_seed(match.board, 5)).random()
    assert advisor(match) is not seat


@pytest.mark.timeout(60)
def test_the_chosen_move_leads_the_table_even_when_few_visits_went_to_it():
    moves = np.arange(12)
    visits = np.array([9, 9, 8, 7, 6, 5, 4, 3, 2, 2, 1, 1], dtype=float)
    running = Analysis(1, (), moves, visits, np.zeros(12), np.full(12, 1 / 12), 0.0)
    assert [c.move for c in running.top(9)] == list(range(9))  # most visited first while it searches
    for move in (1, 11):  # the second of two equal counts (Gumbel's last round), a move with one visit
        ended = dataclasses.replace(running, move=move)
        top = [c.move for c in ended.top(9)]
        assert top == [move] + [m for m in range(12) if m != move][:8] and ended.best() == move
    assert dataclasses.replace(running, move=3).top(1)[0].move == 3


@pytest.mark.timeout(180)
def test_the_shipped_15x15_model_gives_one_hint_per_position_in_the_terminal_and_the_window(tmp_path):
    match = setup_match(size=(15, 15), playouts=16, device="cpu")
    for label in ("h8", "h9", "i8", "i9"):
        match.board.do_move(match.board.parse_move(label))
    assert match.specs[2].kind == "gumbel"  # the model's default search samples its root moves at random
    hinted = check_text_advice(match)
    with window_opener(tmp_path) as open_:
        window = open_(match)
        for _ in range(2):  # the window's H: the same search as the terminal's, asked twice
            window.forget_analyses()
            press(window, pygame.K_h)
            assert window.hint_task is not None and window.hint_task.wait(60)
            window.update()
            assert window.notice.startswith(f"Hint: play {hinted}.")
            window.draw()
        press(window, pygame.K_h)  # known now: answered at once, the same move
        assert window.hint_task is None and window.notice.startswith(f"Hint: play {hinted}.")
