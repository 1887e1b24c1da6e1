"""One game's search on the compiled core (``core.single.CoreSearch``) against the Python search.

With the same options, the same playouts and a deterministic stand-in for the net, the
core's search of one position must leave the same root as ``mcts.search``: the same
moves, visits, values and priors, so the same move; move after move with tree reuse too.
"""

import threading
import time

import numpy as np
import pytest

from gomoku.game import rules
from gomoku.game.board import Board
from gomoku.play.analysis import search_with_analysis
from gomoku.play.engine.move_search import PlayoutTimer, best_so_far, timed_search
from gomoku.search.backend import PYTHON, choose
from gomoku.search.core import core_enabled, layout
from gomoku.search.core.single import CoreSearch, core_ready
from gomoku.search.tree_search import TreeSearch
from gomoku.search.evaluator import NetEvaluator
from gomoku.search.mcts import MCTS, search
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.rollout import RolloutEvaluator
from tests.helpers import FakeClock, FakeNet

pytestmark = pytest.mark.skipif(not core_enabled(), reason="the compiled core is off (no numba, or GOMOKU_CORE=off)")

SHARP = {"fpu": 0.25, "solve": True}
THREATS = {"fpu": 0.25, "threats": True}


def _net(size, inputs=1, seed=0):
    net = FakeNet(size, seed, channels=4 if inputs == 1 else 14)
    net.input_version = inputs
    return net


def _board(width, rule, moves):
    board = Board(width, width, 5, rule=rule)
    for move in moves:
        board.play(move)
    return board


def _opening(width, rule, n, seed):
    """A position of ``n`` random moves near the centre, the game still going on."""
    rng = np.random.default_rng(seed)
    board = Board(width, width, 5, rule=rule)
    centre = width // 2
    while len(board.history) < n:
        row, col = centre + rng.integers(-2, 3, size=2)
        move = int(row * width + col)
        if board.cells[move] == 0 and move in board.legal_moves():
            board.play(move)
    assert not board.game_over
    return board


def _same_root(a, b):
    assert np.array_equal(a.moves, b.moves)
    assert np.array_equal(a.child_N, b.child_N)
    assert np.array_equal(a.child_Q, b.child_Q)
    assert np.array_equal(a.child_P, b.child_P)
    assert (a.N, a.proven, a.win) == (b.N, b.proven, b.win)


def _both(board, options, playouts, inputs=1, moves_after=()):
    """The reference and the core search ``board`` (then each move of ``moves_after`` and search
    again, keeping their trees); returns the two trees' roots and moves at each search."""
    evaluators = [NetEvaluator(_net(board.size, inputs)), NetEvaluator(_net(board.size, inputs), cache_size=0)]
    reference, core = MCTS(**options), CoreSearch(MCTS(**options))
    out = []
    positions = [board.copy()]
    for move in moves_after:
        positions.append(positions[-1].copy())
        positions[-1].play(move)
    for i, position in enumerate(positions):
        seen = []
        done_a = search(reference, position, evaluators[0], lambda done: done >= playouts)
        done_b = core.search(position, evaluators[1], lambda done: seen.append(done) or done >= playouts)
        assert done_a == done_b == playouts and seen == list(range(playouts + 1))
        assert position.history == positions[i].history  # the board is back at the root
        out.append((reference.root, core.tree.root, reference.best_move(position), core.tree.best_move(position)))
        if i + 1 < len(positions):
            move = moves_after[i]
            reference.advance(move)
            core.advance(move)
    return out


@pytest.mark.parametrize("rule", [rules.FREESTYLE, rules.RENJU])
@pytest.mark.parametrize("options", [SHARP, THREATS], ids=["sharp", "threats"])
def test_the_core_searches_a_9x9_position_as_the_reference(rule, options):
    core_ready()
    for seed in range(3):
        board = _opening(9, rule, 6 + 2 * seed, seed)
        for a, b, move_a, move_b in _both(board, options, 40, inputs=2 if "threats" in options else 1):
            _same_root(a, b)
            assert move_a == move_b


@pytest.mark.parametrize("rule", [rules.FREESTYLE, rules.RENJU])
@pytest.mark.parametrize("options", [SHARP, THREATS], ids=["sharp", "threats"])
def test_the_core_searches_a_15x15_position_as_the_reference(rule, options):
    core_ready()
    board = _opening(15, rule, 8, 1)
    for a, b, move_a, move_b in _both(board, options, 24, inputs=2 if "threats" in options else 1):
        _same_root(a, b)
        assert move_a == move_b


