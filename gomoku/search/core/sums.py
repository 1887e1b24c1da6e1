"""NumPy's pairwise summation, compiled: sums that match ``ndarray.sum`` to the bit.

The reference search renormalises priors and sums Gumbel's weights with NumPy; the kernels
must add the same numbers in the same order to get the same bits.
"""

from __future__ import annotations

import numpy as np

from gomoku.search.core.jit import njit


@njit
def _block_sum(a, lo, n):
    """NumPy's pairwise summation of ``a[lo:lo + n]`` for ``n`` up to its block size (128):
    eight running sums, combined pairwise, then the remainder in order."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    m = n - n % 8
    while i < m:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit
def pairwise_sum(a, n):
    """``a[:n].sum()`` to the bit as NumPy computes it (halves rounded down to a multiple of 8,
    blocks of at most 128), with an explicit stack of ranges in place of recursion."""
    parts = np.empty(16, np.float64)  # a stack of finished partial sums
    count = 0
    stack_lo = np.empty(16, np.int64)
    stack_n = np.empty(16, np.int64)
    stack_state = np.zeros(16, np.int64)  # 0: not split yet, 1: left done, 2: both done
    stack_lo[0], stack_n[0], stack_state[0] = 0, n, 0
    top = 1
    while top > 0:
        k = top - 1
        lo, m = stack_lo[k], stack_n[k]
        if m <= 128:
            parts[count] = _block_sum(a, lo, m)
            count += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if stack_state[k] == 0:
            stack_state[k] = 1
            stack_lo[top], stack_n[top], stack_state[top] = lo, half, 0
            top += 1
        elif stack_state[k] == 1:
            stack_state[k] = 2
            stack_lo[top], stack_n[top], stack_state[top] = lo + half, m - half, 0
            top += 1
        else:
            # both halves are done: they are the last two partial sums
            parts[count - 2] = parts[count - 2] + parts[count - 1]
            count -= 1
            top -= 1
    return parts[0]
