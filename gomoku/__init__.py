"""Gomoku Zero: AlphaZero for Gomoku (five in a row) on PaddlePaddle.

The subpackages are layers; each imports only the layers below it:

* ``game``: the rules, the board's symmetries and saved games (NumPy only);
* ``net``: the Paddle policy-value network, its inference path, training step and model file;
* ``search``: the MCTS tree with its evaluators (the net's, random rollouts), the players,
  and many games in lockstep;
* ``actors``: self-play and matches, played in the caller's process, in worker processes or on
  Ray actors, and the tasks they play;
* ``train``: the training configuration, the replay buffer, the learner, the evaluations and
  ``TrainPipeline``;
* ``play``: the ways to play: the window, the text mode, the Gomocup engine and the arena.

``interrupt`` (Ctrl-C at a safe point), ``util`` (atomic writes, flag parsers) and
``progress`` (progress bars, on a terminal only) serve every layer. The installed commands
(pyproject.toml) are ``gomoku-train`` (``train.cli``), ``gomoku-play`` (``play.cli``),
``gomoku-arena`` (``play.arena``) and ``pbrain-gomokuzero`` (``play.engine``).
"""

import os
import warnings

__version__ = "0.1.0"

# Paddle's C++ log lines and Python warnings that every run would print and none needs: the
# static-graph export's "not support input out tensor" and the oneDNN "Hardware support for
# BFLOAT16" notes (glog warnings and infos; errors still show, and a GLOG_minloglevel set by the
# user wins; it must be set before Paddle is imported), the ccache note of its build tools, and
# batch norm's note that it tracks running statistics in training (it always has).
os.environ.setdefault("GLOG_minloglevel", "2")
warnings.filterwarnings("ignore", message=".*ccache.*")
warnings.filterwarnings("ignore", message="When training, we now always track global mean and variance")
