"""The game layer: the rules (``board``), the board's symmetries (``symmetry``), saved games
(``gamefile``), random central openings (``openings``). It imports no other layer (only
``gomoku.util``), and no Paddle or pygame."""
