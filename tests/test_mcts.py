import numpy as np

from gomoku.search.recipe import SelfPlayRecipe
import pytest

from gomoku.game.board import Board
from gomoku.game.lines import line_cells
from gomoku.search.mcts import MCTS, SearchStopped, search
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.rollout import pure_mcts_player, random_rollout_values
from gomoku.search.tree import TreeNode
from gomoku.actors.selfplay import game_seeds, self_play_games
from tests.boards import load_board
from tests.helpers import HashEvaluator


class IllegalWatcher(HashEvaluator):
    """Fails the test if a search ever evaluates a position reached by an illegal move."""

    def evaluate(self, boards):
        for b in boards:
            assert len(set(b.history)) == len(b.history)
            assert sum(c != 0 for c in b.cells) == len(b.history)
        return super().evaluate(boards)


def test_root_visits_equal_playouts_and_board_is_restored():
    board = Board(6, 6, 4)
    board.do_move(14)
    before = (board.cells.copy(), board.history.copy())
    player = MCTSPlayer(HashEvaluator(), n_playout=200, seed=0)
    move, pi = player.get_action(board, return_probs=True)
    root = player.mcts.root
    assert root.N == 200
    assert root.child_N.sum() == 199  # the first playout expanded the root itself
    assert (board.cells, board.history) == before
    assert board.cells[move] == 0
    assert pi[14] == 0 and abs(pi.sum() - 1) < 1e-9


def test_search_never_plays_or_evaluates_an_illegal_move():
    board = load_board("""
        XO....
        OX....
        XO....
        ......
        ......
        ......""", n_in_row=4)
    player = MCTSPlayer(IllegalWatcher(), n_playout=300, seed=1)
    for _ in range(6):
        move = player.get_action(board)
        assert board.cells[move] == 0
        board.do_move(move)
        player.reset()
        if board.game_over:
            break


def test_self_play_noise_only_on_legal_moves():
    board = Board(6, 6, 4)
    for m in (0, 1, 2, 3):
        board.do_move(m)
    player = MCTSPlayer(HashEvaluator(), n_playout=50, self_play=True, seed=3)
    for _ in range(200):
        player.reset()
        move = player.get_action(board)
        assert board.cells[move] == 0


@pytest.mark.parametrize("stones", [2, 4])
def test_explore_moves_samples_the_opening_then_plays_the_most_visited(stones):
    board = Board(6, 6, 4)
    for m in range(stones):
        board.do_move(m)
    chosen = set()
    for seed in range(30):
        player = MCTSPlayer(HashEvaluator(), n_playout=60, self_play=True, explore_moves=3, seed=seed)
        move, pi = player.get_action(board, return_probs=True)
        chosen.add(move)
        root = player.mcts.root
        assert np.allclose(pi[root.moves], root.child_N / root.child_N.sum())  # still the tau=1 target
    most_visited = int(root.moves[np.argmax(root.child_N)])
    if stones < 3:
        assert len(chosen) > 1  # sampled with noise
    else:
        assert chosen == {most_visited}


def test_visit_probs_is_a_stable_softmax_of_log_visits():
    tree = MCTS()
    root = tree.root
    root.expand(np.array([1, 4, 7]), np.full(9, 1 / 9))
    root.child_N[:] = [0, 3, 9]
    pi = tree.visit_probs(9, 1.0)
    assert np.allclose(pi[[1, 4, 7]], [0, 0.25, 0.75], atol=1e-9)
    greedy = tree.visit_probs(9, 1e-3)
    assert greedy[7] == pytest.approx(1.0)


def test_play_takes_the_most_visited_move_and_breaks_ties_by_q():
    node = TreeNode()
    node.expand(np.array([3, 7, 9, 12]), np.full(16, 1 / 16))
    node.child_N[:] = [5, 9, 9, 2]
    node.child_Q[:] = [0.9, -0.4, 0.1, 0.8]
    assert node.best_index() == 2  # 7 and 9 tie on visits; 9 has the higher Q
    node.child_N[1] = 10
    assert node.best_index() == 1  # visits first, whatever Q says


