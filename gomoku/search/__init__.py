"""The search layer: the MCTS tree and its one search loop (``mcts``), the evaluators that
make it AlphaZero (``evaluator``) or pure MCTS (``rollout``), Gumbel root search with
sequential halving for self-play (``gumbel``), the threat-aware heuristic player that needs
no tree (``heuristic``), the players built from short specs (``player_specs``, through the
registry ``player_registry``), the threat searches (``vct``, ``tree_threats``, over the game
layer's line board and VCF), and many games in lockstep with one batched evaluation a step
(``lockstep``). It imports the game and net layers."""
