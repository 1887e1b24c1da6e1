"""The column layout of the core's arrays, and the codes of search states and kinds.

``trees.CoreTrees`` owns the arrays; ``kernels`` and ``boards`` read and write them by these
names. Plain constants: numba reads them as compile-time values.
"""

# node float columns
N_VISITS, N_VALUE, N_WSUM, N_VISITED_P = 0, 1, 2, 3
NODE_FLOATS = 4
# node int columns
N_FIRST, N_NCHILD, N_PROVEN, N_WIN, N_PLIES, N_NLOST, N_GREEDY = 0, 1, 2, 3, 4, 5, 6
NODE_INTS = 7
# edge float columns
E_P, E_N, E_Q = 0, 1, 2
EDGE_FLOATS = 3
# edge int columns
E_MOVE, E_CHILD, E_LOST = 0, 1, 2
EDGE_INTS = 3
# search int columns
S_HLEN, S_CUR, S_WINNER, S_ROOT, S_STATE, S_DONE, S_BUDGET, S_KIND, S_ROW, S_PLEN, S_LEAF, S_QPOS, \
    S_QLEN, S_LEAF_NMOVES, S_PLAYOUTS, S_ROOT_NMOVES, S_HINT, S_INPUTS = range(18)
SEARCH_INTS = 18
# search float columns
P_CPUCT, P_FPU, P_WIN_CHECK, P_SOLVE, P_FORCED_K, P_C_VISIT, P_C_SCALE, P_THREATS = range(8)
SEARCH_FLOATS = 8
# search states
IDLE, RUN, PENDING, READY, NEED_QUEUE = 0, 1, 2, 3, 4
# search kinds
PUCT, GUMBEL = 0, 1
# pool counters
NEXT_NODE, NEXT_EDGE = 0, 1

NO_WINNER = -1
ALL_LEGAL = -1
