"""The commands pyproject.toml installs (``gomoku-train``, ``gomoku-play``, ``gomoku-arena``,
``gomoku-bench``, ``pbrain-gomokuzero``) and the checkout's ``train.py`` and ``play.py``.

Each runs its module's ``main`` and answers in one line, without a traceback, where that
module cannot: Paddle is not installed (the line says how to install it), or Ctrl-C came
while the command was still starting. SIGINT and SIGTERM stay blocked while the command's
module is imported: the threads that NumPy and Paddle start then keep them blocked for good, so
that every signal reaches the main thread's handlers (``net.backend`` blocks them again while
Paddle itself is imported), and a signal sent meanwhile arrives once the import is done: Ctrl-C
as one line, SIGTERM as a quiet end (``interrupt.end_quietly``: the process's temporary folders
removed, nothing printed). Once ``main`` returns, a late Ctrl-C is ignored: it would
otherwise land in Paddle's exit clean-up and print a traceback there.

This module imports only the standard library at its top: a worker process of the trainer
(the spawn start method) imports its parent's main module, the console script or ``train.py``
that imports this one, before it can tie its life to the parent's (``actors.worker_start``).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Optional

PLAYER_KIND_MODULES = ("gomoku.play.engine_player",)
"""The modules of upper layers that register player kinds (``search.player_registry``). Every command
imports them, so that a lower layer's flags and settings may name those kinds too (the trainer's
``--eval-opponent engine:COMMAND``) without importing upwards."""


def run(module: str, function: str = "main", argv: Optional[list[str]] = None) -> int:
    """Runs ``module.function(argv)`` (``function()`` when ``argv`` is None) as a command; returns its exit code."""
    from gomoku.util import PaddleMissingError

    from gomoku import interrupt

    name = os.path.basename(sys.argv[0]) or module
    signal.signal(signal.SIGTERM, interrupt.end_quietly)
    try:
        with interrupt.stop_signals_blocked():
            for kinds in PLAYER_KIND_MODULES:
                importlib.import_module(kinds)
            main = getattr(importlib.import_module(module), function)
        return main() if argv is None else main(argv)
    except PaddleMissingError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{name}: interrupted", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def train() -> int:
    code = run("gomoku.train.cli")
    if code in (130, 143):  # stopped by Ctrl-C or SIGTERM: the checkpoint, the metrics and the workers are done with
        # Python's own exit would unload Paddle first: 6 s at a load of 19 on 2 cores, after a stop
        # that had taken 2 (docs/results.md, 2026-11-28).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def play() -> int:
    return run("gomoku.play.cli")


def arena() -> int:
    return run("gomoku.play.arena.run")


def bench() -> int:
    return run("gomoku.train.bench")


def engine() -> int:
    return run("gomoku.play.engine.cli")
