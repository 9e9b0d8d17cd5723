/* coarsened by clpart from kernels/loops/grid_stride_rows.cl: kernel 'grid_stride_rows' */
#include "clpart_coarsen.h"

void grid_stride_rows(const int * in, int * out, int rows, int cols, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int c = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (c >= cols) {
            goto __clpart_next_wi_0;
        }
        for (int r = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]); r < rows; r += __wg->global_size[1]) {
            out[(r * cols) + c] = ((2 * in[(r * cols) + c]) + r);
        }
        __clpart_next_wi_0: ;
    }
}
