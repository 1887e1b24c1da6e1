"""Small helpers shared across the package: atomic file writes, flag parsers and the error of a
missing Paddle."""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import Callable, IO


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once, at import
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def usable_cpus() -> int:
    """The cores this process may run on: its CPU affinity (taskset, a container's cpuset), else all."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity outside Linux
        return max(1, os.cpu_count() or 1)


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and every process under it: its own, its children's
    that have ended, and (on Linux, read from /proc) those of the live ones, with what they in turn
    reaped. The difference of two readings is the work done between them, workers included."""
    import resource

    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    children, ticks = {}, {}  # parent pid -> its children's pids; pid -> its CPU ticks
    try:
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[1].split()
                except OSError:  # it ended meanwhile
                    continue
                children.setdefault(int(fields[1]), []).append(int(name))
                ticks[int(name)] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    except OSError:  # no /proc: the live children are not counted
        return total
    live, todo = 0, list(children.get(os.getpid(), ()))
    while todo:
        pid = todo.pop()
        live += ticks[pid]
        todo.extend(children.get(pid, ()))
    return total + live / os.sysconf("SC_CLK_TCK")


def atomic_write(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Writes a file so that a crash at any moment leaves either the old file or the new one.

    ``write`` gets a binary file object in the same directory; once it returns and
    the data are flushed to disk, the temporary file is renamed over ``path``.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the file the usual mode
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


MAX_BOARD_SIDE = 26
"""The longest side of a board: the columns are labelled a to z (``board.COLUMN_LETTERS``)."""
BOARD_SIZES = (f"each side from 1 to {MAX_BOARD_SIDE} points and no shorter than the stones in a row "
               f"(--n-in-row), for example 8x8, 15x15 or 9x7 (9 wide, 7 high)")


def board_size_arg(text: str) -> tuple[int, int]:
    """Flag parser: ``8x8`` or ``8`` -> ``(8, 8)``; ``9x7`` is 9 wide and 7 high. A side must be 1 to
    ``MAX_BOARD_SIDE`` here; the board then checks it against the stones in a row."""
    parts = text.lower().split("x")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) == 1:
        numbers *= 2
    if len(numbers) != 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not a board size: write WxH, {BOARD_SIZES}")
    if min(numbers) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is too small: a board has {BOARD_SIZES}")
    if max(numbers) > MAX_BOARD_SIDE:
        raise argparse.ArgumentTypeError(f"{text!r} is too large: a board has {BOARD_SIZES}")
    return numbers[0], numbers[1]


def positive_int_arg(text: str) -> int:
    """Flag parser for an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


SWITCH_WORDS = {"1": True, "on": True, "true": True, "yes": True,
                "0": False, "off": False, "false": False, "no": False}


def switch_arg(text: str) -> bool:
    """Flag parser for an on/off setting: 1, on, true or yes; 0, off, false or no."""
    try:
        return SWITCH_WORDS[text.strip().lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"{text!r} is not on or off (1/0, on/off, true/false, yes/no)") from None


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that ends each flag's text with its default, unless there is nothing to show.

    argparse's own ArgumentDefaultsHelpFormatter also prints "(default: None)"
    and "(default: False)", and repeats a default the text already states.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        nothing = any(action.default is empty for empty in (None, False, argparse.SUPPRESS))
        if "(default" in text or nothing or not action.option_strings:  # `is`: a default of 0 shows
            return text
        return f"{text} (default: %(default)s)"


def in_checkout() -> bool:
    """Whether this copy of the package runs from a checkout of the repository (pyproject.toml sits
    beside the package: run from it, or installed editable), not from an installed copy."""
    return os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pyproject.toml"))


def paddle_install_hint(checkout: bool | None = None) -> str:
    """How to install Paddle here: the requirements files of a checkout, or the package's extras for
    an installed copy, which has no repository to run them from."""
    if in_checkout() if checkout is None else checkout:
        return ("pip install -r requirements.txt (its CPU build) or -r requirements-gpu.txt (its CUDA build), "
                "from the repository root; or pip install '.[cpu]'")
    return ('pip install "gomoku-zero[cpu]" (its CPU build), or for a GPU pip install "gomoku-zero[gpu]" '
            "with --extra-index-url naming Paddle's own index of CUDA builds (its install guide lists them)")


def paddle_gpu_hint(checkout: bool | None = None) -> str:
    """How to get Paddle's CUDA build in place of its CPU build."""
    if in_checkout() if checkout is None else checkout:
        return "pip install -r requirements-gpu.txt"
    return 'pip install "gomoku-zero[gpu]" with --extra-index-url naming Paddle\'s index of CUDA builds'


class PaddleMissingError(ImportError):
    """PaddlePaddle is not installed (it is an extra of the package); the message says how to get it."""

    def __init__(self, message: str | None = None):
        super().__init__(message or f"PaddlePaddle is not installed: {paddle_install_hint()}", name="paddle")
