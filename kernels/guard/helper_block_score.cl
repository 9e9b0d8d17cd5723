// Alignment scores of one anti-diagonal of blocks, as blocked
// Needleman-Wunsch codes write them: the work-group stages a block's top
// row and left column in local memory (through a subscript macro on the
// local tile), then a helper taking the score matrix and the substitution
// scores together sweeps the block's cells and writes them back.
// Work-group g scores block (d - g, g), which reads only blocks of
// diagonal d - 1. Guarded in two copies under the per-work-group test,
// the helper's guarded clone wrote wrong scores on PoCL 3.1 with no flag
// raised: a kernel with barriers that calls a guarded clone keeps only
// its checked copy.
// @run --global 12 --local 4 --arg score=rand:289:1 --arg subst=rand:289:2 --arg cols=17 --arg penalty=2 --arg d=2
// @run --global 8 --local 4 --arg score=rand:169:3 --arg subst=rand:169:4 --arg cols=13 --arg penalty=1 --arg d=2
// @expect splittable
#define B 4
#define TILE(r, c) tile[(r) * (B + 1) + (c)]

static void sweep(__global int *score, __global const int *subst, int cols, int penalty,
                  int row0, int col0, __local int *tile)
{
    for (int r = 1; r <= B; r++)
        for (int c = 1; c <= B; c++) {
            TILE(r, c) = max(TILE(r - 1, c - 1) + subst[(row0 + r) * cols + col0 + c],
                             max(TILE(r, c - 1), TILE(r - 1, c)) - penalty);
            score[(row0 + r) * cols + col0 + c] = TILE(r, c);
        }
}

__kernel void helper_block_score(__global int *score, __global const int *subst, int cols,
                                 int penalty, int d)
{
    __local int tile[(B + 1) * (B + 1)];
    int g = get_group_id(0), tx = get_local_id(0);
    int row0 = (d - g) * B, col0 = g * B;
    TILE(0, tx + 1) = score[row0 * cols + col0 + tx + 1];
    TILE(tx + 1, 0) = score[(row0 + tx + 1) * cols + col0];
    if (tx == 0)
        TILE(0, 0) = score[row0 * cols + col0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tx == 0)
        sweep(score, subst, cols, penalty, row0, col0, tile);
}
