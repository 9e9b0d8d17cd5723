/* coarsened by clpart from kernels/stencils/stencil2d.cl: kernel 'stencil2d' */
#include "clpart_coarsen.h"

void stencil2d(const float * in, float * out, int width, int height, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int x = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int y = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]);
        if ((x < width) && (y < height)) {
            int idx = (y * width) + x;
            if ((((x > 0) && (x < (width - 1))) && (y > 0)) && (y < (height - 1))) {
                out[idx] = (0.2f * ((((in[idx] + in[idx - 1]) + in[idx + 1]) + in[idx - width]) + in[idx + width]));
            } else {
                out[idx] = in[idx];
            }
        }
        __clpart_next_wi_0: ;
    }
}
