"""The game layer: the rules (``board``), the board's symmetries (``symmetry``), saved games
(``gamefile``). It imports nothing else of the package and no Paddle or pygame."""
