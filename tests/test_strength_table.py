"""scripts/strength_table.py: the rows it plans, a real tiny table, resuming from its JSON, bad input."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "strength_table.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import strength_table  # noqa: E402


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    folder = tmp_path_factory.mktemp("models")
    paths = []
    for seed in (1, 2):
        import paddle
        paddle.seed(seed)
        path = str(folder / f"model{seed}.npz")
        PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(path)
        paths.append(path)
    return paths


def test_rows_are_planned_in_the_documented_order():
    args = strength_table.parse_args(["m.npz", "--previous", "old.npz", "--levels", "0,2"])
    assert strength_table.plan_rows(args) == [
        ("az:m.npz:400", "az:old.npz:400"),
        ("az:m.npz:400", "heuristic:0"),
        ("az:m.npz:400", "heuristic:2"),
        ("az:m.npz:800", "heuristic:2"),
        ("az:m.npz:400", "pure:5000"),
    ]
    args = strength_table.parse_args(["m.npz", "--levels", "1", "--target-playouts", "0", "--pure", "0"])
    assert strength_table.plan_rows(args) == [("az:m.npz:400", "heuristic:1")]


@pytest.mark.parametrize("levels", ["5", "a,b", ""])
def test_bad_levels_are_refused(levels, capsys):
    with pytest.raises(SystemExit):
        strength_table.parse_args(["m.npz", "--levels", levels])
    assert "levels" in capsys.readouterr().err


def test_a_tiny_table_is_played_saved_and_resumed(models, tmp_path, capsys):
    out = str(tmp_path / "table.json")
    argv = [models[0], "--previous", models[1], "--playouts", "8", "--levels", "0", "--target-playouts", "16",
            "--pure", "20", "--games", "2", "--workers", "1", "--size", "6x6", "--json", out]
    assert strength_table.main(argv) == 0
    printed = capsys.readouterr().out
    table = json.load(open(out))
    assert table["format"] == strength_table.TABLE_FORMAT and table["model"] == models[0]
    assert [(row["a_spec"], row["b_spec"]) for row in table["rows"]] == [
        (f"az:{models[0]}:8", f"az:{models[1]}:8"), (f"az:{models[0]}:8", "heuristic:0"),
        (f"az:{models[0]}:16", "heuristic:0"), (f"az:{models[0]}:8", "pure:20")]
    for row in table["rows"]:
        total = row["total"]
        assert row["games"] == 2 == total["wins"] + total["draws"] + total["losses"]
        assert row["board"] == {"width": 6, "height": 6, "n_in_row": 4} and row["size"] == [6, 6]
        assert row["command"].startswith(f"gomoku-arena --a {row['a_spec']} --b {row['b_spec']}")
        assert row["command"] in printed
    # A second call plays nothing: every row is read back from the file.
    before = os.path.getmtime(out)
    assert strength_table.main(argv) == 0
    assert capsys.readouterr().out.count("(saved)") == 4
    assert os.path.getmtime(out) == before
    # Another level adds its rows (level 1, and level 1 at the target playouts as the strongest
    # now); the saved ones stay as they were.
    assert strength_table.main(argv[:6] + ["0,1"] + argv[7:]) == 0
    rows = json.load(open(out))["rows"]
    assert rows[:4] == table["rows"]
    assert [(row["a_spec"], row["b_spec"]) for row in rows[4:]] == [
        (f"az:{models[0]}:8", "heuristic:1"), (f"az:{models[0]}:16", "heuristic:1")]
    # A new model under the same name plays every row again.
    with open(models[1], "rb") as f:
        other = f.read()
    replaced = tmp_path / "replaced.npz"
    replaced.write_bytes(open(models[0], "rb").read())
    argv_replaced = [str(replaced)] + argv[1:]
    assert strength_table.main(argv_replaced) == 0
    replaced.write_bytes(other)
    capsys.readouterr()
    assert strength_table.main(argv_replaced) == 0
    assert "(saved)" not in capsys.readouterr().out
    assert len(json.load(open(out))["rows"]) == 6 + 4 + 4


def test_search_options_are_rows_of_their_own(models, tmp_path, capsys):
    out = str(tmp_path / "table.json")
    argv = [models[0], "--playouts", "8", "--levels", "0", "--target-playouts", "0", "--pure", "0",
            "--games", "2", "--workers", "1", "--json", out]
    assert strength_table.main(argv) == 0
    assert strength_table.main(argv + ["--fpu", "0.25", "--win-check"]) == 0
    assert strength_table.main(argv + ["--fpu", "0.25", "--solve"]) == 0
    printed = capsys.readouterr().out
    assert "(saved)" not in printed
    rows = json.load(open(out))["rows"]
    assert ([(row["fpu"], row["win_check"], row["solve"]) for row in rows]
            == [(None, False, False), (0.25, True, False), (0.25, True, True)])
    assert rows[1]["command"].endswith("--workers 1 --fpu 0.25 --win-check") and rows[1]["command"] in printed
    assert rows[2]["command"].endswith("--workers 1 --fpu 0.25 --solve") and rows[2]["command"] in printed
    with pytest.raises(SystemExit):
        strength_table.main(argv + ["--fpu", "-1"])
    assert "fpu" in capsys.readouterr().err


def test_every_search_option_is_part_of_a_rows_key():
    row = dict(a_spec="az:m.npz:8", b_spec="heuristic:0", a_sha256="", b_sha256="", games=2, seed=0, size=None,
               fpu=0.25, win_check=True, solve=True)
    assert strength_table.row_key({**row, "threats": True}) != strength_table.row_key(row)
    assert strength_table.row_key({**row, "threats": False}) == strength_table.row_key(row)  # saved without it


def test_a_file_of_something_else_is_refused_and_left_alone(tmp_path):
    out = tmp_path / "other.json"
    out.write_text('{"format": "something-else"}\n')
    proc = subprocess.run([sys.executable, SCRIPT, "model.npz", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "not a strength table" in proc.stderr and "Traceback" not in proc.stderr
    assert out.read_text() == '{"format": "something-else"}\n'


def test_a_missing_model_is_a_clear_error(tmp_path):
    proc = subprocess.run([sys.executable, SCRIPT, str(tmp_path / "missing.npz"), "--levels", "0",
                           "--games", "2", "--workers", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "strength_table: error:" in proc.stderr and "Traceback" not in proc.stderr
