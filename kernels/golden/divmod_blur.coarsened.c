/* coarsened by clpart from kernels/linearized/divmod_blur.cl: kernel 'divmod_blur' */
#include "clpart_coarsen.h"

void divmod_blur(const int * in, int * out, int width, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int gid = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int x = gid % width;
        int y = gid / width;
        int at = (y * width) + x;
        if ((x > 0) && (x < (width - 1))) {
            out[at] = ((in[at - 1] + (2 * in[at])) + in[at + 1]);
        } else {
            out[at] = in[at];
        }
        __clpart_next_wi_0: ;
    }
}
