/* coarsened by clpart from kernels/stencils/heat3d_plane.cl: kernel 'heat3d_plane' */
#include "clpart_coarsen.h"

void heat3d_plane(const float * in, float * out, int nx, int ny, int nz, int z, const clpart_wg *__wg)
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
        if ((((((x > 0) && (x < (nx - 1))) && (y > 0)) && (y < (ny - 1))) && (z > 0)) && (z < (nz - 1))) {
            int c = (((z * nx) * ny) + (y * nx)) + x;
            out[c] = ((0.4f * in[c]) + (0.1f * (((((in[c - 1] + in[c + 1]) + in[c - nx]) + in[c + nx]) + in[((((z - 1) * nx) * ny) + (y * nx)) + x]) + in[((((z + 1) * nx) * ny) + (y * nx)) + x])));
        }
        __clpart_next_wi_0: ;
    }
}
