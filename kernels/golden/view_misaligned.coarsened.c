/* coarsened by clpart from kernels/pointers/view_misaligned.cl: kernel 'view_misaligned' */
#include "clpart_coarsen.h"

void view_misaligned(float * y, const float * x, int n4, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        const float4 * x4 = (const float4 *)x;
        if (i < n4) {
            float s = (i > 0) ? x[(4 * i) - 1] : 0.0f;
            y[i] = ((x4[i][0] + x4[i][3]) + s);
        }
        __clpart_next_wi_0: ;
    }
}
