"""Paddle itself, imported here for the whole net layer (``from gomoku.net.backend import paddle``).

Two things happen once, at that import. A machine without Paddle gets ``PaddleMissingError``,
whose message says how to install it, instead of a bare "No module named 'paddle'". And
Paddle's import installs a SIGTERM handler of its own that prints a C++ "FatalError" report (and
can hang when the signal lands during the import itself): SIGTERM stays blocked while Paddle is
imported, and the process's own handling of it is then put back, so that a signal that came
meanwhile reaches that one.
"""

from __future__ import annotations

import signal
import threading
from importlib.util import find_spec

from gomoku.util import PaddleMissingError

if find_spec("paddle") is None:
    raise PaddleMissingError()


def _import_paddle():
    if threading.current_thread() is not threading.main_thread():
        import paddle  # only the main thread may set handlers: nothing to put back from here

        return paddle
    previous = signal.getsignal(signal.SIGTERM)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        import paddle

        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return paddle


paddle = _import_paddle()
