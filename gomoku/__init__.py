"""Gomoku Zero: AlphaZero for Gomoku (five in a row) on PaddlePaddle.

Layers, bottom to top: ``board`` (rules) and ``symmetry``; ``mcts`` with its
two evaluators (``rollout`` for pure MCTS, ``net`` for AlphaZero); ``selfplay``
(many games in lockstep); ``pipeline`` (the training loop); ``ui`` and the
entry scripts on top.
"""

__version__ = "0.1.0"
