"""The ways to play, on top of everything: a match between two seats (``match``), the pygame
window (``ui``), the text mode (``textplay``), the Gomocup engine (``pbrain``) and the arena
(``arena``)."""
