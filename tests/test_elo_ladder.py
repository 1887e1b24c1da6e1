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
