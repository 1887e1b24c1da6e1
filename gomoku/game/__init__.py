"""The game layer: the rules (``board``), the board's symmetries (``symmetry``), saved games
(``gamefile``). It imports no other layer (only ``gomoku.util``), and no Paddle or pygame."""
