"""Model files: a NumPy ``.npz`` archive of the weights and their ``NetSpec``.

The archive holds the weights under their parameter names plus ``__meta__``, a
JSON string with the format, the board size, ``n_in_row`` and the architecture,
so loading it needs no flags. A size-free net's file also says ``"size_free": true``
and lists the boards it was trained on (``trained_sizes``); the board size is
then the one it plays by default. Files without these keys are fixed-size nets. It loads without pickle, and reading one imports
no Paddle.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict

import numpy as np

from gomoku.net.spec import NetSpec
from gomoku.util import atomic_write

MODEL_FORMAT = "gomoku-zero-model/1"


class ModelFileError(ValueError):
    """A model file that is missing, unreadable, or made for another board."""


def read_model_file(path: str) -> tuple[NetSpec, dict[str, np.ndarray]]:
    """Reads a model file's spec and weights, with a clear error for any problem."""
    if not os.path.isfile(path):
        raise ModelFileError(f"no model file at {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["__meta__"]))
            weights = {k: data[k] for k in data.files if k != "__meta__"}
    except Exception as exc:  # zip, JSON and key errors all mean the same to a user
        raise ModelFileError(f"{path} is not a readable Gomoku Zero model file ({exc})") from None
    if meta.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"{path} has format {meta.get('format')!r}, expected {MODEL_FORMAT!r}")
    fields = {k: meta[k] for k in NetSpec.__dataclass_fields__ if k in meta}
    return NetSpec(**fields), weights


def save_model_file(path: str, spec: NetSpec, weights: dict[str, np.ndarray]) -> None:
    """Writes a model file atomically: ``weights`` under their names and the spec in ``__meta__``."""
    arrays = dict(weights)
    meta = {"format": MODEL_FORMAT, **asdict(spec)}
    if spec.size_free:
        meta["size_free"] = True
    else:
        del meta["trained_sizes"]  # a fixed-size net's file reads as it always has
    arrays["__meta__"] = np.array(json.dumps(meta))
    atomic_write(path, lambda f: np.savez(f, **arrays))
