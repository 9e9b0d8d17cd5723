/* coarsened by clpart from kernels/loops/saxpy_offset.cl: kernel 'saxpy_offset' */
#include "clpart_coarsen.h"

void saxpy_offset(const float * x, float * y, float a, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        for (int i = (int)((__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]) - __wg->global_offset[0]); i < n; i += __wg->global_size[0]) {
            y[i] = ((a * x[i]) + y[i]);
        }
        __clpart_next_wi_0: ;
    }
}
