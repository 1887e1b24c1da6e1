"""scripts/elo_ladder.py: the Bradley-Terry fit, the labels, the table, and placing a newcomer."""

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import elo_ladder  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def test_a_three_to_one_score_is_191_elo_and_the_colour_advantage_is_separate():
    games = [("A", "B", 1.0)] * 30 + [("A", "B", 0.0)] * 10 + [("B", "A", 0.0)] * 30 + [("B", "A", 1.0)] * 10
    players, ratings, half, adv, _ = elo_ladder.fit(games, "B", prior=0)
    assert players == ["A", "B"] and ratings[0] == pytest.approx(190.85, abs=0.1) and abs(adv) < 1e-6
    assert half[1] == 0 and 50 < half[0] < 150
    # The same tallies with Black winning 3 of 4 either way: equal players, Black +191.
    games = [("A", "B", 1.0)] * 30 + [("A", "B", 0.0)] * 10 + [("B", "A", 1.0)] * 30 + [("B", "A", 0.0)] * 10
    _, ratings, _, adv, _ = elo_ladder.fit(games, "B", prior=0)
    assert abs(ratings[0]) < 1e-6 and adv == pytest.approx(190.85, abs=0.1)


def test_players_no_game_links_to_the_anchor_are_one_clear_error(tmp_path, capsys):
    games = [("a", "b", 1.0), ("b", "a", 0.0), ("gz1s", "r1000", 1.0), ("r1000", "gz1s", 0.5)]
    with pytest.raises(ValueError, match="no chain of games links gz1s, r1000 to the anchor 'a'"):
        elo_ladder.fit(games, "a")
    assert elo_ladder.connected(games, "b") == {"a", "b"}


def test_the_prior_keeps_a_clean_sweep_finite_and_a_chain_is_transitive():
    games = [("A", "B", 1.0), ("B", "A", 0.0)] * 5 + [("B", "C", 1.0), ("C", "B", 0.0)] * 5
    players, ratings, half, _, _ = elo_ladder.fit(games, "C", prior=2)
    assert players == ["A", "B", "C"] and ratings[0] > ratings[1] > 0 and all(h < 1000 for h in half)
    with pytest.raises(ValueError, match="anchor"):
        elo_ladder.fit(games, "D")


def test_labels_cut_paths_and_name_engine_settings():
    assert elo_ladder.player_label("az:runs/x/best_model.npz:800") == "az:best_model.npz:800"
    assert elo_ladder.player_label("engine:/opt/rapfi/pbrain-rapfi --x",
                                   "timeout_turn 5000;max_node 1000") == "engine pbrain-rapfi, max_node 1000"
    assert elo_ladder.player_label("engine:python -m gomoku.play.engine --model m.npz") == \
        "engine gomoku.play.engine"


