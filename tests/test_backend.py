"""The one choice of a search backend (``search.backend``) and its reasons, and Gumbel's rounds on the
compiled core against the Python trees' rounds."""

import numpy as np
import pytest

from gomoku.game import rules
from gomoku.game.board import Board
from gomoku.search.backend import CORE, PYTHON, choose, open_search
from gomoku.search.core.planes import CORE_INPUTS
from gomoku.search.core.single import core_ready
from gomoku.search.evaluator import NetEvaluator
from gomoku.search.gumbel import GumbelPlayer
from gomoku.search.rollout import RolloutEvaluator
from tests.helpers import GUMBEL_PI_TOLERANCE, FakeNet

pytestmark = pytest.mark.timeout(240)


def _board(rule=rules.FREESTYLE, size=9):
    board = Board(size, size, 5, rule=rule)
    for move in (40, 41, 31):
        board.play(move)
    return board


def test_the_choice_says_why_it_falls_back_to_python(monkeypatch):
    net = NetEvaluator(FakeNet(81, 0))
    assert choose(_board(), net, "puct") == (CORE, "")
    assert choose(_board(), net, "gumbel") == (CORE, "")
    assert choose(_board(), RolloutEvaluator(0), "puct") == (PYTHON, "pure MCTS has no net")
    assert choose(_board(rules.CARO), net, "puct") == (PYTHON, "caro is not on the core")
    assert choose(_board(), net, None) == (PYTHON, "the player has no search tree")
    unknown = FakeNet(81, 0)
    unknown.input_version = max(CORE_INPUTS) + 1  # a version whose planes only the Python code writes
    assert choose(_board(), NetEvaluator(unknown), "puct") == (
        PYTHON, f"input version {unknown.input_version} is not on the core")
    monkeypatch.setenv("GOMOKU_CORE", "off")
    assert choose(_board(), net, "puct")[0] == PYTHON and "turned off" in choose(_board(), net, "puct")[1]


@pytest.mark.parametrize("threats", [False, True], ids=["plain", "threats"])
def test_gumbel_rounds_on_the_core_grow_the_python_rounds_tree(monkeypatch, threats):
    core_ready()
    results = []
    for core in ("on", "off"):
        monkeypatch.setenv("GOMOKU_CORE", core)
        player = GumbelPlayer(NetEvaluator(FakeNet(81, 3)), n_playout=48, threats=threats, seed=5)
        board = _board()
        move, pi = player.get_action(board, return_probs=True)
        assert player.backend.name == ("core" if core == "on" else "python")
        assert board.history == _board().history  # the board is left as it was
        results.append((move, pi, player.tree.root.N))
    (move_a, pi_a, n_a), (move_b, pi_b, n_b) = results
    assert move_a == move_b and n_a == n_b
    np.testing.assert_allclose(pi_a, pi_b, atol=GUMBEL_PI_TOLERANCE)


def test_the_backend_is_kept_while_it_is_the_one_chosen():
    core_ready()
    player = GumbelPlayer(NetEvaluator(FakeNet(81, 0)))
    first = open_search(player.tree, _board(), player.evaluator)
    assert open_search(player.tree, _board(), player.evaluator, first) is first
    assert open_search(player.tree, _board(rules.CARO), player.evaluator, first) is not first
