"""The game layer: the rules (``board``), the board's symmetries (``symmetry``), saved games
(``gamefile``), random central openings (``openings``), the net's input planes (``features``),
the line-pattern board (``line_board``) and the VCF search on it (``vcf``), which the input
planes and the search layer's threat searches share. It imports no other layer (only
``gomoku.util``), and no Paddle or pygame."""
