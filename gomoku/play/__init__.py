"""The ways to play, on top of everything. Here, human play: a match between two seats
(``match``), the pygame window (``ui``), the text mode (``textplay``), the analysis of a
position (``analysis``) and ``play.py``'s command line (``cli``); the ``engine:COMMAND`` player
(``engine_player``). Below it, by who uses them: the Gomocup engine (``engine``), its checks
(``engine_check``: referee, soak, fuzz) and the arena (``arena``)."""
