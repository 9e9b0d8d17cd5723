/* coarsened by clpart from kernels/stencils/stencil7_interior.cl: kernel 'stencil7_interior' */
#include "clpart_coarsen.h"

void stencil7_interior(const float * in, float * out, int nx, int ny, int nz, float c0, float c1, const clpart_wg *__wg)
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
        if ((((((x > 0) && (x < (nx - 1))) && (y > 0)) && (y < (ny - 1))) && (z > 0)) && (z < (nz - 1))) {
            out[(((z * ny) + y) * nx) + x] = ((c0 * in[(((z * ny) + y) * nx) + x]) + (c1 * (((((in[((((z * ny) + y) * nx) + x) - 1] + in[((((z * ny) + y) * nx) + x) + 1]) + in[((((z * ny) + y) - 1) * nx) + x]) + in[((((z * ny) + y) + 1) * nx) + x]) + in[((((z - 1) * ny) + y) * nx) + x]) + in[((((z + 1) * ny) + y) * nx) + x])));
        }
        __clpart_next_wi_0: ;
    }
}
