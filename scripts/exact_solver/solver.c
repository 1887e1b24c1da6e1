/*
 * The exact solver for small k-in-a-row boards (freestyle: k or more in a line wins).
 *
 *     solver WIDTH HEIGHT K MAX_PLIES [MOVES]
 *
 * MOVES are flat indices (row * WIDTH + col), comma separated, Black first; the side
 * to move is the one whose turn it is after them. Prints "VALUE PLIES NODES":
 * VALUE is +1 when the side to move can force a win within PLIES plies (its own and
 * the opponent's moves counted), -1 when the opponent can, 0 when neither can within
 * MAX_PLIES. A 0 is a proven draw only when MAX_PLIES reaches the end of the board.
 *
 * Depth-limited negamax with iterative deepening, bitboards (at most 64 cells) and a
 * transposition table. Three exact shortcuts keep it small: a side that can complete
 * a line wins at once; a side facing two completion cells of the opponent loses; a
 * side facing one must play there. Candidate moves are ordered by the lines they
 * extend or block. solve_openings.py (beside this file) builds and drives it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_BITS 24

typedef struct {
    uint64_t me, opp;
    int8_t value, plies;
} Entry;

static int width, height, k, cells;
static uint64_t lines[512];  /* every window of k cells in a straight line */
static int n_lines;
static uint64_t cell_lines[64][64];
static int n_cell_lines[64];
static uint64_t board_mask;
static long long nodes;
static Entry *table;

/* Empty cells that would complete a line of `me` (k - 1 of its stones, none of `opp`). */
static uint64_t completions(uint64_t me, uint64_t opp) {
    uint64_t out = 0;
    for (int i = 0; i < n_lines; i++) {
        uint64_t w = lines[i];
        if (!(w & opp) && __builtin_popcountll(w & me) == k - 1) out |= w & ~me;
    }
    return out & ~(me | opp);
}

/* Move ordering: lines the move extends count 4^stones, lines it blocks 3^stones. */
static int move_score(uint64_t me, uint64_t opp, int cell) {
    int score = 0;
    for (int j = 0; j < n_cell_lines[cell]; j++) {
        uint64_t w = cell_lines[cell][j];
        int own = __builtin_popcountll(w & me), theirs = __builtin_popcountll(w & opp);
        if (!theirs) score += 1 << (2 * own);
        if (!own) { int p = 1; while (theirs--) p *= 3; score += p; }
    }
    return score;
}

static Entry *slot(uint64_t me, uint64_t opp) {
    uint64_t h = me * 0x9E3779B97F4A7C15ULL ^ (opp + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    return &table[(h ^ (h >> 29)) & ((1ULL << TT_BITS) - 1)];
}

/* +1: the side to move (`me`) wins within `plies`; -1: it loses within them; 0: neither. */
static int negamax(uint64_t me, uint64_t opp, int plies) {
    nodes++;
    uint64_t empty = board_mask & ~(me | opp);
    if (completions(me, opp)) return 1;
    if (plies <= 1 || !empty) return 0;
    Entry *e = slot(me, opp);
    /* A win or loss found at any depth is exact; a 0 holds only for as many plies. */
    if (e->me == me && e->opp == opp && (e->value != 0 || e->plies >= plies)) return e->value;
    int moves[64], scores[64], n = 0, best = -1;
    uint64_t threats = completions(opp, me);
    if (!(threats & (threats - 1))) {  /* at most one cell to block (two: lost, best stays -1) */
        if (threats) {
            moves[n++] = __builtin_ctzll(threats);
        } else {
            for (int c = 0; c < cells; c++) {
                if (!(empty >> c & 1)) continue;
                int s = move_score(me, opp, c), j = n++;
                while (j > 0 && scores[j - 1] < s) { scores[j] = scores[j - 1]; moves[j] = moves[j - 1]; j--; }
                scores[j] = s;
                moves[j] = c;
            }
        }
        for (int i = 0; i < n && best < 1; i++) {
            int v = -negamax(opp, me | (1ULL << moves[i]), plies - 1);
            if (v > best) best = v;
        }
    }
    e->me = me; e->opp = opp; e->value = (int8_t)best; e->plies = (int8_t)plies;
    return best;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: solver WIDTH HEIGHT K MAX_PLIES [MOVES]\n");
        return 2;
    }
    width = atoi(argv[1]); height = atoi(argv[2]); k = atoi(argv[3]);
    int max_plies = atoi(argv[4]);
    cells = width * height;
    if (width < 1 || height < 1 || cells > 64 || k < 2 || (k > width && k > height) || max_plies < 1) {
        fprintf(stderr, "solver: a board of at most 64 cells, 2 <= K <= its longest side, MAX_PLIES >= 1\n");
        return 2;
    }
    board_mask = cells == 64 ? ~0ULL : (1ULL << cells) - 1;
    static const int dr[] = {0, 1, 1, 1}, dc[] = {1, 0, 1, -1};
    for (int r = 0; r < height; r++)
        for (int c = 0; c < width; c++)
            for (int d = 0; d < 4; d++) {
                int er = r + (k - 1) * dr[d], ec = c + (k - 1) * dc[d];
                if (er < 0 || er >= height || ec < 0 || ec >= width) continue;
                uint64_t w = 0;
                for (int i = 0; i < k; i++) w |= 1ULL << ((r + i * dr[d]) * width + c + i * dc[d]);
                lines[n_lines++] = w;
            }
    for (int c = 0; c < cells; c++)
        for (int i = 0; i < n_lines; i++)
            if (lines[i] >> c & 1) cell_lines[c][n_cell_lines[c]++] = lines[i];
    uint64_t stones[2] = {0, 0};
    int played = 0;
    if (argc > 5 && argv[5][0]) {
        for (char *t = strtok(argv[5], ","); t; t = strtok(NULL, ","), played++) {
            int m = atoi(t);
            if (m < 0 || m >= cells || ((stones[0] | stones[1]) >> m & 1)) {
                fprintf(stderr, "solver: move %s is off the board or taken\n", t);
                return 2;
            }
            stones[played % 2] |= 1ULL << m;
        }
    }
    table = calloc(1ULL << TT_BITS, sizeof(Entry));
    if (!table) { fprintf(stderr, "solver: out of memory\n"); return 1; }
    uint64_t me = stones[played % 2], opp = stones[1 - played % 2];
    int value = 0, plies = 1;
    for (; plies <= max_plies; plies += 2)
        if ((value = negamax(me, opp, plies)) != 0) break;
    printf("%d %d %lld\n", value, value ? plies : max_plies, nodes);
    return 0;
}
