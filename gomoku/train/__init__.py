"""The training layer: the run's settings (``config``), the replay buffer (``replay``), the
learner (``learner``), checkpoints (``checkpoint``), the metrics file (``metrics``), the
evaluations (``evaluation``, ``gate``, ``probe``), the loop itself (``pipeline``), and two tools:
the benchmark (``bench``) and the training curves (``plot``). The games are the actors'
(``gomoku.actors``), reached through that package's public face."""
