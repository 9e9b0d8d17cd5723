/* Needleman-Wunsch alignment scores by blocks of BS x BS cells, as the
   heterogeneous suites write it: a work-group scores one block, its BS
   work-items sweeping the block's anti-diagonals in local memory, the
   blocks of one anti-diagonal of blocks per launch. The score matrix is
   cols x cols (row and column 0 the gap penalties); the local tile and
   the reference block are reached through subscript macros. */
#define SCORE(r, c) tile[(r) * (BS + 1) + (c)]
#define REF(r, c) ref_l[(r) * BS + (c)]

static void score_block(__global int *score, __global const int *reference, int cols,
                        int penalty, int by, int bx, __local int *tile, __local int *ref_l)
{
    int tx = get_local_id(0);
    int row0 = by * BS, col0 = bx * BS;
    /* the row above the block, the column left of it, the corner */
    SCORE(0, tx + 1) = score[row0 * cols + col0 + tx + 1];
    SCORE(tx + 1, 0) = score[(row0 + tx + 1) * cols + col0];
    if (tx == 0)
        SCORE(0, 0) = score[row0 * cols + col0];
    for (int ty = 0; ty < BS; ty++)
        REF(ty, tx) = reference[(row0 + ty + 1) * cols + col0 + tx + 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the upper-left half of the block's anti-diagonals, then the rest */
    for (int m = 0; m < BS; m++) {
        if (tx <= m) {
            int r = tx + 1, c = m - tx + 1;
            SCORE(r, c) = max(SCORE(r - 1, c - 1) + REF(r - 1, c - 1),
                              max(SCORE(r, c - 1) - penalty, SCORE(r - 1, c) - penalty));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int k = 1; k < BS; k++) {
        if (tx < BS - k) {
            int r = tx + k + 1, c = BS - tx;
            SCORE(r, c) = max(SCORE(r - 1, c - 1) + REF(r - 1, c - 1),
                              max(SCORE(r, c - 1) - penalty, SCORE(r - 1, c) - penalty));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int ty = 0; ty < BS; ty++)
        score[(row0 + ty + 1) * cols + col0 + tx + 1] = SCORE(ty + 1, tx + 1);
}

/* Anti-diagonal i (1 .. nb) of blocks in the upper-left triangle: block
   (i - 1 - g, g) for work-group g. */
__kernel void nw_upper(__global int *score, __global const int *reference, int cols,
                       int penalty, int i)
{
    __local int tile[(BS + 1) * (BS + 1)];
    __local int ref_l[BS * BS];
    int g = get_group_id(0);
    score_block(score, reference, cols, penalty, i - 1 - g, g, tile, ref_l);
}

/* Anti-diagonal i (nb - 1 .. 1) of blocks in the lower-right triangle:
   block (nb - 1 - g, nb - i + g) for work-group g. */
__kernel void nw_lower(__global int *score, __global const int *reference, int cols,
                       int penalty, int i, int nb)
{
    __local int tile[(BS + 1) * (BS + 1)];
    __local int ref_l[BS * BS];
    int g = get_group_id(0);
    score_block(score, reference, cols, penalty, nb - 1 - g, nb - i + g, tile, ref_l);
}
