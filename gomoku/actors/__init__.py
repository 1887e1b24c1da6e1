"""The actors layer: where the games the project plays in bulk are played, and how.

What the actors play (``tasks``: self-play settings, match shares, calls, and the scores that
come back), how one actor plays a task (``runner``), self-play itself (``selfplay``: ``play_game``,
one whole game, the streams of games in lockstep, and the training arrays of finished games), the
streams across a stop (``stream_state``), and where the actors run: the interface and the
in-process actor (``actors``), worker processes (``workers``, which start in ``worker_start`` and
serve in ``worker_loop``), Ray actors (``ray_actors``, one actor in ``ray_actor``), and the
factory that picks one for a run (``backends``). It imports the game, net and search layers.

The layers above reach it only through the names in ``PUBLIC``, imported from this package
(``from gomoku.actors import make_actors``). Each is read from its module when it is first asked
for: a worker process imports ``worker_start`` from this package before anything slow, and must
import nothing more through it.
"""

from importlib import import_module

PUBLIC = {
    "make_actors": "backends", "WORKER_NICE": "backends",
    "Actors": "actors", "InlineActors": "actors", "Pending": "actors",
    "ProcessActors": "workers", "RayActors": "ray_actors",
    "SelfPlaySettings": "tasks", "Progress": "tasks", "PUBLISHED": "tasks", "WorkerError": "tasks",
    "MatchGame": "tasks", "Tally": "tasks", "tally_by_colour": "tasks",
    "play_game": "selfplay", "SelfPlayStream": "selfplay", "training_arrays": "selfplay",
    "SavedStreams": "stream_state",
}
"""the package's public face: each name and the module of this package that defines it"""

__all__ = sorted(PUBLIC)


def __getattr__(name: str):
    if name not in PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{PUBLIC[name]}"), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(PUBLIC))