def test_games_of_one_engine_at_two_budgets_rate_two_players(tmp_path):
    path = tmp_path / "games.jsonl"
    info = {"A": "max_node 1000", "B": "max_node 10000"}
    lines = [{"players": {"1": "engine:/x/pbrain-e", "2": "engine:/x/pbrain-e"}, "result": 2 if i % 2 == 0 else 1,
              "colours": {"A": "black" if i % 2 == 0 else "white", "B": "white" if i % 2 == 0 else "black"},
              "engine_info": info} for i in range(4)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    games, specs = elo_ladder.read_games([str(path)])
    weak, strong = "engine pbrain-e, max_node 1000", "engine pbrain-e, max_node 10000"
    assert games == [(weak, strong, 0.0), (strong, weak, 1.0)] * 2
    assert specs[strong] == ("engine:/x/pbrain-e", "max_node 10000")


def test_table_and_plot_from_a_games_file(tmp_path):
    path = tmp_path / "games.jsonl"
    lines = []
    for i in range(6):
        a_black = i % 2 == 0
        players = {"1": "heuristic:2", "2": "engine:/x/pbrain-e"} if a_black else \
            {"1": "engine:/x/pbrain-e", "2": "heuristic:2"}
        lines.append({"players": players, "result": 1 if a_black else 1, "engine_info": "max_node 10"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out, png = tmp_path / "t.md", tmp_path / "t.png"
    assert elo_ladder.main([str(path), "--anchor", "heuristic:2", "--table", str(out), "--plot", str(png)]) == 0
    text = out.read_text()
    assert "| engine pbrain-e, max_node 10 |" in text and "3/3" in text and "0/3" in text
    assert png.stat().st_size > 1000
    assert elo_ladder.main([str(path), "--anchor", "nobody"]) == 2


def test_a_game_repeated_move_for_move_counts_once(tmp_path, capsys):
    game = {"players": {"1": "az:m.npz:800", "2": "heuristic:4"}, "result": 1, "moves": ["h8", "i9", "g9"]}
    other = dict(game, moves=["h8", "i9", "g7"])
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(json.dumps(game) + "\n" + json.dumps(other) + "\n")
    second.write_text(json.dumps(game) + "\n")  # the same seed and players, played again
    games, _ = elo_ladder.read_games([str(first), str(second)])
    assert games == [("az:m.npz:800", "heuristic:4", 1.0)] * 2
    assert "1 game(s) repeat an earlier game move for move" in capsys.readouterr().err


def test_placing_a_newcomer_plays_pairs_against_the_nearest_player(tmp_path):
    path = tmp_path / "games.jsonl"
    lines = [{"players": {"1": "heuristic:0", "2": "pure:20"}, "result": 1},
             {"players": {"1": "pure:20", "2": "heuristic:0"}, "result": 2}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "new.jsonl"
    assert elo_ladder.main([str(path), "--anchor", "pure:20", "--place", "heuristic:1", "--max-games", "4",
                            "--target", "1", "--openings", "", "--size", "9x9", "--n-in-row", "5",
                            "--out", str(out)]) == 0
    new = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(new) == 4 and all("heuristic:1" in g["players"].values() for g in new)


def test_c_gomoku_cli_games_join_under_their_aliases(tmp_path):
    sgf = tmp_path / "cli.sgf"
    sgf.write_text("(;FF[4]GM[4]PB[r1k]PW[r10k]RE[W+1]TE[White win by five connection]\n;B[hh];W[ii])\n\n"
                   "(;FF[4]GM[4]PB[r10k]PW[r1k]RE[B+1]TE[Black win]\n;B[hh])\n")
    games, _ = elo_ladder.read_games([str(sgf)], {"r1k": "engine pbrain-rapfi, max_node 1000"})
    assert games == [("engine pbrain-rapfi, max_node 1000", "r10k", 0.0),
                     ("r10k", "engine pbrain-rapfi, max_node 1000", 1.0)]


def both_colours(a, b, a_points, games):
    """``games`` games between a and b, half with each colour, a scoring ``a_points`` of them."""
    half, won = games // 2, a_points / 2
    return ([(a, b, 1.0)] * int(won) + [(a, b, 0.0)] * (half - int(won))
            + [(b, a, 0.0)] * int(won) + [(b, a, 1.0)] * (half - int(won)))


def test_a_budget_scale_places_each_player_at_its_50_percent_point():
    e1, e2, e4 = ("e, n 1000", "e, n 2000", "e, n 4000")
    games = (both_colours(e2, e1, 30, 40) + both_colours(e4, e2, 30, 40)  # each doubling: +191 Elo
             + both_colours("level", e2, 20, 40)  # even with 2,000
             + both_colours("strong", e4, 36, 40))  # far above the last budget
    text = elo_ladder.budget_points(games, e1, 0.0, "e, n")
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:5]] for line in text.splitlines()[2:]}
    assert set(rows) == {"level", "strong"}  # the scale's own budgets are not listed
    rating, point, spread = rows["level"]
    assert rating == "+191" and point == "2,000"
    low, high = spread.split(" to ")
    assert 1000 < float(low.replace(",", "")) < 2000 < float(high.replace(",", "")) < 4000
    assert rows["strong"][1:] == [">= 4,000", ">= 4,000"]
    # Halfway from 1,000 to 2,000 in rating is halfway in log budget: about 1,414.
    games += both_colours("between", e1, 24, 40) + both_colours("between", e2, 16, 40)
    rows = {line.split("|")[1].strip(): line.split("|")[3].strip()
            for line in elo_ladder.budget_points(games, e1, 0.0, "e, n").splitlines()[2:]}
    assert 1300 < float(rows["between"].replace(",", "")) < 1550


def test_a_budget_scale_that_is_short_or_out_of_order_is_a_clear_error():
    games = both_colours("e, n 2000", "e, n 1000", 10, 40)  # the larger budget lost
    with pytest.raises(ValueError, match="do not rise with the budget"):
        elo_ladder.budget_points(games, "e, n 1000", 0.0, "e, n")
    with pytest.raises(ValueError, match="fewer than two"):
        elo_ladder.budget_points(games, "e, n 1000", 0.0, "f, n")
