"""Progress bars for the waits of a few seconds or more, shown only on a terminal.

A bar goes to standard error (or the given stream) when that stream is a
terminal; written to a file or a pipe the output stays as it was, one line per
event, so logs and captured output are not filled with carriage returns.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import IO, Iterator, Optional

from tqdm import tqdm


def is_terminal(stream: Optional[IO] = None) -> bool:
    """Whether ``stream`` (standard error by default) is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def progress_bar(total: Optional[int], desc: str, unit: str = "game", stream: Optional[IO] = None) -> tqdm:
    """A tqdm bar on ``stream`` that shows nothing unless the stream is a terminal.

    Args:
        total: the count that finishes the wait (None when it is not known).
        desc: what is being waited for, shown before the bar.
        unit: what is counted.
        stream: where the bar goes (standard error by default).

    Returns:
        The bar: ``update``/``n``, ``set_postfix_str`` and ``close`` as tqdm's; use it in a
        ``with`` block so that it closes.
    """
    stream = sys.stderr if stream is None else stream
    return tqdm(total=total, desc=desc, unit=unit, file=stream, disable=not is_terminal(stream),
                leave=False, dynamic_ncols=True, mininterval=0.5)


def advance_to(bar: tqdm, count: int) -> None:
    """Moves ``bar`` on to ``count`` (a total reported by the work, not an increment).

    A new count shows at once (counts change seldom: a game finished); otherwise the bar
    redraws, with its postfix, at most every ``mininterval`` seconds.
    """
    if count > bar.n:
        bar.update(count - bar.n)
        bar.refresh()
    else:
        bar.update(0)


@contextlib.contextmanager
def timed_phase(desc: str, seconds: float, stream: Optional[IO] = None) -> Iterator[None]:
    """A bar of the seconds a phase of known length has run, ticking on its own (terminal only).

    For waits that report nothing while they run (a measurement that lasts ``seconds``).
    """
    with progress_bar(round(seconds), desc, unit="s", stream=stream) as bar:
        if bar.disable:
            yield
            return
        done = threading.Event()
        start = time.monotonic()

        def tick():
            while not done.wait(0.5):
                advance_to(bar, min(round(seconds), int(time.monotonic() - start)))

        thread = threading.Thread(target=tick, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
