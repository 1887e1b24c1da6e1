"""The ways to play, on top of everything: a match between two seats (``match``), the pygame
window (``ui``), the text mode (``textplay``), the Gomocup engine (``engine``), a referee
that plays engines against each other (``referee``) and the arena (``arena``)."""
