"""Progress on the long waits: bars on a terminal, nothing else in a log; progress from workers."""

import io

from gomoku.actors.actors import InlineActors
from gomoku.actors.tasks import Progress
from gomoku.actors.workers import ProcessActors
from gomoku.play.arena.run import run_arena
from gomoku.play.arena.settings import ArenaSettings
from gomoku.progress import advance_to, is_terminal, progress_bar, timed_phase
from gomoku.search.player_specs import PlayerSpec
from gomoku.train.pipeline import TrainPipeline
from tests.helpers import tiny_config


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_a_bar_shows_on_a_terminal_and_nowhere_else():
    assert is_terminal(FakeTerminal()) and not is_terminal(io.StringIO())
    for stream, shown in ((FakeTerminal(), True), (io.StringIO(), False)):
        with progress_bar(4, "self-play", stream=stream) as bar:
            advance_to(bar, 3)
            advance_to(bar, 2)  # totals never go back
            assert bar.n == (3 if shown else 0)  # a disabled bar counts nothing
            bar.refresh()
        assert ("self-play" in stream.getvalue() and "3/4" in stream.getvalue()) == shown
        assert stream.getvalue() == "" or shown
    quiet = io.StringIO()
    with timed_phase("net alone", 1, stream=quiet):
        pass
    assert quiet.getvalue() == ""


def test_training_shows_its_iterations_and_evaluations_only_on_a_terminal(tmp_path):
    for name, stream, shown in (("tty", FakeTerminal(), True), ("pipe", io.StringIO(), False)):
        lines = []
        pipeline = TrainPipeline(tiny_config(check_freq=1), str(tmp_path / name), log=lines.append)
        pipeline.progress_stream = stream
        pipeline.run(iterations=1)
        text = stream.getvalue()
        assert ("iteration 1: self-play (filling the buffer)" in text) == shown, text
        assert ("evaluation against pure MCTS 20" in text) == shown, text
        if shown:
            assert "2/2" in text and "moves" in text and "score" in text
        else:
            assert text == ""
        # the log is the same either way: the header and the device, one line per iteration, the
        # gate (the run's first: no match) and the evaluation, the end
        assert len(lines) == 6 and lines[1].startswith("  device cpu: ")
        assert lines[2].startswith("iter ") and "first best model" in lines[3]
        assert "eval vs pure MCTS" in lines[4] and "(as White " in lines[4]
        assert lines[5].startswith("done: iteration 1 of")


def test_workers_report_games_moves_and_the_running_score():
    seen = []
    with ProcessActors(2) as actors:
        games, _ = actors.match(PlayerSpec("pure", playouts=12), PlayerSpec("pure", playouts=12),
                                (6, 6, 4), [[] for _ in range(4)], seed=3, parallel=2,
                                progress=seen.append)
        assert seen and all(isinstance(p, Progress) for p in seen)
        assert [p.games for p in seen] == sorted(p.games for p in seen)
        assert seen[-1].games == 4 and seen[-1].moves == sum(len(g.moves) for g in games)
        assert seen[-1].points == sum(g.a_points for g in games)
        # without a callback the workers send nothing, and the protocol is as before
        again, _ = actors.match(PlayerSpec("pure", playouts=12), PlayerSpec("pure", playouts=12),
                                (6, 6, 4), [[] for _ in range(4)], seed=3, parallel=2)
        assert [g.moves for g in again] == [g.moves for g in games]


def test_inline_self_play_reports_progress():
    from tests.helpers import tiny_model, tiny_self_play

    seen = []
    actors = InlineActors()
    actors.publish(tiny_model())
    games, _ = actors.start_self_play(3, tiny_self_play(), seed=0, progress=seen.append).result()
    assert seen[-1].games == 3 and seen[-1].moves >= sum(len(g.moves) for g in games)


def test_the_arena_shows_games_and_score_only_on_a_terminal():
    settings = ArenaSettings("pure:12", "pure:12", games=2, size=(6, 6), n_in_row=4, workers=1, seed=1)
    tty, pipe = FakeTerminal(), io.StringIO()
    run_arena(settings, progress_stream=tty)
    run_arena(settings, progress_stream=pipe)
    assert "arena" in tty.getvalue() and "scores" in tty.getvalue()
    assert pipe.getvalue() == ""
