/* coarsened by clpart from kernels/pointers/pointer_into_buffer.cl: kernel 'pointer_into_buffer' */
#include "clpart_coarsen.h"

void pointer_into_buffer(const float * m, const float * x, float * y, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int r = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        const float * row = m + (r * n);
        float * out = &y[r];
        float s = 0.0f;
        for (int j = 0; j < n; j++) {
            s += (row[j] * x[j]);
        }
        (*out) = s;
        __clpart_next_wi_0: ;
    }
}
