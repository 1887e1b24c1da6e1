"""The shipped models: where they are, and which one plays a given board and rule.

The models that come with the project lie in ``models/`` of a checkout, or in ``gomoku/models`` of an
installed copy (in the checkout ``gomoku/models`` is a link to ``models/``, so that building the
package copies them in as package data). The window and the terminal play them by default, and the
engine picks one for whatever game a manager sets up; both ask here. Choosing reads each file's
spec alone (``modelfile.read_model_spec``), never its weights.
"""

from __future__ import annotations

import os
from typing import Iterator, Optional

from gomoku.game.rules import FREESTYLE
from gomoku.net.modelfile import ModelFileError, read_model_spec
from gomoku.net.spec import NetSpec

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
"""The folder that holds the package: in a checkout (run from it, or installed editable) the
repository root."""
IN_CHECKOUT = os.path.isfile(os.path.join(PROJECT_ROOT, "pyproject.toml"))
"""False for an installed copy of the package."""
MODELS_DIR = os.path.join(PROJECT_ROOT if IN_CHECKOUT else os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "models")
"""The shipped models, wherever the user stands: ``models/`` of a checkout, ``gomoku/models`` of an
installed copy."""
SHIPPED_MODEL = os.path.join("models", "gomoku_8x8_5.npz")
DEFAULT_MODEL = os.path.join(MODELS_DIR, os.path.basename(SHIPPED_MODEL))
"""The model the window and the terminal play when no flag names one."""


def shipped_model_for(width: int, height: int, n_in_row: int, rule: str = FREESTYLE) -> Optional[str]:
    """The shipped model (``MODELS_DIR``) trained for this board and rule, or None.

    A fixed-size model must be for this very board; a size-free one must have trained on it.
    Files are tried in name order.
    """
    for path, net in shipped_models():
        if net.n_in_row == n_in_row and net.rule == rule and (width, height) in trained_boards(net):
            return path
    return None


def shipped_model_for_rule(rule: str, n_in_row: int = 5) -> Optional[str]:
    """The shipped model trained for ``rule`` (five in a row), the one for the largest board
    first, or None: what ``play.py --rule RULE`` plays without ``--size``."""
    fits = [(path, net) for path, net in shipped_models() if net.rule == rule and net.n_in_row == n_in_row]
    return min(fits, key=lambda item: (-max(w * h for w, h in trained_boards(item[1])), item[0]))[0] if fits else None


def nearest_shipped_model(width: int, height: int, n_in_row: int, rule: str = FREESTYLE) -> Optional[str]:
    """The shipped model that plays this board and rule best, for an engine that must play
    whatever game a manager sets up; None where no shipped model wins with ``n_in_row``.

    In order: one trained for this board and rule (``shipped_model_for``); one trained on this
    board for another rule (freestyle first: the nearest to standard); a size-free one, the rule's
    first, then freestyle's, the one trained on the largest board first (it plays any board).
    """
    def preference(item):
        path, net = item
        boards = trained_boards(net)
        return ((width, height) not in boards, net.rule != rule, net.rule != FREESTYLE,
                -max(w * h for w, h in boards), path)

    fits = [(path, net) for path, net in shipped_models() if net.n_in_row == n_in_row
            and ((width, height) in trained_boards(net) or net.size_free)]
    return min(fits, key=preference)[0] if fits else None


def shipped_models() -> Iterator[tuple[str, NetSpec]]:
    """(path, NetSpec) of each readable model in ``MODELS_DIR``, in name order."""
    folder = MODELS_DIR
    if not os.path.isdir(folder):
        return
    for name in sorted(os.listdir(folder)):
        if name.endswith(".npz"):
            path = os.path.join(folder, name)
            try:
                yield path, read_model_spec(path)
            except ModelFileError:
                continue


def trained_boards(net: NetSpec) -> tuple:
    """The boards ``net`` was trained on: a size-free net's list, else its one board."""
    return net.trained_sizes if net.size_free else ((net.width, net.height),)


def project_file(path: Optional[str]) -> Optional[str]:
    """``path``, or the same relative path under the project root when only that exists
    (a saved game names ``models/...`` as it was seen from the root), or the shipped model of
    that name for ``models/NAME`` in an installed copy."""
    if path is None or os.path.isabs(path) or os.path.exists(path):
        return path
    candidates = [os.path.join(PROJECT_ROOT, path)]
    if os.path.dirname(os.path.normpath(path)) == "models":
        candidates.append(os.path.join(MODELS_DIR, os.path.basename(path)))
    return next((c for c in candidates if os.path.exists(c)), path)
