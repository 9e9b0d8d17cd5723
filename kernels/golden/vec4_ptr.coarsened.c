/* coarsened by clpart from kernels/basics/vec4_ptr.cl: kernel 'vec4_ptr' */
#include "clpart_coarsen.h"

void vec4_ptr(const float4 * a, const float4 * b, float4 * c, float scale, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        float4 v = (a[i] * ({ float __s = scale; (float4){__s, __s, __s, __s}; })) + ({ float4 __v = b[i]; (float4){__v[3], __v[2], __v[1], __v[0]}; });
        c[i] = v;
        __clpart_next_wi_0: ;
    }
}
