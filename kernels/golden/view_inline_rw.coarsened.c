/* coarsened by clpart from kernels/pointers/view_inline_rw.cl: kernel 'view_inline_rw' */
#include "clpart_coarsen.h"

void view_inline_rw(float * y, const float * x, int n4, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (i < n4) {
            ((float4 *)y)[i] += (((const float4 *)x)[i] * ({ float __s = 2.0f; (float4){__s, __s, __s, __s}; }));
            float2 * y2 = (float2 *)y;
            y2[(2 * i) + 1][1] -= 1.0f;
        }
        __clpart_next_wi_0: ;
    }
}
