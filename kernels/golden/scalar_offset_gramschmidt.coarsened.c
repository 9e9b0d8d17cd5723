/* coarsened by clpart from kernels/integers/scalar_offset_gramschmidt.cl: kernel 'scalar_offset_gramschmidt' */
#include "clpart_coarsen.h"

void scalar_offset_gramschmidt(float * a, float * r, float * q, int k, int ni, int nj, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int j = (int)((__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]) + ((ulong)(k + 1)));
        if (j < nj) {
            r[(k * nj) + j] = 0.0f;
            for (int i = 0; i < ni; i++) {
                r[(k * nj) + j] += (q[(i * nj) + k] * a[(i * nj) + j]);
            }
            for (int i = 0; i < ni; i++) {
                a[(i * nj) + j] -= (q[(i * nj) + k] * r[(k * nj) + j]);
            }
        }
        __clpart_next_wi_0: ;
    }
}
