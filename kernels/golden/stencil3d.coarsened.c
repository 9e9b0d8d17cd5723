/* coarsened by clpart from kernels/stencils/stencil3d.cl: kernel 'stencil3d' */
#include "clpart_coarsen.h"

void stencil3d(const float * in, float * out, int nx, int ny, int nz, const clpart_wg *__wg)
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
        int z = (int)(__wg->group_id[2] * __wg->local_size[2] + __lid2 + __wg->global_offset[2]);
        if ((((((x >= 1) && (x < (nx - 1))) && (y >= 1)) && (y < (ny - 1))) && (z >= 1)) && (z < (nz - 1))) {
            int idx = (((z * ny) + y) * nx) + x;
            out[idx] = ((0.4f * in[idx]) + (0.1f * (((((in[idx - 1] + in[idx + 1]) + in[idx - nx]) + in[idx + nx]) + in[idx - (nx * ny)]) + in[idx + (nx * ny)])));
        }
        __clpart_next_wi_0: ;
    }
}
