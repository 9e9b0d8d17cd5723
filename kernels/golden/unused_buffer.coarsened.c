/* coarsened by clpart from kernels/basics/unused_buffer.cl: kernel 'unused_buffer' */
#include "clpart_coarsen.h"

void unused_buffer(const float * a, float * spare, float * out, int w, int h, const clpart_wg *__wg)
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
        if ((x < w) && (y < h)) {
            out[(y * w) + x] = (a[(y * w) + x] + 1.0f);
        }
        __clpart_next_wi_0: ;
    }
}
