"""Training curves: reading metrics.jsonl, the axis helpers, and a PNG of the right size."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gomoku.train import plot
from gomoku.train.plot import MetricsError, moving_average, read_metrics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_metrics(path, iterations=30, check_freq=5, extra_lines=()):
    """A run's metrics as the pipeline writes them; pure MCTS steps up after a perfect score."""
    rng = np.random.default_rng(0)
    pure = 1000
    with open(path, "w") as f:
        for it in range(1, iterations + 1):
            record = {"event": "iteration", "iteration": it, "games": 8 * it, "episode_len": 14.0,
                      "buffer": 100 * it, "wall_s": 30.0 * it}
            if it > 2:  # no update until the buffer holds a batch
                record.update(loss=round(4.5 - it / 20 + 0.1 * rng.random(), 4),
                              entropy=round(3.6 - it / 30, 4), kl=0.02, lr_multiplier=1.0)
            f.write(json.dumps(record) + "\n")
            if it % check_freq == 0:
                ratio = 1.0 if it % (2 * check_freq) == 0 else 0.6
                f.write(json.dumps({"event": "evaluation", "iteration": it, "pure_playouts": pure,
                                    "wins": int(10 * ratio), "draws": 0, "losses": 10 - int(10 * ratio),
                                    "win_ratio": ratio, "new_best": True}) + "\n")
                if ratio == 1.0:
                    pure += 1000
        for line in extra_lines:
            f.write(line)
    return str(path)


def image_size(path):
    from matplotlib import image

    height, width = image.imread(str(path)).shape[:2]
    return width, height


def test_read_metrics_skips_broken_lines_and_keeps_the_last_of_a_repeat(tmp_path):
    write_metrics(tmp_path / "metrics.jsonl", extra_lines=[
        '{"event": "iteration", "iteration": 30, "loss": 1.5, "entropy": 1.0}\n',  # iteration 30 again
        '{"event": "iteration", "itera',  # a line cut short by a kill
    ])
    metrics = read_metrics(str(tmp_path))  # a run directory works as well as the file
    assert len(metrics.iterations) == 30 and len(metrics.evaluations) == 6
    assert metrics.skipped == 1
    assert metrics.iterations[-1]["loss"] == 1.5
    assert [e["pure_playouts"] for e in metrics.evaluations] == [1000, 1000, 2000, 2000, 3000, 3000]


def test_png_of_the_requested_size(tmp_path):
    source = write_metrics(tmp_path / "metrics.jsonl")
    out = tmp_path / "plots" / "curves.png"
    plot.save_plot(source, str(out), title="tiny run")
    assert image_size(out) == (900, 600)
    assert plot.main([source, "--out", str(tmp_path / "small.png"), "--size", "640x400"]) == 0
    assert image_size(tmp_path / "small.png") == (640, 400)


def test_long_run_and_runs_without_evaluations_still_draw(tmp_path):
    long_run = write_metrics(tmp_path / "long.jsonl", iterations=400, check_freq=50)
    plot.save_plot(long_run, str(tmp_path / "long.png"))  # moving average over faint raw values
    no_eval = write_metrics(tmp_path / "no_eval.jsonl", iterations=6, check_freq=100)
    plot.save_plot(no_eval, str(tmp_path / "no_eval.png"))
    only_eval = tmp_path / "only_eval.jsonl"
    only_eval.write_text(json.dumps({"event": "evaluation", "iteration": 50, "pure_playouts": 1000,
                                     "win_ratio": 0.7}) + "\n")
    plot.save_plot(str(only_eval), str(tmp_path / "only_eval.png"))
    for name in ("long", "no_eval", "only_eval"):
        assert image_size(tmp_path / f"{name}.png") == (900, 600)


