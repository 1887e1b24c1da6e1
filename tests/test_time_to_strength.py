import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "time_to_strength.py")
# long enough for a run to start (Paddle's import) and finish an iteration on a busy machine
BUDGET_S = 30
TINY = "--n-playout 8 --games-per-iter 2 --batch-size 32 --buffer-size 500 --workers 1 --device cpu"


def run(*args, timeout=280):
    return subprocess.run([sys.executable, SCRIPT, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_two_recipes_for_a_few_seconds_write_the_curve_and_the_tables(tmp_path):
    out = tmp_path / "tts"
    done = run("--board", "6x6x4", "--seconds", str(BUDGET_S), "--snapshots", "2",
               "--recipe", f"ref={TINY}", "--recipe", f"pcr={TINY} --p-full 0.5 --n-fast 2",
               "--opponent", "pure:10", "--games", "2", "--playouts", "8", "--arena-workers", "1",
               "--targets", "0.5,1", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    with open(out / "time_to_strength.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "time_to_strength.json").read_text())
    assert data["board"] == {"width": 6, "height": 6, "n_in_row": 4}
    assert [r["name"] for r in data["recipes"]] == ["ref", "pcr"]
    for recipe in data["recipes"]:
        assert set(recipe["hours_to_reach"]) == {"0.5", "1.0"}
        snapshots = recipe["snapshots"]
        assert snapshots, recipe
        hours = [s["hours"] for s in snapshots]
        assert hours == sorted(hours) and 0 < hours[-1] <= BUDGET_S / 3600
        for s in snapshots:
            assert 0 <= s["score_low"] <= s["score"] <= s["score_high"] <= 1
            assert s["wins"] + s["draws"] + s["losses"] == 2
            assert os.path.isfile(out / s["model"])
        reached = recipe["hours_to_reach"]["0.5"]
        first = next((s["hours"] for s in snapshots if s["score"] >= 0.5), None)
        assert reached == first
    table = (out / "time_to_strength.md").read_text()
    assert "| ref |" in table and "| pcr |" in table and "score 0.5" in table
    # the runs trained with their recipes and were stopped, with their checkpoints
    for name, all_recorded in (("ref", True), ("pcr", False)):
        with open(out / name / "run" / "metrics.jsonl") as f:
            records = [json.loads(line) for line in f]
        assert not any(r["event"] == "evaluation" for r in records)  # the budget went to training
        records = [r for r in records if r["event"] == "iteration"]
        positions = sum(r["positions"] for r in records)
        moves = sum(r["episode_len"] * 2 for r in records)  # two games per iteration
        assert (abs(positions - moves) < 1e-6) == all_recorded


def fake_race(folder, names, opponent="pure:10", scores=(0.2, 0.6)):
    """A race's time_to_strength.json as a race writes it, with made-up points."""
    folder.mkdir()
    recipes = [{"name": name, "flags": f"--{name}", "hours_to_reach": {}, "cpu_hours_to_reach": {},
                "snapshots": [{"hours": 0.5 * (k + 1), "cpu_hours": 0.3 * (k + 1), "iteration": k + 1,
                               "games": 32 * (k + 1), "model": f"{name}/snapshots/iter{k + 1:06d}.npz",
                               "score": score, "score_low": score / 2, "score_high": (1 + score) / 2,
                               "as_white": score, "wins": 1, "draws": 0, "losses": 1}
                              for k, score in enumerate(scores)]} for name in names]
    data = {"board": {"width": 6, "height": 6, "n_in_row": 4}, "budget_hours": 1.0, "side_by_side": len(names),
            "cores": 2, "machine": "a CPU", "opponent": opponent, "games_per_snapshot": 2, "openings": None,
            "snapshot_playouts": 8, "seed": 0, "targets": [0.5], "recipes": recipes}
    path = folder / "time_to_strength.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.timeout(120)
def test_races_scored_alike_merge_into_one_table_and_plot(tmp_path):
    first = fake_race(tmp_path / "first", ["old", "new"])
    second = fake_race(tmp_path / "second", ["other"], scores=(0.9, 1.0))
    out = tmp_path / "merged"
    done = run("--merge", first, second, "--targets", "0.5,0.95", "--out", str(out), timeout=100)
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "time_to_strength.json").read_text())
    assert [(r["name"], r["race"]) for r in data["recipes"]] == [("old", 1), ("new", 1), ("other", 2)]
    other = data["recipes"][2]
    assert other["cpu_hours_to_reach"] == {"0.5": 0.3, "0.95": 0.6}  # its second point, 0.6 CPU-h, scored 1.0
    assert data["recipes"][0]["cpu_hours_to_reach"] == {"0.5": 0.6, "0.95": None}
    # the snapshots' models are named from the merged folder
    assert other["snapshots"][0]["model"] == os.path.join("..", "second", "other", "snapshots", "iter000001.npz")
    assert [race["file"] for race in data["races"]] == ["time_to_strength.json"] * 2
    table = (out / "time_to_strength.md").read_text()
    assert "2 races merged" in table and "| other (race 2) | 0.50 | 0.30 |" in table
    assert (out / "time_to_strength.png").read_bytes()[:4] == b"\x89PNG"
    # races scored against another opponent, or a recipe name twice, are refused
    third = fake_race(tmp_path / "third", ["third"], opponent="pure:1000")
    done = run("--merge", first, third, "--out", str(tmp_path / "bad"), timeout=100)
    assert done.returncode != 0 and "opponent" in done.stderr
    done = run("--merge", first, first, "--out", str(tmp_path / "bad"), timeout=100)
    assert done.returncode != 0 and "in two races" in done.stderr


@pytest.mark.parametrize("args, message", [
    (["--seconds", "5", "--recipe", "no-equals-sign"], "NAME=FLAGS"),
    (["--seconds", "5", "--recipe", "a=", "--recipe", "a="], "must differ"),
    (["--seconds", "5", "--recipe", "a=", "--board", "4x4x5"], "cannot hold"),
    (["--seconds", "5", "--recipe", "a=", "--targets", "1.5"], "targets"),
    (["--recipe", "a="], "--hours"),
    (["--seconds", "5"], "--recipe"),
    (["--merge", "a.json", "--recipe", "a="], "no --recipe"),
])
def test_bad_arguments_are_clear_errors(args, message):
    done = run(*args, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr
