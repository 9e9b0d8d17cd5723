/* coarsened by clpart from kernels/linear_algebra/gemm_outer_counter.cl: kernel 'gemm_outer_counter' */
#include "clpart_coarsen.h"

void gemm_outer_counter(float * a, float * b, float * c, float alpha, float beta, int ni, int nj, int nk, const clpart_wg *__wg)
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
        if ((i < ni) && (j < nj)) {
            c[(i * nj) + j] *= beta;
            int k;
            for (k = 0; k < nk; k++) {
                c[(i * nj) + j] += ((alpha * a[(i * nk) + k]) * b[(k * nj) + j]);
            }
        }
        __clpart_next_wi_0: ;
    }
}
