/* coarsened by clpart from kernels/stencils/stencil3d_27pt.cl: kernel 'stencil3d_27pt' */
#include "clpart_coarsen.h"

void stencil3d_27pt(const float * in, float * out, int nx, int ny, int nz, const clpart_wg *__wg)
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
            float s = 0.0f;
            for (int dz = -1; dz <= 1; dz++) {
                for (int dy = -1; dy <= 1; dy++) {
                    for (int dx = -1; dx <= 1; dx++) {
                        s += in[((((z + dz) * ny) + (y + dy)) * nx) + (x + dx)];
                    }
                }
            }
            out[(((z * ny) + y) * nx) + x] = (s / 27.0f);
        }
        __clpart_next_wi_0: ;
    }
}
