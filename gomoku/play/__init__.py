"""The ways to play, on top of everything. Here, human play: a match between two seats
(``match``), the pygame window (``ui``), the text mode (``textplay``), the analysis of a
position (``analysis``) and ``play.py``'s command line (``cli``); the ``engine:COMMAND`` player
(``engine_player``) and the engine process it speaks to (``engine_process``). Below it, by who
uses them: the Gomocup engine (``engine``) and the arena (``arena``). The engine's checks
(referee, soak, fuzz) are developer tools outside the package, in ``devtools/engine_check``."""
