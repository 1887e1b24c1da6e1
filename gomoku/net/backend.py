"""Paddle itself, imported here for the whole net layer (``from gomoku.net.backend import paddle``).

Two things happen once, at that import. A machine without Paddle gets ``PaddleMissingError``,
whose message says how to install it, instead of a bare "No module named 'paddle'". And
Paddle's import installs a SIGTERM handler of its own that prints a C++ "FatalError" report (and
can hang when the signal lands during the import itself), and a Ctrl-C in the middle of it
comes out as "ImportError: initialization failed": SIGTERM and SIGINT stay blocked while Paddle
is imported, and the process's own handling of them is then put back, so that a signal that
came meanwhile reaches that one.
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
    signals = (signal.SIGTERM, signal.SIGINT)
    previous = {sig: signal.getsignal(sig) for sig in signals}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        import paddle

        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return paddle


paddle = _import_paddle()
