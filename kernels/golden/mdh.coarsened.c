/* coarsened by clpart from kernels/basics/mdh.cl: kernel 'mdh' */
#include "clpart_coarsen.h"

void mdh(float * ax, float * ay, float * az, float * charge, float * size, float * gx, float * gy, float * gz, float * val, float pre1, float xkappa, int natoms, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int igrid = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        float v = 0.0f;
        float dx;
        float dy;
        float dz;
        float dist;
        for (int jatom = 0; jatom < natoms; jatom++) {
            dx = (gx[igrid] - ax[jatom]);
            dy = (gy[igrid] - ay[jatom]);
            dz = (gz[igrid] - az[jatom]);
            dist = sqrtf(((dx * dx) + (dy * dy)) + (dz * dz));
            v += (((pre1 * (charge[jatom] / dist)) * expf((-xkappa) * (dist - size[jatom]))) / (1.0f + (xkappa * size[jatom])));
        }
        val[igrid] = v;
        __clpart_next_wi_0: ;
    }
}
