"""Search options beyond the plain PUCT search: first-play urgency and the win check."""

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.search.gumbel import GumbelPlayer
from gomoku.search.mcts import MCTS
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.options import SearchOptions, check_search_options
from tests.boards import load_board


@pytest.mark.parametrize("width, height, n_in_row", [(9, 9, 5), (6, 6, 4), (7, 5, 3)])
def test_can_win_now_agrees_with_winning_moves(width, height, n_in_row):
    rng = np.random.default_rng(width * height + n_in_row)
    seen = {True: 0, False: 0}
    for _ in range(60):
        board = Board(width, height, n_in_row)
        while not board.game_over:
            expected = bool(board.winning_moves())
            assert board.can_win_now() == expected
            seen[expected] += 1
            board.play(int(rng.choice(board.legal_moves())))
        assert not board.can_win_now()  # nobody moves once the game is over
    assert seen[True] > 20 and seen[False] > 20


# Black (X) has four on the fifth row, blocked on the left: only g5 stops five. White (O) to move.
FOUR = """
    ........O
    .........
    .........
    .........
    .OXXXX...
    .........
    .........
    .........
    O........
"""
BLOCK, DECOY = "g5", "a9"


class DecoyEvaluator:
    """A net that likes one far-away move and sees nothing: value 0 everywhere.

    It counts the positions it was asked about in which the player to move could
    complete a line at once.
    """

    def __init__(self, decoy: int):
        self.decoy = decoy
        self.asked_about_wins = 0

    def evaluate(self, boards):
        priors = np.full((len(boards), boards[0].size), 0.1 / boards[0].size)
        priors[:, self.decoy] += 0.9
        self.asked_about_wins += sum(b.can_win_now() for b in boards)
        return priors, np.zeros(len(boards))


class FavouriteTwo:
    """Priors 0.45 on each of ``moves``, the rest spread evenly; the player to move is always +0.5 ahead."""

    def __init__(self, moves):
        self.moves = moves

    def evaluate(self, boards):
        priors = np.full((len(boards), boards[0].size), 0.1 / boards[0].size)
        priors[:, self.moves] += 0.45
        return priors, np.full(len(boards), 0.5)


def four_to_block():
    board = load_board(FOUR)
    assert board.current_player == 2 and board.winning_moves() == []
    return board


def test_win_check_values_a_won_position_without_the_net_and_finds_the_block():
    board = four_to_block()
    decoy = board.parse_move(DECOY)
    # The plain search asks the net about the decoy's reply position, where Black has five.
    evaluator = DecoyEvaluator(decoy)
    MCTSPlayer(evaluator, n_playout=200, seed=0).get_action(board.copy())
    assert evaluator.asked_about_wins > 0
    evaluator = DecoyEvaluator(decoy)
    player = MCTSPlayer(evaluator, n_playout=200, seed=0, win_check=True)
    move = player.get_action(board.copy())
    assert evaluator.asked_about_wins == 0
    assert board.move_to_label(move) == BLOCK
    root = player.mcts.root
    decoy_index = int(np.flatnonzero(root.moves == decoy)[0])
    assert root.child_Q[decoy_index] == -1.0  # Black's known win
    # Once known to lose, a move gets no more visits while another is left
    assert root.child_N[decoy_index] == 1
    assert root.lost.sum() == len(root.moves) - 1 and not root.lost[root.moves == board.parse_move(BLOCK)].any()


def test_gumbel_search_with_the_win_check_blocks():
    board = four_to_block()
    evaluator = DecoyEvaluator(board.parse_move(DECOY))
    player = GumbelPlayer(evaluator, n_playout=256, gumbel_m=128, seed=0, win_check=True)
    move, pi = player.get_action(board.copy(), return_probs=True)
    assert board.move_to_label(move) == BLOCK
    assert evaluator.asked_about_wins == 0
    assert pi.argmax() == move


def test_the_root_itself_is_searched_when_its_player_can_win():
    board = load_board(FOUR, to_move=1)  # now Black moves and has five at g5
    player = MCTSPlayer(FavouriteTwo([]), n_playout=200, seed=0, win_check=True)
    assert board.move_to_label(player.get_action(board.copy())) == BLOCK
    assert player.mcts.root.expanded




def test_fpu_keeps_a_side_that_is_behind_on_the_moves_its_prior_likes():
    board = Board(9, 9, 5)
    favourites = [board.move_at(4, 4), board.move_at(4, 5)]
    visited = {}
    for fpu in (None, 0.25):
        tree = MCTS(fpu=fpu)
        for _ in range(100):
            tree.playout(board, FavouriteTwo(favourites))
        root = tree.root
        visited[fpu] = set(int(m) for m in root.moves[root.child_N > 0])
    # Every child of the root is worth -0.5 to its mover: with 0 for the unvisited, the plain
    # search tries move after move the prior rules out; with the reduction only the two it likes.
    assert len(visited[None]) > 10
    assert visited[0.25] == set(favourites)


@pytest.mark.parametrize("fpu, win_check, solve", [(-0.1, False, False), (float("nan"), False, False),
                                                   (True, False, False), ("0.2", False, False), (None, 1, False),
                                                   (None, False, "yes")])
