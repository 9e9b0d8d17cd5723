/* coarsened by clpart from kernels/pointers/ptr_cast_float4.cl: kernel 'ptr_cast_float4' */
#include "clpart_coarsen.h"

void ptr_cast_float4(const float * x, float * y, float a, int n4, const clpart_wg *__wg)
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
        float4 * y4 = (float4 *)y;
        if (i < n4) {
            y4[i] = ((x4[i] * ({ float __s = a; (float4){__s, __s, __s, __s}; })) + ((float4){1.0f, 2.0f, 3.0f, 4.0f}));
        }
        __clpart_next_wi_0: ;
    }
}
