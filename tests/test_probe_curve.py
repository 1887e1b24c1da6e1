"""scripts/probe_curve.py: runs side by side on the probe, against CPU hours."""

import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import probe_curve  # noqa: E402


def run_dir(path, iterations, agree, loss, cpu_per_iteration=1800.0, first=1):
    """A run directory whose metrics log ``iterations`` probed iterations from ``first``, the
    agreement and loss given as functions of the iteration, ``cpu_per_iteration`` CPU seconds each."""
    path.mkdir()
    lines = [{"event": "start", "iteration": first - 1, "games": 0}]
    for i in range(first, first + iterations):
        lines.append({"event": "iteration", "iteration": i, "games": 32 * i, "cpu_s": cpu_per_iteration * i,
                      "probe_agree": agree(i), "probe_top3": 0.6, "probe_loss": loss(i), "probe_value": 0.4})
    (path / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_the_slopes_are_the_lines_and_since_counts_hours_from_the_split(tmp_path, capsys):
    # half an hour an iteration: agreement up 1 point an iteration (2 a CPU hour), loss down 0.01
    fast = run_dir(tmp_path / "fast", 10, lambda i: 0.40 + 0.01 * i, lambda i: 2.0 - 0.01 * i)
    flat = run_dir(tmp_path / "flat", 10, lambda i: 0.45 + (0.002 if i % 2 else -0.002), lambda i: 1.9)
    points = probe_curve.read_run(fast, since=4)
    assert [p["iteration"] for p in points] == [5, 6, 7, 8, 9, 10]
    assert points[0]["cpu_hours"] == 0.5 and points[-1]["cpu_hours"] == 3.0
    s = probe_curve.summary(points)
    assert math.isclose(s["agree_slope"][0], 2.0) and s["agree_slope"][1] < 1e-9
    assert math.isclose(s["loss_slope"][0], -0.02)
    assert s["games"] == 32 * 6  # since iteration 4
    flat_slope = probe_curve.summary(probe_curve.read_run(flat))["agree_slope"]
    assert abs(flat_slope[0]) < 0.1 and flat_slope[1] > 0

    png = tmp_path / "race.png"
    assert probe_curve.main([f"g400={flat}", f"g200={fast}", "--since", "4", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "| g200 | 5 | 160 | 0.50 | 45.0% |" in out
    assert "| g200 | 6 | 3.00 | 192 | +2.00 ± 0.00 | -0.020 ± 0.000 |" in out
    assert png.stat().st_size > 0


def test_a_resumed_iteration_counts_once_and_unprobed_ones_are_left_out(tmp_path):
    path = tmp_path / "run"
    path.mkdir()
    lines = [{"event": "iteration", "iteration": 1, "games": 32, "cpu_s": 100.0},  # no probe yet
             {"event": "iteration", "iteration": 2, "games": 64, "cpu_s": 200.0, "probe_agree": 0.3,
              "probe_loss": 2.0},
             {"event": "stop", "iteration": 2},
             {"event": "iteration", "iteration": 2, "games": 64, "cpu_s": 250.0, "probe_agree": 0.31,
              "probe_loss": 2.0}]
    (path / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    points = probe_curve.read_run(str(path))
    assert [(p["iteration"], p["agree"], p["top3"]) for p in points] == [(2, 0.31, None)]


def test_bad_runs_are_one_clear_error(tmp_path, capsys):
    assert probe_curve.main([str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err
    unprobed = tmp_path / "unprobed"
    unprobed.mkdir()
    (unprobed / "metrics.jsonl").write_text(json.dumps({"event": "iteration", "iteration": 1, "games": 8,
                                                        "cpu_s": 1.0}) + "\n")
    assert probe_curve.main([str(unprobed)]) == 2
    assert "no probed iteration" in capsys.readouterr().err
    run = run_dir(tmp_path / "run", 3, lambda i: 0.4, lambda i: 2.0)
    assert probe_curve.main([run, "--since", "7"]) == 2
    assert "no iteration 7" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metrics.jsonl").write_text("{\n")
    assert probe_curve.main([str(broken)]) == 2
    assert "line 1: not JSON" in capsys.readouterr().err


def test_a_line_the_trainer_is_still_writing_is_passed_over(tmp_path):
    run = run_dir(tmp_path / "run", 3, lambda i: 0.4, lambda i: 2.0)
    with open(os.path.join(run, "metrics.jsonl"), "a") as f:
        f.write('{"event": "iteration", "iteration": 4, "ga')  # cut short: no newline yet
    assert [p["iteration"] for p in probe_curve.read_run(run)] == [1, 2, 3]
