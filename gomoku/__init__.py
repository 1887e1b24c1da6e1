"""Gomoku Zero: AlphaZero for Gomoku (five in a row) on PaddlePaddle.

The subpackages are layers; each imports only the layers below it:

* ``game``: the rules, the board's symmetries and saved games (NumPy only);
* ``net``: the Paddle policy-value network, its inference path, training step and model file;
* ``search``: the MCTS tree with its evaluators (the net's, random rollouts), the players,
  and many games in lockstep;
* ``train``: the training configuration, self-play, the actors that play games in worker
  processes, and ``TrainPipeline``;
* ``play``: the ways to play: the window, the text mode, the Gomocup engine and the arena.

``interrupt`` (Ctrl-C at a safe point), ``util`` (atomic writes, flag parsers) and
``progress`` (progress bars, on a terminal only) serve every layer. ``arena``, ``bench``, ``pbrain`` and ``plot`` here are the
short names of the commands: ``python -m gomoku.arena`` and so on.
"""

__version__ = "0.1.0"
