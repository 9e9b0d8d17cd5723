/* coarsened by clpart from kernels/syntax/macro_subscript_stencil.cl: kernel 'macro_subscript_stencil' */
#include "clpart_coarsen.h"

void macro_subscript_stencil(const float * in, float * out, int w, int h, const clpart_wg *__wg)
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
        if ((((x > 0) && (y > 0)) && (x < (w - 1))) && (y < (h - 1))) {
            out[(y * w) + x] = ((0.5f * in[(y * w) + x]) + (0.125f * (((in[((y - 1) * w) + x] + in[((y + 1) * w) + x]) + in[(y * w) + (x - 1)]) + in[(y * w) + (x + 1)])));
        } else {
            out[(y * w) + x] = in[(y * w) + x];
        }
        __clpart_next_wi_0: ;
    }
}
