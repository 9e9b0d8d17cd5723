/* coarsened by clpart from kernels/stencils/clamp_blur.cl: kernel 'clamp_blur' */
#include "clpart_coarsen.h"

void clamp_blur(const float * in, float * out, int n, float lo, float hi, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (i < n) {
            float far_left = in[clpart_max(i - 2, 0)];
            float left = in[(i > 0) ? (i - 1) : 0];
            float mid = in[i];
            float right = in[clpart_min(i + 1, n - 1)];
            float far_right = in[clpart_clamp(i + 2, 0, n - 1)];
            float avg = ((((far_left + left) + mid) + right) + far_right) * 0.2f;
            out[i] = clpart_clamp(avg, lo, hi);
        }
        __clpart_next_wi_0: ;
    }
}
