"""The engine's checks, run by developers rather than players: a referee that plays two engine
processes against each other and checks every answer (``referee``), the soak that plays hundreds
of such games under drawn settings (``soak``, ``soak_run``, ``soak_report``) and the protocol fuzz
(``fuzz``)."""
