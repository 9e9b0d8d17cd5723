/* coarsened by clpart from kernels/work_groups/group_stride.cl: kernel 'group_stride' */
#include "clpart_coarsen.h"

void group_stride(float * out, const float * in, int rows, int w, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int x = (int)__lid0;
        for (int y = (int)__wg->group_id[0]; y < rows; y += __wg->num_groups[0]) {
            out[(y * w) + x] = ((2.0f * in[(y * w) + x]) + 1.0f);
        }
        __clpart_next_wi_0: ;
    }
}
