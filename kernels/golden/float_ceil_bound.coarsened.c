/* coarsened by clpart from kernels/loops/float_ceil_bound.cl: kernel 'float_ceil_bound' */
#include "clpart_coarsen.h"

void float_ceil_bound(const float * in, float * sums, int width, int height, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int row = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (row >= height) {
            goto __clpart_next_wi_0;
        }
        for (int t = 0; ((float)t) < ceilf(((float)width) / ((float)16)); t++) {
            float s = 0.0f;
            for (int k = 0; k < 16; k++) {
                int col = (t * 16) + k;
                if (col < width) {
                    s += in[(row * width) + col];
                }
            }
            sums[(t * height) + row] = s;
        }
        __clpart_next_wi_0: ;
    }
}