def test_backup_flips_the_value_at_each_level():
    board = Board(6, 6, 4)
    tree = MCTS()
    uniform = np.full(36, 1 / 36)
    leaf = tree.select_leaf(board)
    tree.backup(leaf, board, uniform, 0.0)  # expand the root
    leaf = tree.select_leaf(board)  # one move deep
    assert len(leaf.path) == 1 and len(board.history) == 1
    tree.backup(leaf, board, uniform, 1.0)  # the player to move after that move likes it
    root, index = leaf.path[0]
    assert root.child_Q[index] == -1.0 and root.child_N[index] == 1 and root.N == 2
    assert board.history == []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pure_mcts_takes_a_win_in_one(seed):
    board = load_board("""
        ........
        ........
        ........
        .OOO....
        ..XXXX..
        .....O..
        ........
        ........""", to_move=1)
    move = pure_mcts_player(500, seed=seed).get_action(board)
    assert board.move_to_label(move) in ("b4", "g4")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pure_mcts_blocks_a_four(seed):
    # X threatens five at f4 (a4 is already blocked); anything else loses at once.
    board = load_board("""
        ........
        ........
        ........
        ........
        OXXXX...
        ........
        ..OO....
        ........""", to_move=2)
    move = pure_mcts_player(1000, seed=seed).get_action(board)
    assert board.move_to_label(move) == "f4"


def test_rollout_outcomes_match_a_move_by_move_playout():
    # The fill-order rollout equals playing its cells one by one and stopping at the first line.
    rng = np.random.default_rng(0)
    for trial in range(300):
        board = Board(6, 6, 4)
        for m in rng.permutation(36)[: rng.integers(0, 8)]:
            if board.game_over:
                break
            board.do_move(int(m))
        if board.game_over:
            continue
        state = np.random.default_rng(trial).bit_generator.state
        value = random_rollout_values([board], np.random.default_rng(trial))[0]
        # replay the same draw by hand
        g = np.random.default_rng()
        g.bit_generator.state = state
        empty = np.asarray(board.cells) == 0
        keys = np.where(empty, g.random(36), 2.0)
        copy = board.copy()
        mover = copy.current_player
        for move in np.argsort(keys, kind="stable")[: empty.sum()]:
            copy.do_move(int(move))
            if copy.game_over:
                break
        expected = 0.0 if copy.winner == 0 else (1.0 if copy.winner == mover else -1.0)
        assert value == expected


def test_line_cells_counts():
    assert len(line_cells(8, 8, 5)) == 4 * 8 * 2 + 4 * 4 * 2
    assert len(line_cells(15, 15, 5)) == 11 * 15 * 2 + 11 * 11 * 2


def play_alone(seed: int, n_playout: int, start_player: int = 1) -> Board:
    """One self-play game searched sequentially by a player with ``seed``, as a stream would play it."""
    board = Board(6, 6, 4, start_player=start_player)
    player = MCTSPlayer(HashEvaluator(), n_playout=n_playout, self_play=True, seed=seed)
    while not board.game_over:
        move = player.get_action(board)
        board.do_move(move)
        player.notify_move(move)
    return board


def test_lockstep_games_equal_games_played_alone():
    evaluator = HashEvaluator()
    together, stats = self_play_games(evaluator, (6, 6, 4), n_games=4, parallel=4, n_playout=30,
                                      c_puct=5.0, seed=11)
    assert max(evaluator.batches) == 4  # leaves of the four games shared calls
    for i in range(4):
        # game i of the stream opens with player 1 + i % 2 and searches with its own seed
        alone = play_alone(game_seeds(11, i)[0], 30, start_player=1 + i % 2)
        assert alone.history == together[i].moves
    assert stats.games == 4 and stats.playouts == 30 * stats.moves


