/* coarsened by clpart from kernels/linearized/last_column.cl: kernel 'last_column' */
#include "clpart_coarsen.h"

void last_column(const float * B, float * X, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i1 = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (i1 < n) {
            X[(i1 * n) + (n - 1)] = (X[(i1 * n) + (n - 1)] / B[(i1 * n) + (n - 1)]);
        }
        __clpart_next_wi_0: ;
    }
}
