"""The engine's checks, run by developers from a checkout rather than by players: a referee that
plays two engine processes against each other and checks every answer (``referee``), the soak
that plays hundreds of such games under drawn settings (``soak``, ``soak_run``, ``soak_report``)
and the protocol fuzz (``fuzz``). They speak to engines through the package's
``gomoku.play.engine_process``."""