def test_bad_search_options_are_refused(fpu, win_check, solve):
    with pytest.raises(ValueError, match="fpu|win_check|solve"):
        check_search_options(fpu, win_check, solve)
    with pytest.raises(ValueError):
        MCTS(fpu=fpu, win_check=win_check, solve=solve)
    with pytest.raises(ValueError):
        SearchOptions(fpu, win_check, solve)


@pytest.mark.parametrize("argv", [["--fpu", "-1"], ["--fpu", "nan"], ["--fpu", "x"]])
def test_every_entry_point_refuses_a_bad_fpu_flag(argv, capsys):
    import play
    from gomoku.play.arena import run as arena
    from gomoku.play.engine import cli as pbrain

    for main in (arena.main, pbrain.main, play.main):
        with pytest.raises(SystemExit):
            main(["--a", "pure:10", "--b", "pure:10"] + argv if main is arena.main else argv)
        assert "is neither a number of at least 0 nor off" in capsys.readouterr().err


def test_search_flags_are_read_alike_everywhere():
    import argparse

    from gomoku.search.options import add_search_flags

    parser = argparse.ArgumentParser()
    add_search_flags(parser)
    for argv, options, flags in (([], SearchOptions(), ""),
                                 (["--fpu", "0.25", "--win-check"], SearchOptions(0.25, True), " --fpu 0.25 --win-check"),
                                 (["--solve"], SearchOptions(solve=True), " --solve"),
                                 (["--solve", "--win-check"], SearchOptions(win_check=True, solve=True), " --solve")):
        read = SearchOptions.from_args(parser.parse_args(argv))
        assert read == options and read.flags() == flags
        assert SearchOptions.from_args(parser.parse_args(flags.split())) == read  # a shown command gives it back
    assert SearchOptions(0.25, solve=True).words() == ["fpu 0.25", "solver"]
    assert SearchOptions(solve=True).win_check  # the solver includes the win check
    # a Gumbel search takes the options but those only PUCT reads
    assert SearchOptions(0.25, threats=True).for_gumbel() == SearchOptions(threats=True)
    assert SearchOptions(0.25, solve=True).gumbel_kwargs() == {"win_check": True, "solve": True}


def test_play_and_the_engine_search_sharp_unless_told_and_the_arena_as_the_spec(capsys):
    import play
    from gomoku.play.arena import run as arena
    from gomoku.play.engine import cli as pbrain
    from gomoku.search.options import SEARCH_PRESETS

    sharp = SearchOptions(fpu=0.25, solve=True)
    assert SEARCH_PRESETS["sharp"] == sharp
    assert SearchOptions.from_args(play.parse_args([])) == sharp
    assert SearchOptions.from_args(pbrain.build_parser().parse_args([])) == sharp
    assert SearchOptions.from_args(arena.parse_args(["--a", "pure:1", "--b", "pure:1"])) == SearchOptions()
    # Each flag changes one option of the preset; turning the win check off takes the solver with it.
    for argv, options in ((["--search", "plain"], SearchOptions()),
                          (["--fpu", "off"], SearchOptions(None, True, True)),
                          (["--fpu", "0.5"], SearchOptions(0.5, True, True)),
                          (["--solve", "off"], SearchOptions(0.25, True, False)),
                          (["--win-check", "off"], SearchOptions(0.25, False, False)),
                          (["--search", "plain", "--solve"], SearchOptions(None, True, True)),
                          (["--search", "plain", "--fpu", "0.25", "--win-check", "on"], SearchOptions(0.25, True))):
        assert SearchOptions.from_args(play.parse_args(argv)) == options, argv
    for argv in (["--solve", "maybe"], ["--search", "fast"], ["--fpu", "-1"]):
        with pytest.raises(SystemExit):
            play.parse_args(argv)
    assert "is not on or off" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        play.parse_args(["--search", "reference"])
    assert "'plain'" in capsys.readouterr().err  # the error names the presets


def test_every_command_offers_the_same_device_and_precision_flags(capsys):
    from gomoku.net.flags import DEVICES, PRECISIONS
    from gomoku.play import cli as play_cli
    from gomoku.play.arena import run as arena
    from gomoku.play.engine import cli as pbrain
    from devtools.engine_check import soak
    from devtools.engine_check.fuzz import cli as fuzz
    from gomoku.train import cli as train_cli

    pair = ["--a", "pure:1", "--b", "pure:1"]
    readers = {"play": play_cli.parse_args, "arena": lambda argv: arena.parse_args(pair + argv),
               "engine": pbrain.build_parser().parse_args, "train": train_cli.build_parser().parse_args,
               "soak": lambda argv: soak.build_parser().parse_args(["--model", "m.npz"] + argv),
               "fuzz": fuzz.build_parser().parse_args}
    with_precision = {"play", "arena", "engine", "train"}
    for name, read in readers.items():
        for device in DEVICES:
            assert read(["--device", device]).device == device, name
        if name in with_precision:
            for precision in PRECISIONS:
                assert read(["--precision", precision]).precision == precision, name
        for bad in (["--device", "tpu"], ["--precision", "fp16"]):
            with pytest.raises(SystemExit):
                read(bad)
    assert "invalid choice: 'tpu'" in capsys.readouterr().err
