/* coarsened by clpart from kernels/stencils/conv3x3_interior.cl: kernel 'conv3x3_interior' */
#include "clpart_coarsen.h"

void conv3x3_interior(const float * in, float * out, float * f, int w, int h, const clpart_wg *__wg)
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
        if ((((x >= 1) && (x < (w - 1))) && (y >= 1)) && (y < (h - 1))) {
            float s = 0.0f;
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) {
                    s += (f[((dy + 1) * 3) + (dx + 1)] * in[((y + dy) * w) + (x + dx)]);
                }
            }
            out[(y * w) + x] = s;
        }
        __clpart_next_wi_0: ;
    }
}
