"""Game records on disk: round trips, moves as labels or indices, malformed files refused."""

import json
import os
import re

import pytest

from gomoku.game.gamefile import GAME_FORMAT, GameFileError, GameRecord, load_game, save_game
from tests.boards import BLACK_WINS, board_after


def write_json(path, data):
    path.write_text(json.dumps(data))
    return str(path)


# ---------------------------------------------------------------- records
def test_finished_game_round_trips(tmp_path):
    board = board_after(BLACK_WINS)
    record = GameRecord.from_board(board, {1: "human", 2: "pure:50"})
    path = str(tmp_path / "game.json")
    save_game(path, record)
    data = json.loads(open(path).read())
    assert data["format"] == GAME_FORMAT
    assert data["moves"] == BLACK_WINS
    assert data["players"] == {"1": "human", "2": "pure:50"}
    assert data["result"] == 1
    loaded = load_game(path)
    assert loaded == record
    assert loaded.replay().winning_line() == board.winning_line()


def test_unfinished_game_round_trips_and_continues(tmp_path):
    board = board_after(BLACK_WINS[:4])
    path = str(tmp_path / "sub" / "game.json")  # the folder is created
    save_game(path, GameRecord.from_board(board))
    loaded = load_game(path)
    assert loaded.result is None
    replayed = loaded.replay()
    assert replayed.history == board.history and replayed.current_player == 1
    replayed.do_move(replayed.parse_move("c3"))


def test_indices_are_read_as_moves(tmp_path):
    data = {"format": GAME_FORMAT, "width": 6, "height": 6, "n_in_row": 4, "moves": [0, "b1", 7],
            "players": {}, "result": None}
    record = load_game(write_json(tmp_path / "g.json", data))
    assert record.moves == [0, 1, 7]


def test_saving_over_a_file_replaces_it(tmp_path):
    path = str(tmp_path / "game.json")
    save_game(path, GameRecord.from_board(board_after(["a1"])))
    save_game(path, GameRecord.from_board(board_after(["a1", "b1"])))
    assert load_game(path).moves == [0, 1]
    assert os.listdir(tmp_path) == ["game.json"]  # no temporary file left behind


@pytest.mark.parametrize("change, message", [
    ({"format": "something/2"}, "format"),
    ({"width": "six"}, "'width' must be an integer"),
    ({"n_in_row": 9}, "impossible"),
    ({"moves": "a1 b2"}, "'moves' must be a list"),
    ({"moves": ["a1", "a1"]}, "move 2 cannot be played"),
    ({"moves": ["a1", "z9"]}, "move 2"),
    ({"moves": ["a1", None]}, "move 2 must be a label"),
    ({"moves": BLACK_WINS + ["e1"]}, "move 8 cannot be played"),
    ({"result": 2}, "the record says the result is a win for White"),
    ({"result": "black"}, "'result' must be"),
    ({"start_player": 3}, "'start_player'"),
    ({"players": {"1": 5}}, "'players'"),
])
def test_malformed_records_are_refused_clearly(tmp_path, change, message):
    data = {"format": GAME_FORMAT, "width": 6, "height": 6, "n_in_row": 4, "start_player": 1,
            "moves": BLACK_WINS, "players": {"1": "human", "2": "human"}, "result": 1}
    data.update(change)
    with pytest.raises(GameFileError, match=message):
        load_game(write_json(tmp_path / "bad.json", data))


def test_unreadable_files_are_refused_clearly(tmp_path):
    with pytest.raises(GameFileError, match="no game file"):
        load_game(str(tmp_path / "missing.json"))
    (tmp_path / "junk.json").write_text("{not json")
    with pytest.raises(GameFileError, match="not a readable JSON game record"):
        load_game(str(tmp_path / "junk.json"))
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(GameFileError, match="JSON object"):
        load_game(str(tmp_path / "list.json"))


def test_a_games_file_is_read_a_line_a_game_and_a_bad_one_is_a_clear_error(tmp_path):
    from gomoku.game.gamefile import read_game_lines

    good = tmp_path / "games.jsonl"
    good.write_text('{"moves": []}\n\n{"moves": [1]}\n')
    assert read_game_lines(str(good)) == [{"moves": []}, {"moves": [1]}]
    for text, message in (("", "holds no games"), ("[1, 2]\n", "a line that is not a JSON object"),
                          ("{oops\n", "is not a games file (JSONDecodeError")):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(text)
        with pytest.raises(GameFileError, match=re.escape(message)):
            read_game_lines(str(bad))
    with pytest.raises(GameFileError, match="missing.jsonl is not a games file"):
        read_game_lines(str(tmp_path / "missing.jsonl"))
