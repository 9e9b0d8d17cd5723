/* coarsened by clpart from kernels/linear_algebra/syr2k.cl: kernel 'syr2k' */
#include "clpart_coarsen.h"

void syr2k(float * a, float * b, float * c, float alpha, float beta, int m, int n, const clpart_wg *__wg)
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
        if ((i < n) && (j < n)) {
            c[(i * n) + j] *= beta;
            int k;
            for (k = 0; k < m; k++) {
                c[(i * n) + j] += (((alpha * a[(i * m) + k]) * b[(j * m) + k]) + ((alpha * b[(i * m) + k]) * a[(j * m) + k]));
            }
        }
        __clpart_next_wi_0: ;
    }
}
