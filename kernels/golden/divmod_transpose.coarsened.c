/* coarsened by clpart from kernels/linearized/divmod_transpose.cl: kernel 'divmod_transpose' */
#include "clpart_coarsen.h"

void divmod_transpose(const int * in, int * out, int width, int height, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int gid = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int i = gid / width;
        int j = gid % width;
        if (i < height) {
            out[(j * height) + i] = in[gid];
        }
        __clpart_next_wi_0: ;
    }
}
