"""scripts/turning_points.py: the move that lost a game, found by the heuristic's threat searches."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "turning_points.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import turning_points as tp  # noqa: E402

from gomoku.game.board import Board  # noqa: E402
from gomoku.game.gamefile import GameRecord  # noqa: E402

pytestmark = pytest.mark.timeout(120)

# On 9x9: Black makes an open three on row 5 (e5 f5 g5) and White answers on a1 instead of
# d5 or h5; Black's open four (d5) then wins, whatever White does. White's earlier moves
# (e6, f6) leave Black nothing forced.
LABELS = "e5 e6 f5 f6 g5 a1 d5 c5 h5".split()


def record() -> GameRecord:
    board = Board(9, 9, 5)
    game = GameRecord(9, 9, 5, [board.parse_move(m) for m in LABELS], 1, {}, 1)
    game.replay()
    return game


class FakeNet:
    """Priors: a1 0.6, d5 0.2, b2 0.1, the rest a little each."""

    def evaluate(self, boards):
        board = boards[0]
        priors = np.full((1, board.size), 0.001)
        for label, p in (("a1", 0.6), ("d5", 0.2), ("b2", 0.1)):
            priors[0, board.parse_move(label)] = p
        return priors, np.zeros(1)


def test_the_move_that_ignored_an_open_three_is_the_turning_point():
    point = tp.find_turning_point(record(), loser=2)
    assert (point.stone, point.move, point.kind) == (6, "a1", "VCF")
    assert point.prior is None and point.safe == []


def test_opening_stones_are_not_the_losers_moves():
    # With the first six stones given as the opening, White's first own move is c5 (stone 8),
    # after which Black completes the line at once.
    point = tp.find_turning_point(record(), loser=2, opening=6)
    assert (point.stone, point.move) == (8, "c5")


def test_the_nets_view_of_the_turning_point():
    point = tp.find_turning_point(record(), loser=2, evaluator=FakeNet(), top=3)
    assert point.prior == pytest.approx(0.6)
    # Of the net's three best moves only the block d5 leaves Black without a forced win.
    assert [label for label, _ in point.safe] == ["d5"]


# On 9x9: Black's e5 f5 g5 h5 is a four closed by d5; White plays a1 instead of i5 and loses.
FOUR_LABELS = "e5 d5 f5 e6 g5 c3 h5 a1 i5".split()


class FakeNetFour:
    """Priors: a1 0.6, the block i5 0.2, b2 0.1, the rest a little each; every value 0."""

    def evaluate(self, boards):
        priors = np.full((len(boards), boards[0].size), 0.001)
        for label, p in (("a1", 0.6), ("i5", 0.2), ("b2", 0.1)):
            priors[:, boards[0].parse_move(label)] = p
        return priors, np.zeros(len(boards))


def test_searches_at_the_turning_point_say_whether_they_keep_the_game():
    board = Board(9, 9, 5)
    game = GameRecord(9, 9, 5, [board.parse_move(m) for m in FOUR_LABELS], 1, {}, 1)
    game.replay()
    point = tp.find_turning_point(game, loser=2)
    assert (point.stone, point.move, point.kind) == (8, "a1", "VCF")
    assert point.before.move_to_label(point.before.last_move) == "h5"
    searches = tp.parse_searches("gumbel:16,puct:50,gumbel:1,puct:1")
    tp.try_searches(point, FakeNetFour(), searches, seeds=3)
    # Enough search sees that every move but i5 lets Black complete the line (the win check);
    # one simulation follows the prior to a1.
    kept = {spec: (found[0], found[1]) for spec, found in point.searches.items()}
    assert kept == {"gumbel:16": (3, 3), "puct:50": (1, 1), "gumbel:1": (0, 3), "puct:1": (0, 1)}
    assert all(0 <= found[2] <= found[3] for found in point.searches.values())  # threat seconds within the search's


def test_the_command_line_runs_the_searches_of_a_model(tmp_path):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    model = tmp_path / "small.npz"
    PolicyValueModel(NetSpec(9, 9, 5, "sizefree", 2, 8, ((9, 9),)), device="cpu").save(str(model))
    board = Board(9, 9, 5)
    game = GameRecord(9, 9, 5, [board.parse_move(m) for m in FOUR_LABELS], 1, {}, 1)
    game.replay()
    single = tmp_path / "game.json"
    single.write_text(json.dumps(game.to_json()))
    result = subprocess.run([sys.executable, SCRIPT, str(single), "--player", "white", "--model", str(model),
                             "--search", "gumbel:8,puct:16", "--seeds", "2"],
                            capture_output=True, text=True, cwd=ROOT, timeout=100)
    assert result.returncode == 0, result.stderr
    line, summary, gumbel, puct = result.stdout.strip().splitlines()
    assert re.search(r"after stone 8 \(a1\) .*; gumbel:8 kept it [0-2]/2; puct:16 kept it [01]/1$", line)
    assert summary.startswith("1 lost games; a turning point in 1")
    assert re.fullmatch(r"gumbel:8 kept the game in [0-2] of 2 searches; a search took \d+ ms, \d+ ms of it in "
                        r"the root's threat searches", gumbel)
    assert puct.startswith("puct:16 kept the game in ") and " of 1 searches; " in puct


@pytest.mark.parametrize("text", ["gumbel", "gumbel:0", "mcts:100", "puct:8,", "gumbel:x"])
def test_bad_search_specs_are_refused(text):
    with pytest.raises(ValueError, match="KIND:SIMULATIONS"):
        tp.parse_searches(text)


def test_a_winner_has_no_turning_point_to_show(tmp_path):
    line = dict(record().to_json(), game=3, opening=[], colours={"A": "black", "B": "white"}, winner="A")
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(line) + "\n" + json.dumps(dict(line, game=4, colours={"A": "white", "B": "black"},
                                                               winner="B")) + "\n")
    result = subprocess.run([sys.executable, SCRIPT, str(games), "--player", "A"], capture_output=True,
                            text=True, cwd=ROOT, timeout=100)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("game 4: lost as White in 9 stones; after stone 6 (a1) the opponent had a VCF")
    assert lines[-1] == "1 lost games; a turning point in 1, at stone 6 to 6 (1 VCF, 0 VCT)"


def test_bad_input_is_refused_clearly(tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    result = subprocess.run([sys.executable, SCRIPT, str(broken)], capture_output=True, text=True,
                            cwd=ROOT, timeout=100)
    assert result.returncode == 2 and "neither a game record" in result.stderr
    # A single game file from play.py says nothing of A and B: it needs --player black or white.
    single = tmp_path / "game.json"
    single.write_text(json.dumps(record().to_json()))
    result = subprocess.run([sys.executable, SCRIPT, str(single)], capture_output=True, text=True,
                            cwd=ROOT, timeout=100)
    assert result.returncode == 2 and "--player black or white" in result.stderr
    result = subprocess.run([sys.executable, SCRIPT, str(single), "--player", "white"], capture_output=True,
                            text=True, cwd=ROOT, timeout=100)
    assert result.returncode == 0 and "after stone 6 (a1)" in result.stdout
    for flags, message in ((["--search", "gumbel:64"], "--search needs --model"),
                           (["--search", "gumbel", "--model", "any.npz"], "bad search 'gumbel'")):
        result = subprocess.run([sys.executable, SCRIPT, str(single), "--player", "white", *flags],
                                capture_output=True, text=True, cwd=ROOT, timeout=100)
        assert result.returncode == 2 and message in result.stderr
