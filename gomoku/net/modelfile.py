"""Model files: a NumPy ``.npz`` archive of the weights and their ``NetSpec``.

The archive holds the weights under their parameter names plus ``__meta__``, a
JSON string with the format, the board size, ``n_in_row`` and the architecture,
so loading it needs no flags. A size-free net's file also says ``"size_free": true``
and lists the boards it was trained on (``trained_sizes``); the board size is
then the one it plays by default. Files without these keys are fixed-size nets.
A net whose input planes are not version 1 records its ``inputs`` version
(``gomoku.game.features``); files without it take version 1. A net trained under
another rule than freestyle records its ``rule``, and one with global pooling blocks their
number (``global_pool``; files without it have none). It loads without
pickle, and reading one imports no Paddle.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import asdict

import numpy as np

from gomoku.game.rules import FREESTYLE
from gomoku.net.spec import NetSpec
from gomoku.util import atomic_write

MODEL_FORMAT = "gomoku-zero-model/1"
BEST_MODEL, CURRENT_MODEL = "best_model.npz", "current_model.npz"
RUN_MODELS = (BEST_MODEL, CURRENT_MODEL)
"""The model files of a run directory, in the order ``find_model`` prefers them."""
EXPECTED = ("expected a Gomoku Zero model, a .npz file written by train.py "
            "(runs/NAME/best_model.npz, current_model.npz) or scripts/ship_model.py (models/*.npz)")


class ModelFileError(ValueError):
    """A model file that is missing, unreadable, or made for another board."""


ZIP_MAGIC = b"PK\x03\x04"  # how a zip archive (an .npz) begins


def read_model_file(path: str) -> tuple[NetSpec, dict[str, np.ndarray]]:
    """Reads a model file's spec and weights.

    Raises:
        ModelFileError: no such file, or a file that is not a model (the message says
            what was expected; a training checkpoint gets a pointer to its run directory).
    """
    return _read(path, weights=True)


def read_model_spec(path: str) -> NetSpec:
    """Reads a model file's spec alone: the archive's small ``__meta__`` member, not the weights.

    Raises:
        ModelFileError: as ``read_model_file``.
    """
    return _read(path, weights=False)[0]


def _read(path: str, weights: bool) -> tuple[NetSpec, dict[str, np.ndarray]]:
    """The spec of the model file at ``path`` and, with ``weights``, its arrays (else ``{}``)."""
    if os.path.isdir(path):
        raise ModelFileError(f"{path} is a directory; {EXPECTED}")
    if not os.path.isfile(path):
        raise ModelFileError(f"no model file at {path}")
    damaged = (f"{path} is damaged (cut short or corrupted): it begins as a model file's archive but "
               f"cannot be read; copy or save it again")
    if not zipfile.is_zipfile(path):
        if os.path.basename(path) == "checkpoint.pkl":
            raise ModelFileError(f"{path} is a training checkpoint, not a model: give the run "
                                 f"directory ({os.path.dirname(path) or '.'}) to play its model")
        with open(path, "rb") as f:
            if f.read(4) == ZIP_MAGIC:  # a zip archive whose end is missing: a truncated copy
                raise ModelFileError(damaged)
        raise ModelFileError(f"{path} is not a model file: {EXPECTED}")
    try:
        # An .npz reads its members when they are asked for: without weights only __meta__ is read.
        with np.load(path, allow_pickle=False) as data:
            if "__meta__" not in data.files:
                raise ModelFileError(f"{path} is a .npz archive but not a Gomoku Zero model file: {EXPECTED}")
            meta = json.loads(str(data["__meta__"]))
            arrays = {k: data[k] for k in data.files if k != "__meta__"} if weights else {}
    except ModelFileError:
        raise
    except Exception:  # an archive whose members do not read back: corrupted
        raise ModelFileError(damaged) from None
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise ModelFileError(f"{path} has format {found!r}, expected {MODEL_FORMAT!r}")
    fields = {k: meta[k] for k in NetSpec.__dataclass_fields__ if k in meta}
    try:
        return NetSpec(**fields), arrays
    except ValueError as exc:  # an input version or a rule this code does not know
        raise ModelFileError(f"{path}: {exc}") from None


def find_model(path: str) -> str:
    """The model file ``path`` names: a model file itself, or a run directory's best model
    (else its current one, written after every iteration).

    Raises:
        ModelFileError: a run directory with no model yet, or a checkpoint path.
    """
    if os.path.isdir(path):
        for name in RUN_MODELS:
            candidate = os.path.join(path, name)
            if os.path.isfile(candidate):
                return candidate
        raise ModelFileError(f"{path} holds no model yet ({' or '.join(RUN_MODELS)}): "
                             f"a run writes current_model.npz when its first iteration ends")
    if os.path.basename(path) == "checkpoint.pkl" and os.path.isfile(path):
        raise ModelFileError(f"{path} is a training checkpoint, not a model: "
                             f"play the run with --model {os.path.dirname(path) or '.'}")
    return path


def save_model_file(path: str, spec: NetSpec, weights: dict[str, np.ndarray]) -> None:
    """Writes a model file atomically: ``weights`` under their names and the spec in ``__meta__``."""
    arrays = dict(weights)
    meta = {"format": MODEL_FORMAT, **asdict(spec)}
    if spec.size_free:
        meta["size_free"] = True
    else:
        del meta["trained_sizes"]  # a fixed-size net's file reads as it always has
    if spec.inputs == 1:
        del meta["inputs"]  # so does a net of the first input version
    if spec.rule == FREESTYLE:
        del meta["rule"]  # and a freestyle net
    if not spec.global_pool:
        del meta["global_pool"]  # and a net without global pooling
    arrays["__meta__"] = np.array(json.dumps(meta))
    atomic_write(path, lambda f: np.savez(f, **arrays))
