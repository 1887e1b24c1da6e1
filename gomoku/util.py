"""Small helpers shared across the package: atomic file writes."""

from __future__ import annotations

import os
import tempfile
from typing import Callable, IO


def atomic_write(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Writes a file so that a crash at any moment leaves either the old file or the new one.

    ``write`` gets a binary file object in the same directory; once it returns and
    the data are flushed to disk, the temporary file is renamed over ``path``.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
