/* coarsened by clpart from kernels/syntax/macro_subscript_diagonal.cl: kernel 'macro_subscript_diagonal' */
#include "clpart_coarsen.h"

void macro_subscript_diagonal(int * score, const int * match, int cols, int d, int penalty, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)((__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]) + ((ulong)1));
        int j = (d - i) + 1;
        if (((j < 1) || (j >= cols)) || (i >= cols)) {
            goto __clpart_next_wi_0;
        }
        int up = score[((i - 1) * cols) + j] - penalty;
        int left = score[(i * cols) + (j - 1)] - penalty;
        int diag = score[((i - 1) * cols) + (j - 1)] + match[(i * cols) + j];
        score[(i * cols) + j] = clpart_max(diag, clpart_max(up, left));
        __clpart_next_wi_0: ;
    }
}