def test_lockstep_with_one_game_equals_the_sequential_search():
    evaluator = HashEvaluator()
    games, _ = self_play_games(evaluator, (6, 6, 4), n_games=1, parallel=1, n_playout=40,
                               c_puct=5.0, seed=5)
    board = play_alone(game_seeds(5, 0)[0], 40)
    assert board.history == games[0].moves
    assert board.winner == games[0].winner


def test_tree_reuse_keeps_the_subtree():
    board = Board(6, 6, 4)
    player = MCTSPlayer(HashEvaluator(), n_playout=100, self_play=True, seed=0)
    move = player.get_action(board)
    root = player.mcts.root
    index = int(np.flatnonzero(root.moves == move)[0])
    kept = root.children.get(index)
    player.notify_move(move)
    assert kept is not None and player.mcts.root is kept


def test_records_carry_outcomes_for_the_player_to_move():
    games, _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=2, parallel=2, n_playout=20,
                               c_puct=5.0, seed=0)
    for g in games:
        z = g.outcomes()
        assert len(z) == len(g.moves) == len(g.planes) == len(g.pis)
        if g.winner:
            assert all(z[i] == (1 if g.to_move[i] == g.winner else -1) for i in range(len(z)))
            assert z[-1] == 1  # the last mover won
        assert np.allclose(g.pis.sum(axis=1), 1, atol=1e-5)


def test_self_play_stream_carries_games_over_and_returns_exact_counts():
    from gomoku.actors.selfplay import SelfPlayStream

    stream = SelfPlayStream(HashEvaluator(), (6, 6, 4), 6, SelfPlayRecipe(n_playout=10), 0)
    first, stats = stream.collect(2)
    assert len(first) == 2 and stats.games >= 2
    second, _ = stream.collect(3)
    assert len(second) == 3
    assert [g.index for g in first + second] == [0, 1, 2, 3, 4]  # in the order they started
    stream.set_evaluator(HashEvaluator())  # new weights: games go on, trees start afresh
    assert all(slot.players[1].mcts.root.N == 0 for slot in stream.lockstep.slots)
    third, _ = stream.collect(1)
    assert len(third) == 1


def test_self_play_stream_hands_out_games_in_start_order_not_short_ones_first():
    # Six games start together; the first two to finish are the short ones. The stream must
    # give games 0 and 1 (as self_play_games plays them), or every start would bias the
    # buffer towards short, decisive games.
    from gomoku.actors.selfplay import SelfPlayStream

    baseline, _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=6, parallel=1, n_playout=10,
                                  c_puct=5.0, seed=3)
    lengths = [len(g.moves) for g in baseline]
    assert sorted(lengths)[:2] != lengths[:2]  # the case where finish order differs from start order
    stream = SelfPlayStream(HashEvaluator(), (6, 6, 4), 6, SelfPlayRecipe(n_playout=10), 3)
    first, _ = stream.collect(2)
    assert [g.moves for g in first] == [g.moves for g in baseline[:2]]
    rest, _ = stream.collect(4)
    assert [g.moves for g in rest] == [g.moves for g in baseline[2:]]


