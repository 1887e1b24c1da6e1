"""oneoffs/gumbel_rounds.py: one game's Gumbel search by rounds and one leaf at a time, measured side by side."""

import os
import re

from oneoffs import gumbel_rounds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_both_ways_choose_the_same_moves_and_the_rounds_batch_their_leaves(capsys):
    assert gumbel_rounds.main(["--model", os.path.join(ROOT, "models", "gomoku_15x15_5.npz"),
                               "--simulations", "32", "--positions", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 positions, 32 simulations, threats off" in out
    batch = float(re.search(r"rounds: ([\d.]+) positions a net call", out).group(1))
    assert batch > 1.5  # 16 root children in the first phase: several leaves a call
    assert "the same move in 2 of 2" in out
