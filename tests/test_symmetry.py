import itertools

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.game.symmetry import ALL_SYMMETRIES, augment, symmetries


def test_eight_distinct_symmetries_on_a_square_board():
    grid = np.arange(36).reshape(6, 6)
    images = {sym.apply(grid).tobytes() for sym in symmetries(6, 6)}
    assert len(symmetries(6, 6)) == 8 and len(images) == 8


@pytest.mark.parametrize("sym", ALL_SYMMETRIES)
def test_each_symmetry_is_undone_by_its_inverse(sym):
    grid = np.random.default_rng(0).random((3, 5, 5))
    assert np.array_equal(sym.inverse().apply(sym.apply(grid)), grid)


def test_compositions_stay_in_the_group():
    grid = np.arange(25).reshape(5, 5)
    images = {sym.apply(grid).tobytes(): sym for sym in ALL_SYMMETRIES}
    for a, b in itertools.product(ALL_SYMMETRIES, repeat=2):
        assert b.apply(a.apply(grid)).tobytes() in images
    # two mirrors cancel; four quarter turns are the identity
    mirror = ALL_SYMMETRIES[4]
    assert np.array_equal(mirror.apply(mirror.apply(grid)), grid)
    quarter = ALL_SYMMETRIES[1]
    g = grid
    for _ in range(4):
        g = quarter.apply(g)
    assert np.array_equal(g, grid)


def test_non_square_boards_keep_four_symmetries():
    syms = symmetries(7, 5)
    assert len(syms) == 4
    grid = np.arange(35).reshape(5, 7)
    assert all(sym.apply(grid).shape == (5, 7) for sym in syms)
    assert len({sym.apply(grid).tobytes() for sym in syms}) == 4


@pytest.mark.parametrize("sym", ALL_SYMMETRIES)
def test_planes_and_pi_are_permuted_alike(sym):
    board = Board(6, 6, 4)
    for move in (3, 14, 20, 33):
        board.do_move(move)
    planes = board.planes()
    pi = np.zeros(36)
    pi[7] = 1.0  # a move the net would like
    perm = sym.move_permutation(6, 6)
    moved_planes = sym.apply(planes)
    moved_pi = sym.apply(pi.reshape(6, 6)).reshape(-1)
    assert moved_pi[perm[7]] == 1.0
    # the board with every stone sent through the permutation has exactly the moved planes
    other = Board(6, 6, 4)
    for move in board.history:
        other.do_move(int(perm[move]))
    assert np.array_equal(other.planes(), moved_planes)


def test_augment_multiplies_by_eight_and_keeps_outcomes():
    rng = np.random.default_rng(1)
    planes = (rng.random((3, 4, 6, 6)) > 0.5).astype(np.float32)
    pis = rng.dirichlet(np.ones(36), 3).astype(np.float32)
    zs = np.array([1, -1, 0], dtype=np.float32)
    p, q, z = augment(planes, pis, zs)
    assert p.shape == (24, 4, 6, 6) and q.shape == (24, 36) and z.shape == (24,)
    assert np.array_equal(p[:3], planes) and np.array_equal(q[:3], pis)
    assert np.allclose(q.sum(axis=1), 1)
    assert list(z) == [1, -1, 0] * 8
