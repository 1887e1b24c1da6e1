"""scripts/strength_curve.py: a run's score by colour against its CPU hours, from arena games files."""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import strength_curve  # noqa: E402


def games_file(path, results):
    """An arena games file: one game per (A's colour, winner) pair."""
    lines = [{"format": "gomoku-zero-game/1", "moves": [], "colours": {"A": colour, "B": "white" if colour == "black"
                                                                     else "black"}, "winner": winner}
             for colour, winner in results]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_the_table_counts_each_colour_and_the_plot_is_drawn(tmp_path, capsys):
    first = games_file(tmp_path / "a.jsonl", [("black", "A"), ("white", "B"), ("black", None), ("white", "B")])
    later = games_file(tmp_path / "b.jsonl", [("black", "A"), ("white", "A")])
    shipped = games_file(tmp_path / "c.jsonl", [("black", "B"), ("white", "A")])
    points = tmp_path / "points.json"
    points.write_text(json.dumps({"title": "a run", "points": [
        {"model": "later", "cpu_hours": 2.5, "games": {"an engine": [later], "the old model": [shipped]}},
        {"model": "first", "cpu_hours": 0, "games": {"an engine": [first]}}]}))
    png = tmp_path / "curve.png"
    assert strength_curve.main([str(points), "--plot", str(png)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| first") or
            line.startswith("| later")]
    # sorted by CPU hours; W-D-L as Black and as White; a draw is half a point
    assert rows[0].startswith("| first | 0 | an engine | 1-1-0 | 0-0-2 | 0.375 (")
    assert rows[1].startswith("| later | 2.5 | an engine | 1-0-0 | 1-0-0 | 1.000 (")
    assert rows[2].startswith("| later | 2.5 | the old model | 0-0-1 | 1-0-0 | 0.500 (")
    assert png.stat().st_size > 0


def test_a_bad_points_file_is_one_clear_error(tmp_path, capsys):
    missing = tmp_path / "points.json"
    missing.write_text(json.dumps({"points": [{"model": "x", "cpu_hours": 1, "games": {"e": ["nowhere.jsonl"]}}]}))
    assert strength_curve.main([str(missing)]) == 2
    assert "nowhere.jsonl" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert strength_curve.main([str(broken)]) == 2
    assert "broken.json" in capsys.readouterr().err


def test_a_game_played_again_move_for_move_counts_once(tmp_path, capsys):
    game = {"players": {"1": "az:m.npz:800", "2": "engine:pbrain-e"}, "engine_info": "max_node 10",
            "moves": ["h8", "i9", "g9"], "colours": {"A": "black", "B": "white"}, "winner": "A"}
    first, again = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(json.dumps(game) + "\n" + json.dumps(dict(game, moves=["h8", "i9", "g7"])) + "\n")
    again.write_text(json.dumps(game) + "\n" + json.dumps(dict(game, engine_info="max_node 20")) + "\n")
    assert strength_curve.colour_record([str(first), str(again)]) == {"black": [3, 0, 0], "white": [0, 0, 0]}
    assert "b.jsonl: 1 game(s) repeat an earlier game" in capsys.readouterr().err


def test_points_may_give_the_probes_agreement_with_or_without_games(tmp_path, capsys):
    games = games_file(tmp_path / "a.jsonl", [("black", "A"), ("white", "B")])
    points = tmp_path / "points.json"
    points.write_text(json.dumps({"title": "a run", "probe": "an engine's moves", "points": [
        {"model": "first", "cpu_hours": 0, "probe_agree": 0.426, "games": {"an engine": [games]}},
        {"model": "between", "cpu_hours": 1, "probe_agree": 0.45}]}))
    png = tmp_path / "curve.png"
    assert strength_curve.main([str(points), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "| first | 0 | an engine | 1-0-0 | 0-0-1 | 0.500 (" in out and "| between | 1 | an engine" not in out
    assert "| first | 0 | 42.6% |\n| between | 1 | 45.0% |" in out
    assert png.stat().st_size > 0


def arena_file(path, a, b, a_points, games, info=None):
    """``games`` arena games of A against B, half with each colour, A scoring ``a_points`` in each half;
    ``info``: the engines' INFO text by seat ("A", "B")."""
    lines = []
    for i in range(games):
        a_black = i % 2 == 0
        won = (i // 2) < a_points // 2
        lines.append({"players": {"1": a, "2": b} if a_black else {"1": b, "2": a},
                      "colours": {"A": "black" if a_black else "white", "B": "white" if a_black else "black"},
                      "winner": "A" if won else "B", "result": (1 if a_black else 2) if won else (2 if a_black else 1),
                      "moves": [f"g{i}"], "engine_info": info or {}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_a_ladder_places_each_point_at_its_50_percent_point(tmp_path, capsys):
    engine = "engine:/x/pbrain-e"
    ladder = [arena_file(tmp_path / "e12.jsonl", engine, engine, 5, 20, {"A": "max_node 1000", "B": "max_node 2000"}),
              arena_file(tmp_path / "e24.jsonl", engine, engine, 5, 20, {"A": "max_node 2000", "B": "max_node 4000"})]
    level = arena_file(tmp_path / "first.jsonl", "az:runs/r/first.npz:800", engine, 10, 20, {"B": "max_node 2000"})
    strong = arena_file(tmp_path / "later.jsonl", "az:runs/r/later.npz:800", engine, 18, 20, {"B": "max_node 4000"})
    apart = arena_file(tmp_path / "apart.jsonl", "az:runs/r/later.npz:400", "heuristic:1", 10, 20)
    points = tmp_path / "points.json"
    points.write_text(json.dumps({"title": "a run", "ladder": {
        "games": [str(tmp_path / "e*.jsonl")], "anchor": "engine pbrain-e, max_node 1000",
        "scale": "engine pbrain-e, max_node", "unit": "nodes"}, "points": [
        {"model": "first", "cpu_hours": 0, "games": {"the engine": [level]}},
        {"model": "between", "cpu_hours": 1, "probe_agree": 0.45},
        {"model": "later", "cpu_hours": 2, "games": {"the engine": [strong], "a weak player": [apart]}},
        {"model": "apart", "cpu_hours": 3, "games": {"a weak player": [apart]}}]}))
    png = tmp_path / "curve.png"
    assert strength_curve.main([str(points), "--plot", str(png)]) == 0
    captured = capsys.readouterr()
    rows = {line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:7]]
            for line in captured.out.split("| model | CPU hours | on the ladder as |")[1].split("\n\n")[0].splitlines()[2:]}
    assert set(rows) == {"first", "later"}  # a point without games is not placed
    assert rows["first"][1] == "az:first.npz:800" and rows["first"][3] == "2,000"
    low, high = rows["first"][4].split(" to ")
    assert 1000 <= float(low.replace(",", "")) < 2000 < float(high.replace(",", "")) <= 4000
    assert rows["later"][3] == ">= 4,000"
    assert "no chain of games links az:later.npz:400, heuristic:1" in captured.err
    assert "apart (az:later.npz:400) has no 50% point on the ladder" in captured.err
    assert png.stat().st_size > 0


def test_the_pace_is_the_slope_of_the_50_percent_points_in_doublings_an_hour():
    def point(hours, budget, side=0):
        return {"cpu_hours": hours, "fifty": {"point": (budget, side)}}

    # doubling every CPU hour: fourfold at hour 2, exactly on the line
    rising = [point(0, 1000), point(1, 2000), point(2, 4000), point(3, 8000)]
    text = strength_curve.pace(rising, "nodes")
    assert text.startswith("pace: +1.000 ± 0.000 doublings of the 50% point a CPU hour (a line through 4 points")
    assert text.endswith("four times the first point (4,000 nodes) at 2 CPU hours")
    # a point past the end of the scale is a bound, not a value: left out of the line
    assert strength_curve.pace(rising + [point(4, 100, side=-1)], "nodes") == text
    level = strength_curve.pace([point(0, 1000), point(1, 1100), point(2, 900)], "nodes")
    assert "never reaches four times" in level
    assert strength_curve.pace(rising[:2], "nodes") == ""
    # from hour 1 on: the line through the last three, fourfold over the first of them at hour 3
    later = strength_curve.pace(rising, "nodes", since=1)
    assert "(a line through 3 points, 1 to 3 CPU hours)" in later
    assert later.endswith("four times the first point (8,000 nodes) at 3 CPU hours")
