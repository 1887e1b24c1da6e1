import json
import os
import shutil
import subprocess
import sys

import numpy as np

from gomoku.net.policy_value import PolicyValueModel
from gomoku.train.pipeline import TrainPipeline, read_checkpoint
from tests.helpers import ROOT, probe_games_file, tiny_config


def ship(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "ship_model.py"), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ship_the_checkpoint_with_its_lineage(tmp_path):
    run, out = str(tmp_path / "run"), str(tmp_path / "models")
    os.makedirs(out)
    probe = probe_games_file(tmp_path / "probe.jsonl")
    TrainPipeline(tiny_config(probe_games=probe), run, log=lambda s: None).run(iterations=3)

    # current_model.npz is rewritten with the checkpoint after every iteration: it is iteration 3's
    first = ship(run, "first", "--out-dir", out, "--model", "current_model.npz")
    assert first.returncode == 0, first.stderr
    old = json.load(open(os.path.join(out, "first.json")))
    assert old["iterations"] == 3
    assert old["model_iteration"] == 3 and old["model_games"] == 6 and "started_from" not in old
    assert old["lr_multiplier"] == read_checkpoint(os.path.join(run, "checkpoint.pkl"))["lr_multiplier"]
    assert old["size_free"] is True and old["trained_sizes"] == ["6x6"]  # the default net is size-free
    assert old["evaluations"][0]["opponent"] == "pure:20"
    assert old["evaluations"][0]["playouts"] == tiny_config().n_playout  # the net's search, kept
    assert "heuristic_level_now" not in old  # a run evaluated by pure MCTS
    assert old["probe"]["games"] == probe and set(old["probe"]) == {"games", "agree", "top3", "loss", "value"}
    # the whole curve, a row an iteration, with the probe and the update's figures
    columns, rows = old["curve"]["columns"], old["curve"]["rows"]
    assert [row[columns.index("iteration")] for row in rows] == [1, 2, 3]
    assert all(row[columns.index("probe_agree")] is not None for row in rows)
    assert rows[-1][columns.index("value_loss")] is not None and rows[-1][columns.index("window")] > 0

    # a second run starts from the shipped model and ships its latest weights over the same name
    again = str(tmp_path / "again")
    TrainPipeline(tiny_config(), again, log=lambda s: None,
                  init_model=os.path.join(out, "first.npz")).run(iterations=2)  # the first has no update
    second = ship(again, "first", "--out-dir", out, "--model", "checkpoint",
                  "--started-from", os.path.join(out, "first.json"))
    assert second.returncode == 0, second.stderr
    new = json.load(open(os.path.join(out, "first.json")))
    assert new["model_iteration"] == 2 and new["from"] == "checkpoint" and "probe" not in new  # none logged
    # the checkpoint's weights are shipped as the size-free net it trained, naming its sizes
    assert new["size_free"] is True and new["trained_sizes"] == ["6x6"]
    assert new["started_from"]["model_iteration"] == 3 and new["lineage_games"] == 6 + 4
    assert [(r["event"], r.get("how"), r.get("init_model")) for r in new["sessions"]] == [
        ("start", "new", "first.npz"), ("stop", None, None)]
    assert new["sessions"][0]["lr_multiplier"] == old["lr_multiplier"]  # it went on at the first run's step
    # the run kept the record of the model it started from: shipped without --started-from, the
    # lineage is the same
    by_itself = ship(again, "by_itself", "--out-dir", out, "--model", "checkpoint")
    assert by_itself.returncode == 0, by_itself.stderr
    kept = json.load(open(os.path.join(out, "by_itself.json")))
    assert kept["started_from"]["sessions"] == old["sessions"] and kept["lineage_games"] == 6 + 4
    weights = read_checkpoint(os.path.join(again, "checkpoint.pkl"))["learner"]["average"]  # the weights that play
    shipped = PolicyValueModel.load(os.path.join(out, "first.npz"), device="cpu").weights()
    assert all(np.array_equal(shipped[k], w) for k, w in weights.items())

    # the same run, further on, shipped over its own interim model: the record it replaces is not
    # where the run started, so the lineage keeps the first model's record and counts no game twice
    TrainPipeline.resume(again, log=lambda s: None).run(iterations=1)
    assert read_checkpoint(os.path.join(again, "checkpoint.pkl"))["init_record"]["sessions"] == old["sessions"]
    third = ship(again, "first", "--out-dir", out, "--model", "checkpoint",
                 "--started-from", os.path.join(out, "first.json"))
    assert third.returncode == 0, third.stderr
    assert "is of an earlier model of this run (iteration 2)" in third.stderr
    latest = json.load(open(os.path.join(out, "first.json")))
    assert latest["model_iteration"] == 3 and latest["started_from"]["model_iteration"] == 3
    assert latest["started_from"]["sessions"] == old["sessions"] and latest["lineage_games"] == 6 + 6


def test_a_bad_record_is_a_clear_error_and_writes_nothing(tmp_path):
    run, out = str(tmp_path / "run"), str(tmp_path / "models")
    os.makedirs(out)
    TrainPipeline(tiny_config(), run, log=lambda s: None).run(iterations=2)
    (tmp_path / "bad.json").write_text("{\"model\": \"x.npz\"}")
    result = ship(run, "m", "--out-dir", out, "--started-from", str(tmp_path / "bad.json"))
    assert result.returncode == 1
    assert "is not a training record (it lacks model_iteration, config)" in result.stderr
    assert os.listdir(out) == []


def test_ship_a_copy_taken_while_the_run_went_on(tmp_path):
    run, out = str(tmp_path / "run"), str(tmp_path / "models")
    os.makedirs(out)
    TrainPipeline(tiny_config(), run, log=lambda s: None).run(iterations=2)
    copy = str(tmp_path / "cand2.npz")
    shutil.copy(os.path.join(run, "current_model.npz"), copy)
    TrainPipeline.resume(run, log=lambda s: None).run(iterations=1)  # current_model.npz is iteration 3's now

    # what the run cannot have written at that iteration is refused, and nothing is written
    other_net = ship(run, "m", "--out-dir", out, "--model", os.path.join(ROOT, "models", "gomoku_8x8_5.npz"),
                     "--iteration", "2")
    assert other_net.returncode == 1 and "is not a model of this run" in other_net.stderr
    too_late = ship(run, "m", "--out-dir", out, "--model", copy, "--iteration", "4")
    assert too_late.returncode == 1 and "holds iterations 1 to 3" in too_late.stderr
    not_a_copy = ship(run, "m", "--out-dir", out, "--model", "current_model.npz", "--iteration", "3")
    assert not_a_copy.returncode == 1 and "copied aside" in not_a_copy.stderr
    assert os.listdir(out) == []

    shipped = ship(run, "m", "--out-dir", out, "--model", copy, "--iteration", "2")
    assert shipped.returncode == 0, shipped.stderr
    record = json.load(open(os.path.join(out, "m.json")))
    assert record["model_iteration"] == 2 and record["model_games"] == 4  # its games, not the run's 6
    assert record["iterations"] == 3 and record["from"] == "current_model.npz at iteration 2"
    cpu_s = {r["iteration"]: r["cpu_s"] for r in map(json.loads, open(os.path.join(run, "metrics.jsonl")))
             if r.get("event") == "iteration"}
    assert record["model_cpu_hours"] == round(cpu_s[2] / 3600, 2)  # its hours, not the run's
    with open(copy, "rb") as a, open(os.path.join(out, "m.npz"), "rb") as b:
        assert a.read() == b.read()
