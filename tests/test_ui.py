"""The pygame window under SDL's dummy video driver: clicks, keys, the AI thread, the end of a game."""

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame is imported anywhere
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import time  # noqa: E402

import pygame  # noqa: E402
import pytest  # noqa: E402

from gomoku.game.board import Board  # noqa: E402
from gomoku.play.match import Match, setup_match  # noqa: E402
from gomoku.game.gamefile import load_game  # noqa: E402
from gomoku.search.player_specs import PlayerSpec  # noqa: E402
from gomoku.play.ui import GameWindow  # noqa: E402
from tests.helpers import click, click_move, press, settle, window_opener  # noqa: E402

BLACK_WINS = ["a1", "b1", "b2", "c1", "c3", "d1", "d4"]


@pytest.fixture
def make_window(tmp_path):
    with window_opener(tmp_path) as open_:
        def make(black="human", white="human", board=None, **kwargs):
            board = Board(6, 6, 4) if board is None else board
            return open_(Match(board, {1: PlayerSpec.parse(black), 2: PlayerSpec.parse(white)}, seed=0), **kwargs)

        yield make


def test_pixels_and_moves_agree(make_window):
    window = make_window()
    board = window.match.board
    for move in range(board.size):
        x, y = window.pixel_of(move)
        assert window.cell_at((x, y)) == move
        quarter = window.cell // 4
        assert window.cell_at((x + quarter, y - quarter)) == move
    # Row 1 is drawn at the bottom, column a at the left.
    assert window.pixel_of(board.parse_move("a1"))[1] > window.pixel_of(board.parse_move("a6"))[1]
    assert window.pixel_of(board.parse_move("a1"))[0] < window.pixel_of(board.parse_move("f1"))[0]
    left, top = window.pixel_of(board.parse_move("a6"))
    assert window.cell_at((left - window.cell, top)) is None
    assert window.cell_at((left, top - window.cell)) is None
    assert window.cell_at((window.size[0] - 5, window.size[1] - 5)) is None


def test_posted_clicks_land_where_they_should(make_window):
    window = make_window()
    board = window.match.board
    click_move(window, "c3")
    click_move(window, "e5")
    assert board.cells[board.parse_move("c3")] == 1
    assert board.cells[board.parse_move("e5")] == 2
    assert board.history == [board.parse_move("c3"), board.parse_move("e5")]


def test_illegal_clicks_change_nothing(make_window):
    window = make_window()
    board = window.match.board
    click_move(window, "c3")
    before = (list(board.cells), list(board.history))
    click_move(window, "c3")
    assert "c3 is taken" in window.notice
    click(window, (window.board_rect.left + 3, window.board_rect.top + 3))  # the board's margin
    assert "Click on a point" in window.notice
    click(window, (window.size[0] - 3, window.size[1] - 3))  # the status bar
    click(window, (-50, 10_000))
    assert (list(board.cells), list(board.history)) == before
    window.draw()


def test_a_game_played_to_the_end_shows_its_result(make_window):
    window = make_window()
    for label in BLACK_WINS:
        click_move(window, label)
    board = window.match.board
    assert board.winner == 1
    assert window.match.status() == "Black (human) wins"
    window.draw()
    click_move(window, "f6")
    assert "The game is over" in window.notice and board.cells[board.parse_move("f6")] == 0
    press(window, pygame.K_u)  # undo the winning move: play goes on
    assert board.winner is None and board.current_player == 1
    press(window, pygame.K_n)
    assert board.history == []


def test_against_pure_mcts_and_undo(make_window):
    window = make_window(white="pure:20")
    board = window.match.board
    click_move(window, "c3")
    window.update()
    assert window.thinking
    click_move(window, "d4")  # ignored while the AI thinks
    assert "is thinking" in window.notice
    window.draw()  # the progress bar
    settle(window)
    assert len(board.history) == 2 and board.current_player == 1
    press(window, pygame.K_u)
    assert board.history == []
    assert "Took back c3" in window.notice


def test_undo_while_the_ai_thinks_cancels_the_search(make_window):
    window = make_window(white="pure:100000")
    board = window.match.board
    click_move(window, "c3")
    window.update()
    task = window.task
    assert task is not None
    press(window, pygame.K_u)
    assert task.done and window.task is None
    assert board.history == [] and window.match.human_to_move
    window.update()
    assert board.history == []  # the cancelled search never plays


def test_closing_the_window_mid_search_exits_cleanly(make_window):
    window = make_window(white="pure:100000")
    click_move(window, "c3")
    window.update()
    task = window.task
    assert task is not None
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    started = time.monotonic()
    window.run(max_frames=5)
    assert not window.running and task.done
    assert time.monotonic() - started < 5


