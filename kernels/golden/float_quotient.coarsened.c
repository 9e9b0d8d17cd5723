/* coarsened by clpart from kernels/loops/float_quotient.cl: kernel 'float_quotient' */
#include "clpart_coarsen.h"

void float_quotient(const float * a, const float * b, float * lo, float * hi, int width, int height, const clpart_wg *__wg)
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
        for (int c = 0; ((float)c) < (((float)width) / ((float)3)); c++) {
            lo[(row * width) + c] = (2.0f * a[(row * width) + c]);
        }
        for (int c = (int)(((float)width) / ((float)2)); c < width; c++) {
            hi[(row * width) + c] = b[(row * width) + c];
        }
        __clpart_next_wi_0: ;
    }
}
