"""The arena (``gomoku-arena``, ``python -m gomoku.play.arena``): a match between two players
over many games (``run``), its settings (``settings``), its report and game files (``report``),
and the balanced openings it plays from (``balanced``)."""
