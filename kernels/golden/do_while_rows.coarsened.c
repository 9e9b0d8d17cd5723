/* coarsened by clpart from kernels/loops/do_while_rows.cl: kernel 'do_while_rows' */
#include "clpart_coarsen.h"

void do_while_rows(float * out, const float * in, int w, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int j = 0;
        while (1) {
            out[(i * w) + j] = (2.0f * in[(i * w) + j]);
            j++;
            if (!(j < w)) {
                break;
            }
        }
        __clpart_next_wi_0: ;
    }
}