def test_a_game_far_longer_than_the_rest_is_passed_over_and_handed_out_when_it_ends():
    # Game 0 runs on while games 1 to 5 finish: with 2 games in lockstep it is passed over once
    # two later games have finished, and the first call after it ends hands it out first.
    from types import SimpleNamespace

    from gomoku.actors.selfplay import SelfPlayStream

    class ScriptedGames:  # finishes the games of each step as scripted; what plays is what has not
        def __init__(self, steps):
            self.steps, self.done = list(steps), set()
            self.slots = [SimpleNamespace(index=0)]

        def fill(self, parallel):
            pass

        def step(self, stats):
            finished = self.steps.pop(0)
            self.done |= set(finished)
            self.slots = [SimpleNamespace(index=i) for i in range(8) if i not in self.done][:2]
            return [SimpleNamespace(index=i) for i in finished]

    stream = SelfPlayStream(HashEvaluator(), (6, 6, 4), 2, SelfPlayRecipe(n_playout=10), 0)
    stream.lockstep = ScriptedGames([[1], [2], [3], [4], [0], [5], [6]])
    first, _ = stream.collect(1)
    assert [g.index for g in first] == [1]  # passed by 1 and 2 (two later games): 0 waits no longer
    assert len(stream.lockstep.steps) == 5 and stream.passed == {0}
    second, _ = stream.collect(2)
    assert [g.index for g in second] == [2, 3]  # 3 was still to come: one more step
    third, _ = stream.collect(2)
    assert [g.index for g in third] == [0, 4]  # 0 ended: it comes first
    assert not stream.passed and stream._next == 5


def test_self_play_stream_plays_ahead_a_few_calls_at_most_and_keeps_the_order():
    from gomoku.actors.selfplay import PLAY_AHEAD_CALLS, SelfPlayStream

    ahead_games = 2 * PLAY_AHEAD_CALLS
    baseline, _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=4 + ahead_games, parallel=1,
                                  n_playout=10, c_puct=5.0, seed=3)
    stream = SelfPlayStream(HashEvaluator(), (6, 6, 4), 6, SelfPlayRecipe(n_playout=10), 3)
    first, stats = stream.collect(2, keep_playing=lambda: True)  # a learner that is never done
    assert set(range(2, 2 + ahead_games)) <= set(stream._finished)  # the next calls' games are ready ...
    assert max(stream._finished) < 2 + ahead_games + 6  # ... and no more than the games then in play
    assert stats.playouts > 0
    played_ahead = []
    for _ in range(PLAY_AHEAD_CALLS):
        games, stats = stream.collect(2)
        played_ahead += games
        assert stats.playouts == 0  # ... so those calls play nothing
    asked = []
    last, stats = stream.collect(2, keep_playing=lambda: asked.append(1) is not None)  # done at once
    assert len(asked) <= 1  # asked once at most, and told to stop: no playing ahead
    assert [g.moves for g in first + played_ahead + last] == [g.moves for g in baseline]


def test_what_a_stream_plays_between_calls_is_counted_by_the_next_call():
    from gomoku.actors.selfplay import SelfPlayStream

    stream = SelfPlayStream(HashEvaluator(), (6, 6, 4), 6, SelfPlayRecipe(n_playout=10), 3)
    stream.collect(2)
    stream.play_ahead(2, keep_playing=lambda: True)  # the next calls' games, while the caller is away
    games, stats = stream.collect(2)
    assert [g.index for g in games] == [2, 3]
    assert stats.playouts > 0 and stats.moves > 0 and stats.seconds > 0
    _, stats = stream.collect(2)  # ready too, and what made them was reported once
    assert stats.playouts == 0


def test_the_search_loop_stops_where_its_caller_says_with_the_board_restored():
    board = Board(6, 6, 4)
    board.play(14)
    before = bytes(board.cells)
    tree = MCTS()
    asked = []

    def stop(done):
        asked.append(done)
        return done >= 25

    assert search(tree, board, HashEvaluator(), stop) == 25
    assert asked == list(range(26)) and tree.root.N == 25
    assert bytes(board.cells) == before and board.history == [14]


def test_a_stopped_get_action_forgets_its_half_done_search():
    board = Board(6, 6, 4)
    player = MCTSPlayer(HashEvaluator(), n_playout=400)
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 10

    with pytest.raises(SearchStopped):
        player.get_action(board, stop=stop)
    assert not player.mcts.root.expanded and player.progress == 0
    assert player.get_action(board) in board.legal_moves()  # a full search afterwards
    assert player.playouts_run == 10 + 400