def test_missing_or_empty_metrics_are_clear_errors(tmp_path, capsys):
    with pytest.raises(MetricsError, match="no metrics file"):
        read_metrics(str(tmp_path))
    empty = tmp_path / "metrics.jsonl"
    empty.write_text("")
    with pytest.raises(MetricsError, match="nothing to plot"):
        read_metrics(str(empty))
    early = write_metrics(tmp_path / "early.jsonl", iterations=2)  # no update, no evaluation yet
    with pytest.raises(MetricsError, match="nothing to plot"):
        read_metrics(early)
    out = tmp_path / "x.png"
    assert plot.main([str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no metrics file" in err and "Traceback" not in err and not out.exists()


def test_script(tmp_path):
    source = write_metrics(tmp_path / "metrics.jsonl")
    out = tmp_path / "curves.png"
    proc = subprocess.run([sys.executable, "-m", "gomoku.train.plot", source, "--out", str(out), "--title", "T"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "30 iterations, 6 evaluations" in proc.stdout and out.is_file()
    proc = subprocess.run([sys.executable, "-m", "gomoku.train.plot", str(tmp_path / "none.jsonl"), "--out",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no metrics file" in proc.stderr and "Traceback" not in proc.stderr


def test_moving_average():
    assert moving_average([1, 2, 3, 4, 5], 3) == pytest.approx([1.5, 2, 3, 4, 4.5])


def test_the_legends_hide_no_curve_and_the_title_names_the_board(tmp_path):
    from matplotlib.transforms import Bbox

    write_metrics(tmp_path / "metrics.jsonl", iterations=200, check_freq=50)
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(str(tmp_path / "current_model.npz"))
    metrics = read_metrics(str(tmp_path))
    assert metrics.board == "6x6, 4 in a row"
    figure = plot.render(metrics)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    assert figure.get_suptitle() == "Gomoku Zero training: 6x6, 4 in a row"
    for ax in figure.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        for other in figure.axes:
            panel = other.get_window_extent(renderer)
            inside = Bbox.intersection(box, panel)
            assert inside is None or inside.width * inside.height < 1.0, "a legend over a panel"


def test_a_shipped_models_record_draws_its_win_ratio(tmp_path):
    record = {"board": "8x8, 5 in a row", "iterations": 170, "selfplay_games": 1360, "training_hours": 1.69,
              "evaluations": [{"iteration": 50, "pure_playouts": 5000, "win_ratio": 0.8},
                              {"iteration": 100, "pure_playouts": 5000, "win_ratio": 0.75}]}
    source = tmp_path / "gomoku_8x8_5.json"
    source.write_text(json.dumps(record))
    metrics = plot.save_plot(str(source), str(tmp_path / "m.png"))
    assert metrics.board == "8x8, 5 in a row" and len(metrics.evaluations) == 2
    assert image_size(tmp_path / "m.png") == (900, 600)
    (tmp_path / "empty.json").write_text("{}")
    with pytest.raises(MetricsError, match="no evaluations"):
        read_metrics(str(tmp_path / "empty.json"))


def test_evaluations_against_the_heuristic_are_drawn_with_their_levels(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = [{"event": "iteration", "iteration": i, "loss": 3.0 - 0.1 * i, "entropy": 2.0} for i in range(1, 7)]
    lines += [{"event": "evaluation", "iteration": i, "opponent": f"heuristic:{level}",
               "heuristic_level": level, "win_ratio": ratio}
              for i, level, ratio in ((2, 1, 1.0), (4, 2, 0.5), (6, 2, 0.75))]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    metrics = read_metrics(str(path))
    assert plot._opponent_name(metrics.evaluations) == "the heuristic"
    assert "best 0.75 against heuristic 2" in plot._subtitle(metrics)
    plot.save_plot(str(path), str(tmp_path / "heuristic.png"))
    assert image_size(tmp_path / "heuristic.png") == (900, 600)


def test_a_run_that_changed_its_yardstick_names_each_point_and_its_best_on_the_current_one(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = [{"event": "iteration", "iteration": i, "loss": 3.0, "entropy": 2.0} for i in range(1, 9)]
    lines += [{"event": "evaluation", "iteration": 2, "pure_playouts": 2000, "win_ratio": 1.0},
              {"event": "evaluation", "iteration": 4, "heuristic_level": 0, "win_ratio": 0.3},
              {"event": "evaluation", "iteration": 6, "heuristic_level": 0, "win_ratio": 0.5},
              {"event": "evaluation", "iteration": 8, "heuristic_level": 0, "win_ratio": 0.2}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    metrics = read_metrics(str(path))
    assert "best 0.50 against heuristic 0" in plot._subtitle(metrics)  # not pure MCTS 2000's 1.00
    figure = plot.render(metrics, (900, 600), None)
    ax = figure.axes[1]  # the lower panel (the last is the entropy axis of the upper one)
    assert [t.get_text() for t in ax.texts] == ["2000", "H0", "H0", "H0"]
    assert "H and the heuristic's level" in ax.get_legend().get_texts()[0].get_text()
    assert len(ax.lines) == 2  # the curve, and one line where the yardstick changed


def test_evaluations_from_other_openings_are_another_yardstick(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = [{"event": "iteration", "iteration": i, "loss": 3.0, "entropy": 2.0} for i in range(1, 7)]
    lines += [{"event": "evaluation", "iteration": 2, "heuristic_level": 1, "win_ratio": 0.6},
              {"event": "evaluation", "iteration": 4, "heuristic_level": 1, "win_ratio": 0.2, "opening_stones": 2},
              {"event": "evaluation", "iteration": 6, "heuristic_level": 1, "win_ratio": 0.4, "opening_stones": 2}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    metrics = read_metrics(str(path))
    assert "best 0.40 against heuristic 1" in plot._subtitle(metrics)  # not the empty board's 0.60
    ax = plot.render(metrics, (900, 600), None).axes[1]
    assert len(ax.lines) == 2  # the curve, and one line where the openings changed


def test_evaluations_at_other_playouts_of_the_net_are_another_yardstick_and_say_so(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = [{"event": "iteration", "iteration": i, "loss": 3.0, "entropy": 2.0} for i in range(1, 7)]
    lines += [{"event": "evaluation", "iteration": 2, "heuristic_level": 4, "win_ratio": 0.9},  # before they were kept
              {"event": "evaluation", "iteration": 4, "heuristic_level": 4, "win_ratio": 0.6, "playouts": 800},
              {"event": "evaluation", "iteration": 6, "heuristic_level": 4, "win_ratio": 0.7, "playouts": 800}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    metrics = read_metrics(str(path))
    assert "best 0.70 against heuristic 4" in plot._subtitle(metrics)  # not the 0.90 of another search
    ax = plot.render(metrics, (900, 600), None).axes[1]
    assert [t.get_text() for t in ax.texts] == ["4", "4 @800", "4 @800"]
    assert "@ the net's playouts" in ax.get_legend().get_texts()[0].get_text()
    assert len(ax.lines) == 2  # the curve, and one line where the net's playouts changed
