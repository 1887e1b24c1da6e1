"""The training layer: the run's settings (``config``), self-play (``selfplay``), the actors
that play every game in worker processes (``actors``, the one module that starts processes),
the replay buffer (``replay``), checkpoints (``checkpoint``), the loop itself (``pipeline``),
and two tools: the benchmark (``bench``) and the training curves (``plot``)."""