def test_keys_swap_save_and_change_players(make_window, tmp_path):
    window = make_window(white="pure:20")
    match = window.match
    click_move(window, "c3")
    settle(window)
    press(window, pygame.K_s)
    saved = [f for f in os.listdir(tmp_path / "games")]
    assert len(saved) == 1
    record = load_game(str(tmp_path / "games" / saved[0]))
    assert record.moves == match.board.history and record.players == {1: "human", 2: "pure:20"}
    press(window, pygame.K_x)  # the AI takes Black, whose turn it is
    assert str(match.specs[1]) == "pure MCTS 20" and match.is_human(2)
    settle(window)
    assert len(match.board.history) == 3 and match.human_to_move
    press(window, pygame.K_b)  # Black: pure -> heuristic
    assert match.specs[1].kind == "heuristic"
    press(window, pygame.K_b)  # Black: heuristic -> human
    assert match.is_human(1)
    press(window, pygame.K_w)  # White: human -> pure MCTS
    assert match.specs[2].kind == "pure"


def test_buttons_are_clickable(make_window):
    window = make_window()
    click_move(window, "c3")
    undo = next(b for b in window.buttons if b.text == "Undo" or b.key_hint == "U")
    click(window, undo.rect.center)
    assert window.match.board.history == []
    black_seat = window.buttons[0]
    click(window, black_seat.rect.center)
    assert window.match.specs[1].kind != "human"
    window.quit()


def test_review_shows_earlier_positions_and_blocks_clicks(make_window):
    window = make_window()
    for label in BLACK_WINS[:4]:
        click_move(window, label)
    press(window, pygame.K_LEFT)
    press(window, pygame.K_LEFT)
    assert window.view == 2 and window.shown_board().history == window.match.board.history[:2]
    window.draw()
    click_move(window, "f6")
    assert "Reviewing" in window.notice and len(window.match.board.history) == 4
    press(window, pygame.K_END)
    assert window.view is None
    click_move(window, "f6")
    assert len(window.match.board.history) == 5


def test_two_ais_play_to_the_end(make_window):
    window = make_window(black="pure:20", white="pure:20")
    settle(window, timeout=60)
    assert window.match.board.game_over
    window.draw()


def test_the_main_loop_runs_posted_events(make_window):
    window = make_window()
    for label in BLACK_WINS:
        pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=window.pixel_of(
            window.match.board.parse_move(label)), rel=(0, 0), buttons=(0, 0, 0)))
        pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=window.pixel_of(
            window.match.board.parse_move(label)), button=1))
    window.run(max_frames=3, fps=1000)
    assert window.match.board.winner == 1


def test_alphazero_and_policy_players_with_a_model(tmp_path, monkeypatch, make_window):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    monkeypatch.chdir(tmp_path)
    model = str(tmp_path / "m.npz")
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(model)
    match = setup_match(model=model, playouts=20, device="cpu", seed=0)
    window = GameWindow(match, surface=pygame.display.set_mode((10, 10)), ai_delay=0)
    click_move(window, "c3")
    settle(window)
    assert len(match.board.history) == 2
    press(window, pygame.K_w)  # AlphaZero -> pure MCTS
    press(window, pygame.K_w)  # -> policy net
    assert str(match.specs[2]) == "policy net"
    # the untrained net's first reply may be anywhere: the second move goes to a point still empty
    board = match.board
    click_move(window, next(label for label in ("d4", "a1", "f6") if board.cells[board.parse_move(label)] == 0))
    settle(window)
    assert len(match.board.history) == 4
    window.draw()
    window.quit()


class BrokenEvaluator:
    def evaluate(self, boards):
        raise RuntimeError("the net is on fire")


def test_a_failing_ai_shows_a_message_and_the_window_lives_on(make_window):
    window = make_window(white="pure:20")
    window.match.players[2].evaluator = BrokenEvaluator()
    click_move(window, "c3")
    window.update()
    window.task.wait(5)
    window.update()
    assert "The AI failed: the net is on fire" in window.notice
    window.update()
    assert window.task is None  # not retried in a loop
    window.draw()
    press(window, pygame.K_u)
    assert window.match.board.history == []


def test_a_loaded_finished_game_shows_its_result(tmp_path, monkeypatch, make_window):
    from gomoku.game.gamefile import GameRecord, save_game

    monkeypatch.chdir(tmp_path)
    board = Board(6, 6, 4)
    for label in BLACK_WINS:
        board.do_move(board.parse_move(label))
    save_game("g.json", GameRecord.from_board(board, {1: "human", 2: "pure:20"}))
    match = setup_match(load="g.json")
    window = GameWindow(match, surface=pygame.display.set_mode((10, 10)), ai_delay=0)
    window.update()
    assert window.task is None and match.status() == "Black (human) wins"
    press(window, pygame.K_HOME)
    assert window.shown_board().history == []
    window.draw()


# ------------------------------------------------------------------- rules
# On 9x9 under renju these moves leave Black to move with e5 a double three (f5 g5 across,
# e6 e7 up); White's stones sit harmlessly on row 1.
RENJU_DOUBLE_THREE = ["f5", "a1", "g5", "c1", "e6", "e1", "e7", "g1"]


