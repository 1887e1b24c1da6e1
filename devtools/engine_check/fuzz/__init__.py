"""A protocol fuzz for the Gomocup engine: seeded random command sequences, every answer checked.

``python -m devtools.engine_check.fuzz --sequences 5000 --seed 0`` sends thousands of
random command sequences to ``brain.PbrainEngine``, in this process for speed
or, with ``--process``, to a real ``python -m gomoku.play.engine`` child process, and
checks every answer against the protocol table of ``engine``'s docstring. It
prints a short table and exits with status 1 if anything failed.

The sequences (``Scenario``) are mostly plausible games on small boards, so
that moves really get searched: START or RECTSTART, INFO limits, BEGIN or TURN
after TURN, whole positions in BOARD blocks, TAKEBACK, RESTART in the middle of
a game, turns on after the game is won. A minority of lines are hostile (the
categories of ``HOSTILE``): garbage, control characters and non-ASCII, unknown
words, empty lines, lowercase, odd spacing and tabs, huge and negative numbers,
BOARD blocks with bad lines or cut short by a command, TAKEBACK of empty cells,
turns on occupied cells. One sequence in five is chaos: any command in any
order, commands before START included.

The checker (``Manager``) keeps the position the engine should have, as a
manager does: the stones TURN and BOARD sent, the engine's own moves, the stones
TAKEBACK lifted. From it, the answers each line is due (``Due``):

=========================  ===========================================================
line                       due
=========================  ===========================================================
START, RECTSTART           ``OK`` for a board from n x n to 20 x 20 (a fixed-size model: its own
                           board), ``ERROR`` for one too small to hold a line, either beyond
RESTART                    ``OK``, or ``ERROR`` before START
TAKEBACK x,y               ``OK``, or ``ERROR`` before START, for a bad or empty cell
BEGIN, TURN, BOARD..DONE   a move ``x,y`` on an empty cell of the board, or ``ERROR`` before START,
                           for bad input, a board that is not empty (BEGIN) or a finished game
SWAP2BOARD..DONE, DONE     ``UNKNOWN`` or ``ERROR``
a command inside a block   ``ERROR`` for the unfinished block, then the command's own answer
ABOUT                      ``name="...", ...``
INFO, END, empty lines     nothing; END must end the engine
anything else              ``UNKNOWN``
=========================  ===========================================================

Bad input leaves the position as it was. A TURN on a free cell stays on the
board even when the game is then over (the answer is ``ERROR``), and a BOARD
that parses replaces the position even when that position is finished: the
manager's stone is a real move, only the engine has none left.

Failures, by kind (``FAILURES``):

* ``crash``: an ``ERROR internal error`` answer (an exception reached the
  engine's catch-all), an exception out of ``handle``, or a process that died;
* ``count``: more or fewer answers than the line asks for;
* ``illegal``: a move off the board or on an occupied cell;
* ``wrong``: an answer of the wrong kind, say a move where ``ERROR`` was due
  or the reverse, or something that is no answer at all;
* ``hang``: an answer slower than ``hang_s`` seconds (by default 5 s of CPU
  in this process, 15 s from a process), or a sequence slower than
  ``sequence_s``. In this process a command still running after
  ``hang_s`` seconds of CPU is interrupted (``Hung``), and one that returns
  counts its CPU time, so that a machine busy with other work makes no false
  hangs (wall time counts too, from ``WALL_FACTOR`` times the limit on, for an
  engine that waits instead of working). A process is waited for ``hang_s``
  seconds, then killed;
* ``end``: output after END, or an engine that does not stop.

With ``--process`` every sequence that did not END ends with ABOUT: an answer
too many anywhere before it shows as ABOUT's answer.

A sequence ends at its first failure; the engine is then thrown away. In this
process each failure's lines are shrunk (``Fuzz.shrink``) to a short sequence
that still fails the same way, the repro a bug report needs.

``--skip`` leaves hostile categories out, say one that finds a bug already
known, so that a run looks for others.

The modules: ``check`` (the checker, ``Manager``), ``scenario`` (the sequences),
``targets`` (the engine in this process or in a child process), ``runner``
(``Fuzz`` and its ``Report``) and ``cli`` (the command line, which ``__main__`` runs).
"""
