/* coarsened by clpart from kernels/syntax/vec_literal_unroll.cl: kernel 'vec_literal_unroll' */
#include "clpart_coarsen.h"

void vec_literal_unroll(float4 * out, const float * in, int n, const clpart_wg *__wg)
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
        float s = 0.0f;
        for (int j = 0; j < 4; j++) {
            s += in[i + j];
        }
        float t = 0.0f;
        for (int j = 0; j < 2; j++) {
            t += in[i + (2 * j)];
        }
        float u = 0.0f;
        for (int j = 1; j < 3; j++) {
            u += in[i + j];
        }
        out[i] = ((float4){s, t, u, in[i]});
        __clpart_next_wi_0: ;
    }
}
