/* coarsened by clpart from kernels/linear_algebra/mm2_accumulate.cl: kernel 'mm2_accumulate' */
#include "clpart_coarsen.h"

void mm2_accumulate(float * tmp, float * C, float * D, int ni, int nj, int nl, float beta, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int j = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int i = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]);
        if ((i < ni) && (j < nl)) {
            D[(i * nl) + j] *= beta;
            int k;
            for (k = 0; k < nj; k++) {
                D[(i * nl) + j] += (tmp[(i * nj) + k] * C[(k * nl) + j]);
            }
        }
        __clpart_next_wi_0: ;
    }
}
