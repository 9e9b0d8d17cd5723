/* coarsened by clpart from kernels/guard/helper_block_score.cl: kernel 'helper_block_score' */
#include "clpart_coarsen.h"

static void sweep(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, int * score, const int * subst, int cols, int penalty, int row0, int col0, int * tile)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    for (int r = 1; r <= 4; r++) {
        for (int c = 1; c <= 4; c++) {
            tile[(r * (4 + 1)) + c] = clpart_max(tile[((r - 1) * (4 + 1)) + (c - 1)] + subst[(((row0 + r) * cols) + col0) + c], clpart_max(tile[(r * (4 + 1)) + (c - 1)], tile[((r - 1) * (4 + 1)) + c]) - penalty);
            score[(((row0 + r) * cols) + col0) + c] = tile[(r * (4 + 1)) + c];
        }
    }
}

void helper_block_score(int * score, const int * subst, int cols, int penalty, int d, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    int tile[25];
    int col0[__n_wi];
    int row0[__n_wi];
    int tx[__n_wi];
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int g = (int)__wg->group_id[0];
        tx[__wi] = (int)__lid0;
        row0[__wi] = (d - g) * 4;
        col0[__wi] = g * 4;
        tile[(0 * (4 + 1)) + (tx[__wi] + 1)] = score[(((row0[__wi] * cols) + col0[__wi]) + tx[__wi]) + 1];
        tile[((tx[__wi] + 1) * (4 + 1)) + 0] = score[(((row0[__wi] + tx[__wi]) + 1) * cols) + col0[__wi]];
        if (tx[__wi] == 0) {
            tile[(0 * (4 + 1)) + 0] = score[(row0[__wi] * cols) + col0[__wi]];
        }
        __clpart_next_wi_0: ;
    }
    /* barrier */
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        if (tx[__wi] == 0) {
            sweep(__wg, __lid0, __lid1, __lid2, score, subst, cols, penalty, row0[__wi], col0[__wi], tile);
        }
        __clpart_next_wi_1: ;
    }
}
