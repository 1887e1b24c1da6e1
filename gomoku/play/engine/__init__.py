"""The Gomocup engine (``pbrain-gomokuzero``, ``python -m gomoku.play.engine``): its command line
(``cli``), the brain that answers the protocol's lines (``brain``, ``brain_moves``), the timed
search (``move_search``) and the protocol's position, clock and parsing (``protocol``)."""
