"""The player registry: each kind of player (``az``, ``pure``, ``heuristic``, ...) is one entry.

An entry (``PlayerKind``) says everything the window, the terminal, the arena, the trainer's
evaluation and the engine need to know about its kind: how its text form reads (``parse``) and
is written back (``text``), how it is described to a person (``describe``), how it is built for
a board (``build``), and what it needs (a model file, a search, a check before the games). The
code that uses players asks the entry, never the kind's name.

``player_specs`` registers the kinds of this layer. A higher layer registers its own kinds the same way
(``play.engine_player`` registers ``engine:COMMAND``) and so needs no import from below: the
registry keeps the module each kind came from, and a spec sent to another process (a worker, a Ray
actor) imports that module again there before it is used (``player_specs.PlayerSpec.__reduce__``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Build:
    """What a player is built with besides its spec: the board and the caller's settings."""

    board: Any
    """the game's ``Board``; a model must be made for it"""
    c_puct: float = 5.0
    """exploration constant of the searches"""
    seed: Optional[int] = None
    """seeds the player's randomness"""
    device: str = "auto"
    """where a model runs"""
    precision: str = "fp32"
    """the arithmetic of a model's inference, unless the spec names its own"""
    cache: Optional[dict] = None
    """what players of one match share (loaded models, engine processes), by key; None: nothing"""


@dataclass(frozen=True)
class PlayerKind:
    """One kind of player. ``spec`` below is a ``player_specs.PlayerSpec`` of this kind."""

    name: str
    """the word that starts its text form, e.g. ``az``"""
    form: str
    """its text form for help texts, e.g. ``az[:MODEL[:N]]``"""
    about: str
    """what it is, in a few words, for help texts"""
    parse: Callable[..., Any]
    """``parse(rest, whole, default_model, default_playouts) -> spec``: ``rest`` is the text after
    ``name:`` (None without a colon), ``whole`` the full text for messages; raises ValueError"""
    text: Callable[[Any], str]
    """``text(spec)``: the text form ``parse`` reads back"""
    describe: Callable[[Any], str]
    """``describe(spec)``: a label for people, e.g. ``AlphaZero 400``"""
    build: Callable[[Any, Build], Any]
    """``build(spec, Build) -> player``, None for a human; raises ``ModelFileError`` and the like"""
    ai: bool = True
    """False for a human: the arena and the trainer refuse it"""
    model: bool = False
    """it plays a model file (``spec.model``): the board and the rule must fit it"""
    search: bool = False
    """it searches with ``SearchOptions`` (``spec.search``)"""
    info: bool = False
    """it takes ``--engine-info`` lines (``spec.engine_info``)"""
    offer: Optional[Callable[..., Any]] = None
    """``offer(model, playouts, search) -> spec or None``: the spec the window offers among a seat's
    choices, where ``model`` is a model file that fits the board or None; None: never offered"""
    check: Optional[Callable[..., None]] = None
    """``check(spec, width, height, rule)``: tries the player once, so that a bad one fails before
    the games start (raises ValueError); None: nothing to try"""
    close: Optional[Callable[[dict], None]] = None
    """``close(cache)``: ends what its players left in a ``Build.cache`` (processes); None: nothing"""
    module: str = ""
    """the module that registered it (``register`` sets it)"""


_KINDS: dict[str, PlayerKind] = {}


def register(kind: PlayerKind, module: str) -> PlayerKind:
    """Adds ``kind``, registered by the module named ``module`` (its ``__name__``); returns the entry.

    Raises:
        ValueError: another module already registered a kind of that name.
    """
    entry = PlayerKind(**{**kind.__dict__, "module": module})
    known = _KINDS.get(kind.name)
    if known is not None and known.module != module:
        raise ValueError(f"the player kind {kind.name!r} is registered twice: by {known.module} and {module}")
    _KINDS[kind.name] = entry
    return entry


def player_kind(name: str) -> PlayerKind:
    """The entry of the kind ``name``.

    Raises:
        ValueError: no such kind (the message lists the known ones).
    """
    try:
        return _KINDS[name]
    except KeyError:
        raise ValueError(f"unknown player kind {name!r}: use one of {', '.join(_KINDS)}") from None


def player_kinds() -> tuple[PlayerKind, ...]:
    """Every registered kind, in the order of registration (the window cycles through them so)."""
    return tuple(_KINDS.values())


def player_forms(ai_only: bool = False) -> str:
    """The text forms of the kinds, for a help text: ``human, az[:MODEL[:N]] (AlphaZero...), ...``."""
    return ", ".join(f"{kind.form} ({kind.about})" for kind in _KINDS.values() if kind.ai or not ai_only)
