"""The AI's view: snapshots of a search's root, the window's win-rate bar, top moves, heat map and hint."""

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame is imported anywhere
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import threading  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pygame  # noqa: E402
import pytest  # noqa: E402

from gomoku.game.board import Board  # noqa: E402
from gomoku.play.analysis import (Analysis, analysis_text, hint_text, search_with_analysis,  # noqa: E402
                                  snapshot)
from gomoku.play.match import Match  # noqa: E402
from gomoku.play.ui import SearchTask  # noqa: E402
from gomoku.search.heuristic import HeuristicPlayer  # noqa: E402
from gomoku.search.player_specs import PlayerSpec  # noqa: E402
from gomoku.search.rollout import pure_mcts_player  # noqa: E402
from tests.helpers import click_move, press, settle, window_opener  # noqa: E402


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A small untrained 6x6 model: its priors and values are arbitrary but real."""
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    path = str(tmp_path_factory.mktemp("model") / "m.npz")
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(path)
    return path


@pytest.fixture
def make_window(tmp_path):
    with window_opener(tmp_path) as open_:
        def make(black="human", white="human", model=None, moves=()):
            board = Board(6, 6, 4)
            for label in moves:
                board.do_move(board.parse_move(label))
            specs = {1: PlayerSpec.parse(black, default_model=model), 2: PlayerSpec.parse(white, default_model=model)}
            return open_(Match(board, specs, seed=0, device="cpu"))

        yield make


# ------------------------------------------------------------------ analysis
def test_a_snapshot_copies_the_root_and_agrees_with_the_tree():
    board = Board(6, 6, 4)
    player = pure_mcts_player(n_playout=120, seed=0)
    assert snapshot(player, board) is None  # nothing searched yet
    move = player.get_action(board)
    shot = snapshot(player, board)
    root = player.mcts.root
    assert shot.history == () and shot.player == 1
    assert np.array_equal(shot.moves, root.moves) and np.array_equal(shot.visits, root.child_N)
    assert shot.root_value == pytest.approx(player.mcts.root_value())
    assert shot.best() == int(shot.moves[np.argmax(shot.visits)])
    assert move in shot.moves
    root.child_N[:] = 0  # the record owns its arrays
    assert shot.playouts > 0
    assert snapshot(HeuristicPlayer(), board) is None


def test_a_half_made_root_gives_no_snapshot():
    board = Board(6, 6, 4)
    player = pure_mcts_player(n_playout=30, seed=0)
    player.get_action(board)
    root = player.mcts.root
    root.child_Q = root.child_Q[:-1]  # as if read in the middle of an expansion
    assert snapshot(player, board) is None
    root.child_Q = None
    assert snapshot(player, board) is None


def test_win_rates_are_for_the_side_asked_and_top_moves_come_most_visited_first():
    a = Analysis(2, (0,), np.array([5, 7, 9]), np.array([10.0, 30.0, 0.0]), np.array([0.2, -0.4, 0.0]),
                 np.array([0.3, 0.5, 0.2]), root_value=0.5)
    assert a.win_rate() == a.win_rate(2) == pytest.approx(0.75)
    assert a.win_rate(1) == pytest.approx(0.25)
    top = a.top()
    assert [c.move for c in top] == [7, 5]  # no visit, not shown
    assert top[0].share == pytest.approx(0.75) and top[0].win_rate == pytest.approx(0.3)
    assert a.best() == 7 and a.playouts == 40
    assert Analysis(1, ()).win_rate() is None and Analysis(1, (), net_value=0.0).win_rate() == 0.5
    board = Board(6, 6, 4)
    board.do_move(0)
    assert "Hint: play b2. White's win rate 75% after 40 visits of test." == hint_text(a, board, "test")
    assert "White would play b2." in analysis_text(a, board, "test")


def test_a_running_search_reports_consistent_snapshots_from_its_own_thread():
    board = Board(6, 6, 4)
    player = pure_mcts_player(n_playout=400, seed=0)
    seen = []
    threads = set()

    def report(analysis):
        seen.append(analysis)
        threads.add(threading.get_ident())

    final = search_with_analysis(player, board, report=report, every=0.0)
    assert len(seen) > 10 and threads == {threading.get_ident()}
    counts = [s.playouts for s in seen]
    assert counts == sorted(counts)
    assert final.move is not None and final.playouts >= counts[-1]
    assert final.policy is None and final.net_value is None  # pure MCTS has no net


def test_a_net_player_brings_the_policy_over_the_legal_points(model):
    from gomoku.play.analysis import net_evaluator, policy_of

    match = Match(Board(6, 6, 4), {1: PlayerSpec("human"), 2: PlayerSpec.parse("az:" + model + ":30")},
                  seed=0, device="cpu")
    board = match.board
    board.do_move(board.parse_move("c3"))
    player = match.players[2]
    policy, value = policy_of(net_evaluator(player), board)
    assert policy.sum() == pytest.approx(1.0) and policy[board.parse_move("c3")] == 0
    assert -1.0 <= value <= 1.0
    final = search_with_analysis(player, board.copy())
    assert np.allclose(final.policy, policy) and final.net_value == pytest.approx(value)
    assert final.playouts > 0 and final.player == 2


# -------------------------------------------------------------------- window
def test_the_window_draws_the_live_search_without_touching_the_tree(make_window, monkeypatch):
    # A fast machine finishes this search before its first snapshot is due, so the search reports
    # after every playout and holds still once it has a move to show until the window has drawn it.
    from gomoku.play import analysis as analysis_module

    drawn = threading.Event()
    search = analysis_module.search_with_analysis

    def held(player, board, stop=None, report=None, every=None):
        def report_and_hold(shot):
            report(shot)
            if shot.top():  # a root with visits to show
                drawn.wait(60)

        return search(player, board, stop=stop, report=report_and_hold, every=0.0)

    monkeypatch.setattr(analysis_module, "search_with_analysis", held)
    window = make_window(white="pure:1500", moves=["c3"])
    window.update()
    task = window.task
    assert isinstance(task, SearchTask)
    live = 0
    deadline = time.monotonic() + 60
    while not task.done and time.monotonic() < deadline:
        window.draw()  # the drawing loop runs while the thread searches
        analysis, how = window.analysis_for(window.match.board)
        if how == "live" and analysis.top():
            live += 1
            drawn.set()
        time.sleep(0.01)
    drawn.set()
    assert task.wait(60)
    assert live > 0 and task.error is None
    settle(window)
    board = window.match.board
    analysis, how = window.analysis_for(board)  # after the move: the search that chose it
    assert how == "after" and analysis.move == board.history[-1]
    assert analysis.win_rate(board.current_player) is not None
    window.draw()


def test_hint_shows_the_ais_move_for_the_human_and_a_click_plays_it(make_window):
    window = make_window(white="pure:40")
    press(window, pygame.K_h)
    assert window.hint_task is not None
    window.hint_task.wait(30)
    window.update()
    board = window.match.board
    assert window.hint_key == () and window.notice.startswith("Hint: play ")
    hinted = window.analyses[()].best()
    window.draw()
    click_move(window, board.move_to_label(hinted))
    assert board.history[0] == hinted
    settle(window)
    press(window, pygame.K_h)  # again, for the new position
    window.hint_task.wait(30)
    window.update()
    assert window.hint_key == tuple(board.history)


def test_a_click_or_undo_while_the_hint_searches_stops_it(make_window):
    window = make_window(white="pure:40", black="human")
    window.match.choices = [PlayerSpec("human"), PlayerSpec.parse("pure:100000")]
    window.match.set_seat(2, PlayerSpec("human"))  # no AI seat: the hint uses the choices
    press(window, pygame.K_h)
    task = window.hint_task
    assert task is not None
    window.draw()  # the status line shows the hint's search
    click_move(window, "c3")
    assert task.done and window.hint_task is None and window.match.board.history
    press(window, pygame.K_h)
    task = window.hint_task
    press(window, pygame.K_u)
    assert task.done and window.hint_task is None and window.hint_key is None


def test_hint_is_refused_when_no_human_is_to_move(make_window):
    window = make_window(black="pure:3000", white="pure:3000")
    window.update()
    press(window, pygame.K_h)
    assert window.hint_task is None and "human's move" in window.notice


def test_the_heat_map_shows_the_policy_net_and_says_when_there_is_none(make_window, model):
    window = make_window(white="az:" + model + ":20")
    press(window, pygame.K_p)
    assert window.show_heatmap and "policy net's prior" in window.notice
    policy, value = window.policy_for(window.match.board)
    assert policy.sum() == pytest.approx(1.0)
    window.draw()
    press(window, pygame.K_a)
    assert not window.show_moves
    window.draw()

    plain = make_window(white="pure:20")
    press(plain, pygame.K_p)
    assert "no policy net" in plain.notice and plain.policy_for(plain.match.board) is None
    plain.draw()


def test_players_without_a_search_leave_the_bar_empty_and_the_window_whole(make_window, model):
    window = make_window(white="heuristic", moves=["c3"])
    settle(window)
    board = window.match.board
    analysis, how = window.analysis_for(board)
    assert how == "after" and analysis.top() == [] and analysis.win_rate() is None
    window.draw()
    press(window, pygame.K_h)  # the heuristic's hint: a move, no win rate
    window.hint_task.wait(30)
    window.update()
    assert window.notice.startswith("Hint: play ") and "win rate" not in window.notice
    window.draw()
    policy = make_window(white="policy:" + model, moves=["c3"])
    settle(policy)
    analysis, how = policy.analysis_for(policy.match.board)
    assert how == "after" and analysis.win_rate() is not None and analysis.policy is not None
    policy.draw()