@pytest.mark.parametrize("options", [SHARP, THREATS], ids=["sharp", "threats"])
def test_the_kept_tree_goes_on_as_the_reference_over_moves(options):
    core_ready()
    board = _opening(9, rules.FREESTYLE, 4, 7)
    reference = MCTS(**options)
    search(reference, board, NetEvaluator(_net(81)), lambda done: done >= 30)
    mine = reference.best_move(board)
    reference.advance(mine)
    reply = int(reference.root.moves[reference.root.best_index()]) if reference.root.expanded else None
    after = [mine] + ([reply] if reply is not None else [])
    results = _both(board, options, 30, moves_after=after)
    assert len(results) == len(after) + 1
    for a, b, move_a, move_b in results:
        _same_root(a, b)
        assert move_a == move_b
    assert results[-1][1].N > 30  # the last search started from a kept subtree


def test_a_position_the_tree_does_not_stand_on_starts_afresh():
    core_ready()
    evaluator = NetEvaluator(_net(81))
    core = CoreSearch(MCTS(**SHARP))
    first = _board(9, rules.FREESTYLE, [40, 41])
    core.search(first, evaluator, lambda done: done >= 20)
    other = _board(9, rules.FREESTYLE, [40, 31])
    core.search(other, evaluator, lambda done: done >= 5)
    assert core.tree.root.N == 5  # a fresh tree: the first search's was not this position's
    core.reset()
    assert core.root_state() == (False, 0, 0)
    core.search(other, evaluator, lambda done: done >= 3)
    assert core.root_state()[2] == 3
    core.advance(31)  # a point taken on its board: the search is dropped, not played on
    assert core.s < 0
    core.search(other, evaluator, lambda done: done >= 2)
    core.reset()
    for move in range(200):  # a reset search follows no game: moves told to it are not played on its board
        core.advance(move % 81)
    core.search(first, evaluator, lambda done: done >= 4)
    assert core.root_state()[2] == 4 and core.trees.sint[core.s, layout.S_HLEN] == 2  # two stones in its history


def test_best_so_far_reads_the_core_root_from_another_thread():
    core_ready()
    board = _opening(15, rules.FREESTYLE, 6, 3)
    evaluator = NetEvaluator(_net(225))
    core = CoreSearch(MCTS(**SHARP))
    assert best_so_far(core, early=-7) == -7  # no search yet
    core.search(board, evaluator, lambda done: done >= 1)  # the root expanded, no child visited
    root = core.tree.root
    assert best_so_far(core, early=-7) == int(root.moves[np.argmax(root.child_P)])
    answers, running = [], threading.Event()
    running.set()

    def read():  # a reader that spins on the GIL would slow the search a hundredfold: it pauses between reads
        while running.is_set():
            answers.append(best_so_far(core, early=-7))
            time.sleep(0.0005)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        core.search(board, evaluator, lambda done: done >= 200)
    finally:
        running.clear()
        reader.join()
    legal = set(board.legal_moves())
    assert answers and all(a == -7 or a in legal for a in answers)
    root = core.tree.root
    assert best_so_far(core, early=-7) == int(root.moves[root.best_index()])


@pytest.mark.parametrize("options", [SHARP, THREATS], ids=["sharp", "threats"])
def test_the_engines_timed_search_runs_the_same_playouts_on_the_core(options):
    core_ready()
    board = _opening(15, rules.FREESTYLE, 6, 5)
    results = []
    for search in (TreeSearch(MCTS(**options)), CoreSearch(MCTS(**options))):
        evaluator = NetEvaluator(_net(225, 2 if "threats" in options else 1))
        playouts, _ = timed_search(search, board, evaluator, FakeClock(0.001), 0.0, 10.0, PlayoutTimer(), most_new=30)
        reference = search.tree
        results.append((playouts, reference.root, reference.best_move(board)))
    (n_a, a, move_a), (n_b, b, move_b) = results
    assert n_a == n_b == 30
    _same_root(a, b)
    assert move_a == move_b


