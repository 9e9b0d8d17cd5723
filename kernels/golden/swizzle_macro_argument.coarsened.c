/* coarsened by clpart from kernels/syntax/swizzle_macro_argument.cl: kernel 'swizzle_macro_argument' */
#include "clpart_coarsen.h"

void swizzle_macro_argument(const float4 * in, float * out, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (i >= n) {
            goto __clpart_next_wi_0;
        }
        float4 v = in[i];
        float2 hi = ({ float4 __v = v; (float2){__v[2], __v[3]}; });
        out[i] = (((v[0] <= ((v[1] <= hi[0]) ? v[1] : hi[0])) ? v[0] : ((v[1] <= hi[0]) ? v[1] : hi[0])) + ((hi[1] >= in[i][3]) ? hi[1] : in[i][3]));
        __clpart_next_wi_0: ;
    }
}
