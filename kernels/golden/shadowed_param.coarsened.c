/* coarsened by clpart from kernels/refused/shadowed_param.cl: kernel 'shadowed_param' */
#include "clpart_coarsen.h"

void shadowed_param(float * x, float * y, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        {
            float x[8];
            for (int k = 0; k < 8; k++) {
                x[k] = ((float)(k + i));
            }
            float4 * x4 = (float4 *)x;
            y[i] = (x4[1][1] + x[3]);
        }
        x[i] = 2.0f;
        __clpart_next_wi_0: ;
    }
}