def test_the_player_and_its_analysis_search_on_the_core_as_on_the_python_tree(monkeypatch):
    core_ready()
    board = _opening(9, rules.RENJU, 6, 2)
    runs = []
    for core in ("off", "on"):
        monkeypatch.setenv("GOMOKU_CORE", core)
        player = MCTSPlayer(NetEvaluator(_net(81)), n_playout=30, reuse_tree=True, **SHARP)
        shots = []
        game = board.copy()
        moves, analyses = [], []
        for _ in range(3):
            analysis = search_with_analysis(player, game, report=shots.append, every=0.0)
            assert player._on_core == (core == "on")
            moves.append(analysis.move)
            analyses.append(analysis)
            game.play(analysis.move)
            player.notify_move(analysis.move)
        runs.append((moves, analyses, shots))
    (moves_a, analyses_a, shots_a), (moves_b, analyses_b, shots_b) = runs
    assert moves_a == moves_b
    for a, b in zip(analyses_a, analyses_b):
        assert np.array_equal(a.visits, b.visits) and np.array_equal(a.q, b.q) and np.array_equal(a.moves, b.moves)
    assert [s.playouts for s in shots_a] == [s.playouts for s in shots_b]  # live snapshots of the core's root


def test_what_the_core_does_not_support_stays_on_the_python_tree(monkeypatch):
    board = _board(9, rules.FREESTYLE, [40])
    assert choose(board, RolloutEvaluator(0))[0] == PYTHON
    assert choose(_board(9, rules.CARO, [40]), NetEvaluator(_net(81)))[0] == PYTHON
    monkeypatch.setenv("GOMOKU_CORE", "off")
    assert choose(board, NetEvaluator(_net(81)))[0] == PYTHON
    player = MCTSPlayer(RolloutEvaluator(0), n_playout=10)
    monkeypatch.setenv("GOMOKU_CORE", "on")
    player.get_action(board)
    assert not player._on_core and player._core is None


@pytest.mark.parametrize("options", [SHARP, THREATS], ids=["sharp", "threats"])
def test_the_engine_answers_the_same_on_the_core_as_on_the_python_tree(monkeypatch, options):
    import io
    import re
    from pathlib import Path

    from gomoku.play.engine.brain import EngineOptions, PbrainEngine
    from gomoku.search.options import SearchOptions
    from tests.helpers import converse

    core_ready()
    model = Path(__file__).resolve().parents[1] / "models" / "gomoku_8x8_5.npz"
    turns = [["BOARD", "3,3,2", "DONE"], ["TURN 4,5"], ["TURN 2,2"]]
    runs = []
    for core in ("off", "on"):
        monkeypatch.setenv("GOMOKU_CORE", core)
        out = io.StringIO()
        engine = PbrainEngine(EngineOptions(model=str(model), device="cpu", max_playouts=60,
                                            search=SearchOptions(**options)), out, FakeClock(0.0001))
        assert converse(engine, out, "START 8", "INFO timeout_turn 60000")[-1] == "OK"
        replies = []
        for lines in turns:
            reply = converse(engine, out, *lines)
            replies.append([re.sub(r" in [\d.]+ s", "", line) for line in reply])
            assert engine._on_core == (core == "on")
        runs.append(replies)
    assert runs[0] == runs[1]


def test_without_a_cache_another_process_compiles_the_kernels_and_the_python_search_plays_meanwhile(monkeypatch):
    import time

    from gomoku.search.core import single

    core_ready()

    class Compiler:  # the compiling process: running at first, then done
        returncode = None
        done = threading.Event()

        def wait(self):
            self.done.wait(60)
            return self.returncode

    compiler = Compiler()
    monkeypatch.setattr(single, "_state", {"ready": False, "started": False, "compiler": None})
    monkeypatch.setattr(single, "cached", lambda: False)
    monkeypatch.setattr(single, "_compile_elsewhere", lambda: compiler)
    assert not core_ready(background=True) and single._state["compiler"] is compiler
    player = MCTSPlayer(NetEvaluator(_net(81)), n_playout=10, **SHARP)
    player.get_action(_board(9, rules.FREESTYLE, [40]))
    assert not player._on_core  # not ready yet: the Python tree searched
    compiler.returncode = 0
    compiler.done.set()
    deadline = time.monotonic() + 60
    while not core_ready(background=True):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    player.get_action(_board(9, rules.FREESTYLE, [40, 41]))
    assert player._on_core


def test_the_compiling_process_is_reaped_as_it_ends(monkeypatch):
    import subprocess
    import sys
    import time

    from gomoku.search.core import single

    core_ready()
    process = subprocess.Popen([sys.executable, "-c", "pass"])  # a compile that ends at once
    monkeypatch.setattr(single, "_state", {"ready": False, "started": False, "compiler": None})
    monkeypatch.setattr(single, "cached", lambda: False)
    monkeypatch.setattr(single, "_compile_elsewhere", lambda: process)
    assert not core_ready(background=True)
    deadline = time.monotonic() + 60
    while not single._state["ready"]:  # no further call: the process's end alone leads to the load
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert process.returncode == 0  # waited for (no zombie) by the thread that loaded the kernels