def renju_board(moves=RENJU_DOUBLE_THREE):
    board = Board(9, 9, 5, rule="renju")
    for label in moves:
        board.do_move(board.parse_move(label))
    return board


def test_a_click_on_a_forbidden_point_is_refused_under_renju(make_window):
    from gomoku.play.ui_draw import FORBIDDEN

    window = make_window(board=renju_board())
    board = window.match.board
    e5 = board.parse_move("e5")
    assert pygame.display.get_caption()[0] == "Gomoku Zero (renju)"
    assert window.forbidden_marks() == [e5]
    window.draw()
    assert window.surface.get_at(window.pixel_of(e5))[:3] == FORBIDDEN  # the cross's centre
    before = (list(board.cells), list(board.history), board.current_player)
    click_move(window, "e5")
    assert (list(board.cells), list(board.history), board.current_player) == before
    assert window.notice == "e5 is forbidden for Black under renju: double three."
    window.draw()  # the message in the status line
    click_move(window, "d4")  # an allowed point is played
    assert board.history[-1] == board.parse_move("d4") and board.current_player == 2
    assert window.forbidden_marks() == []  # White has no forbidden points
    click_move(window, "a9")
    assert window.forbidden_marks() == [e5]  # still a double three for Black


def test_caro_in_the_window_a_five_between_two_white_stones_plays_on(make_window):
    # On 7x7 with four in a row: Black b1 c1 d1 between White a1 and f1; e1 makes a blocked four.
    window = make_window(board=Board(7, 7, 4, rule="caro"))
    assert pygame.display.get_caption()[0] == "Gomoku Zero (caro)"
    for label in ["b1", "a1", "c1", "f1", "d1", "a7"]:
        click_move(window, label)
    board = window.match.board
    click_move(window, "e1")
    assert board.winner is None and board.current_player == 2 and board.winning_line() == []
    click_move(window, "g7")
    click_move(window, "e2")  # b1 .. e1 is blocked, but e1 e2 and more: play on to an open line
    click_move(window, "g6")
    click_move(window, "e3")
    click_move(window, "g5")
    click_move(window, "e4")  # e1 e2 e3 e4, open above: wins
    assert board.winner == 1
    window.draw()


def test_forbidden_points_are_worked_out_once_per_position(make_window, monkeypatch):
    window = make_window(board=renju_board())
    board = window.match.board
    calls = []
    real = board.forbidden_moves
    monkeypatch.setattr(board, "forbidden_moves", lambda: calls.append(1) or real())
    window.run(max_frames=5, fps=1000)
    assert len(calls) == 1
    click_move(window, "d4")
    click_move(window, "a9")
    window.run(max_frames=5, fps=1000)
    assert len(calls) == 2


def test_forbidden_points_are_marked_only_for_a_human_black_under_renju(make_window):
    window = make_window(board=renju_board(), black="heuristic:1")
    assert window.forbidden_marks() == []  # an AI plays Black
    window.quit()
    window = make_window(board=renju_board(RENJU_DOUBLE_THREE + ["d4", "a9"]))
    press(window, pygame.K_LEFT)  # reviewing an earlier position: no marks
    assert window.forbidden_marks() == []
    press(window, pygame.K_END)
    assert window.forbidden_marks() == [window.match.board.parse_move("e5")]
    freestyle = Board(9, 9, 5)
    for label in RENJU_DOUBLE_THREE:
        freestyle.do_move(freestyle.parse_move(label))
    window = make_window(board=freestyle)
    assert window.forbidden_marks() == [] and pygame.display.get_caption()[0] == "Gomoku Zero"
    click_move(window, "e5")
    assert freestyle.cells[freestyle.parse_move("e5")] == 1


def test_a_saved_renju_game_loads_with_its_rule(make_window, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    window = make_window(board=renju_board())
    path = window.save()
    match = setup_match(load=path)
    assert match.board.rule == "renju" and load_game(path).rule == "renju"
    loaded = GameWindow(match, surface=pygame.display.set_mode((10, 10)), ai_delay=0)
    assert loaded.forbidden_marks() == [match.board.parse_move("e5")]
    press(loaded, pygame.K_HOME)
    assert loaded.shown_board().rule == "renju"


def test_a_long_player_name_fits_its_button():
    import pygame

    from gomoku.play.ui_draw import fit_label

    pygame.font.init()
    fonts = (pygame.font.SysFont(None, 24), pygame.font.SysFont(None, 18))
    name = "AlphaZero 400 (fpu 0.25, solver, threats, bf16)"
    assert fonts[0].render(name, True, (0, 0, 0)).get_width() > 150  # too long as it is
    label = fit_label(name, 150, fonts, (0, 0, 0))
    assert label.get_width() <= 150
    short = fit_label("human", 150, fonts, (0, 0, 0))
    assert short.get_width() == fonts[0].render("human", True, (0, 0, 0)).get_width()
