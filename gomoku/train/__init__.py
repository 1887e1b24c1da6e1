"""The training layer: the run's settings (``config``), self-play (``selfplay``), what the actors
play (``tasks``) and how an actor plays it (``runner``), where they play it (``actors``: the
interface and the in-process backend; ``workers``: worker processes, the one module that starts
them; ``ray_actors``: Ray; ``backends``: the factory), the replay buffer (``replay``),
checkpoints (``checkpoint``), the metrics file (``metrics``), the loop itself (``pipeline``),
and two tools: the benchmark (``bench``) and the training curves (``plot``)."""
